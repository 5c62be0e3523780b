// The pre-push gate's decision as a table of cases, over a fake view of the repository: which
// pushed ref is checked, as what (a run, or commits carrying the marker), against which base,
// with or without the verify commands — and a repository that cannot answer stops the push.
#include <gtest/gtest.h>

#include <map>

#include "hook/pre_push.h"

namespace cocode::hook {
namespace {

const std::string kZeros(40, '0');
const std::string kLocal(40, 'a'), kRemote(40, 'b'), kBase(40, 'c');

// A repository as the decision sees it.
struct FakeView : PushView {
    std::map<std::string, run::RunRecord> runs;  // by branch
    Result<std::string> marked = std::string();  // what marked_commit answers
    Result<std::string> parent = kBase;          // what new_branch_base answers
    std::vector<std::string> asked;              // marked_commit's remote_sha, remote

    std::optional<run::RunRecord> run_of(const std::string& branch) override {
        auto it = runs.find(branch);
        return it == runs.end() ? std::nullopt : std::optional(it->second);
    }
    Result<std::string> marked_commit(const std::string&, const std::string& remote_sha,
                                      const std::string& remote, const std::string&) override {
        asked = {remote_sha, remote};
        return marked;
    }
    Result<std::string> new_branch_base(const std::string&, const std::string&) override {
        return parent;
    }
};

run::RunRecord run_record(run::RunStatus status) {
    run::RunRecord r;
    r.run_id = "20261125-101010000-42-1";
    r.issue = 7;
    r.agent = "fixer";
    r.status = status;
    r.base_commit = kBase;
    return r;
}

struct Case {
    const char* name;
    PushedRef ref;
    std::function<void(FakeView&)> repo;
    bool check;
    std::vector<std::string> args;  // cocode-check's, when checked
    std::string why;
};

TEST(PrePush, WhatTheGateDoesWithEachPushedRef) {
    const GateRules rules{"cocode/", "cocode ready for check"};
    const Case cases[] = {
        {"a branch deleted",
         {"refs/heads/x", kZeros, "refs/heads/x", kRemote},
         nullptr,
         false,
         {},
         ""},
        {"a tag", {"refs/tags/v1", kLocal, "refs/tags/v1", kZeros}, nullptr, false, {}, ""},
        {"an unrelated branch: no marked commit in what it sends",
         {"refs/heads/feature", kLocal, "refs/heads/feature", kRemote},
         nullptr,
         false,
         {},
         ""},
        {"an ended run's branch: judged as the run",
         {"refs/heads/cocode/7-fixer", kLocal, "refs/heads/cocode/7-fixer", kZeros},
         [](FakeView& v) { v.runs["cocode/7-fixer"] = run_record(run::RunStatus::completed); },
         true,
         {"--run", "20261125-101010000-42-1"},
         "run 20261125-101010000-42-1"},
        {"a run still going: against its base, with its issue and agent",
         {"refs/heads/cocode/7-fixer", kLocal, "refs/heads/cocode/7-fixer", kZeros},
         [](FakeView& v) { v.runs["cocode/7-fixer"] = run_record(run::RunStatus::running); },
         true,
         {"--worktree", ".", "--base", kBase, "--head", kLocal, "--branch", "cocode/7-fixer",
          "--issue", "7", "--agent", "fixer"},
         "run 20261125-101010000-42-1 (still running)"},
        {"a run's branch pushed from elsewhere in the prefix's name only: marker rules",
         {"refs/heads/cocode/9-x", kLocal, "refs/heads/cocode/9-x", kRemote},
         nullptr,
         false,
         {},
         ""},
        {"marked commits on a known branch: against what the remote has",
         {"refs/heads/feature", kLocal, "refs/heads/feature", kRemote},
         [](FakeView& v) { v.marked = kLocal; },
         true,
         {"--worktree", ".", "--base", kRemote, "--head", kLocal, "--branch", "feature"},
         "the ready marker in the pushed commits"},
        {"marked commits on a new branch: from the parent of its oldest new commit",
         {"refs/heads/feature", kLocal, "refs/heads/feature", kZeros},
         [](FakeView& v) { v.marked = kLocal; },
         true,
         {"--worktree", ".", "--base", kBase, "--head", kLocal, "--branch", "feature"},
         "the ready marker in the pushed commits"},
        {"a new branch whose oldest new commit is a root: nothing to compare with",
         {"refs/heads/feature", kLocal, "refs/heads/feature", kZeros},
         [](FakeView& v) {
             v.marked = kLocal;
             v.parent = std::string();
         },
         false,
         {},
         ""},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        FakeView view;
        if (c.repo) c.repo(view);
        auto d = decide_push(c.ref, "origin", rules, view);
        ASSERT_TRUE(d) << d.error().message;
        EXPECT_EQ(d->check, c.check);
        EXPECT_EQ(d->check_args, c.args);
        EXPECT_EQ(d->why, c.why);
    }
}

TEST(PrePush, ANewBranchIsComparedWithEveryBranchOfTheRemote) {
    FakeView view;
    ASSERT_TRUE(decide_push({"refs/heads/f", kLocal, "refs/heads/f", kZeros}, "upstream",
                            {"cocode/", "m"}, view));
    EXPECT_EQ(view.asked, (std::vector<std::string>{kZeros, "upstream"}));
}

// A git that fails is not "not cocode's work": the decision is an error, and the hook stops
// the push with it (before, a failing git read as an empty answer and the push went through
// unchecked).
TEST(PrePush, ARepositoryThatCannotAnswerIsAnErrorNotAPass) {
    const GateRules rules{"cocode/", "m"};
    const PushedRef feature{"refs/heads/feature", kLocal, "refs/heads/feature", kZeros};
    const Error broken = Error::general("git rev-list: fatal: bad object");
    {
        FakeView view;
        view.marked = broken;
        EXPECT_FALSE(decide_push(feature, "origin", rules, view));
    }
    {
        FakeView view;
        view.marked = kLocal;
        view.parent = broken;
        EXPECT_FALSE(decide_push(feature, "origin", rules, view));
    }
}

TEST(PrePush, GitsLinesAreReadAsGitWritesThem) {
    auto ref = parse_pushed_ref("refs/heads/main " + kLocal + " refs/heads/main " + kRemote);
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->local_ref, "refs/heads/main");
    EXPECT_EQ(ref->remote_sha, kRemote);
    EXPECT_FALSE(parse_pushed_ref("refs/heads/main " + kLocal));
    EXPECT_FALSE(parse_pushed_ref(""));
}

}  // namespace
}  // namespace cocode::hook
