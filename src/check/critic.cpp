#include "check/critic.h"

#include <cstdlib>

#include "check/judge.h"
#include "git/repository.h"

namespace cocode::check {

namespace {

std::string globs(const std::vector<std::string>& list) {
    std::string out;
    for (const auto& g : list) out += (out.empty() ? "" : ", ") + g;
    return out;
}

}  // namespace

Result<Critique> critique_worktree(const CritiqueInput& input) {
    auto repo = git::Repository::open(input.worktree);
    if (!repo) return std::move(repo).error();
    auto tree = repo->worktree_tree();
    if (!tree) return std::move(tree).error();
    auto head = repo->commit_unreferenced(
        *tree, "HEAD", "The worktree as it stands, for the critic\n\n" + input.marker + "\n");
    if (!head) return std::move(head).error();

    JudgeInput judge_input;
    judge_input.worktree = input.worktree;
    judge_input.base = input.base;
    judge_input.head = *head;
    judge_input.marker = input.marker;
    judge_input.rules = input.rules;
    judge_input.report_dir = input.report_dir;
    // A clean tree of it, in the agent's own /tmp: the critic runs inside the agent's own
    // sandbox, which confines its commands (and where the repository's folders are read-only).
    judge_input.tree = input.tree;
    const char* tmp = std::getenv("TMPDIR");
    judge_input.tree.trees =
        std::filesystem::path(tmp && *tmp == '/' ? tmp : "/tmp") / "cocode-critic";
    judge_input.runner = unconfined_runner();
    auto verdict = judge(judge_input);
    if (!verdict) return std::move(verdict).error();

    Critique out;
    out.pass = verdict->pass;
    for (const auto& file : verdict->files) out.touched_files.push_back(file.path);
    for (const auto& item : verdict->checks) {
        if (item.outcome != Outcome::fail) continue;
        out.reasons.push_back(item.name + ": " + item.reason);
        std::string fix = "Address: " + item.name + ": " + item.reason;
        if (item.id == "scope") {
            fix += ". Delete or revert those files";
            if (!input.rules.allowed_paths.empty())
                fix += "; only these paths may change: " + globs(input.rules.allowed_paths);
            if (!input.rules.read_only_paths.empty())
                fix += "; these must not change: " + globs(input.rules.read_only_paths);
        } else if (item.id == "verify") {
            fix += ". Its output ended with:\n" + item.output_tail;
        } else if (item.id == "base") {
            fix += ". Work on top of the base commit; do not rewrite history";
        }
        out.suggested_fixes.push_back(std::move(fix));
    }
    return out;
}

}  // namespace cocode::check
