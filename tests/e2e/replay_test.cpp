// The replay set (docs/report.md): `replay mine` walks a history the test made, whose answers
// are known — a change whose test fails before it and passes after, one that closes an issue,
// a refactor whose tests passed already, documents only, tests only, a rename, a merge, a
// change that breaks its own tests, a binary file — and turns exactly the first two into
// tasks, with their hidden tests as a patch and a flaky command left out; the rest are skipped
// each with its reason. `replay list` reads them back.

#include "dispatch_fixture.h"

namespace cocode::test {

class Replay : public DispatchRun {
  protected:
    // A commit of everything in the worktree after `shell`, with `message`; its id.
    std::string commit(const std::string& shell, const std::string& message) {
        sh_ok(shell + " && git add -A && git commit -q -m " + quote(message), repo_);
        std::string id = sh_ok("git rev-parse HEAD", repo_);
        id.pop_back();
        return id;
    }

    void make_history() {
        // The flaky command's count is in the tree it runs in (a command writes nothing else: it
        // runs in the sandbox), which each side's repeats share.
        const std::string counter = ".flaky-counter";
        configure({{"agents", {{"none", {{"command", "true"}}}}},
                   {"check",
                    {{"verify",
                      {{{"name", "unit"}, {"run", "sh tests/run.sh"}},
                       {{"name", "present"}, {"run", "test -f src/calc.sh"}},
                       // Passes and fails by turns: a test that flips is no evidence.
                       {{"name", "flaky"},
                        {"run", "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " +
                                    counter + "; test $((n % 2)) = 0"}}}}}}});
        sh_ok(
            "mkdir -p src tests notes && echo 'calc() { :; }' > src/calc.sh && echo a > "
            "notes/a.txt && printf 'for t in tests/test_*.sh; do sh \"$t\" || exit 1; done\\n' "
            "> tests/run.sh && git add -A && git commit -q -m 'the calculator, empty'",
            repo_);
        add_ = commit(
            "printf 'add() { echo $(($1 + $2)); }\\n' > src/calc.sh && printf '. src/calc.sh\\n"
            "test \"$(add 2 3)\" = 5\\n' > tests/test_add.sh",
            "Add numbers");
        commit("echo 'More words.' >> README.md", "Say more in the README");
        sub_ = commit(
            "printf 'sub() { echo $(($1 - $2)); }\\n' >> src/calc.sh && printf '. src/calc.sh\\n"
            "test \"$(sub 5 3)\" = 2\\n' > tests/test_sub.sh",
            "Subtract numbers\n\nFixes #3.");
        refactor_ = commit("echo '# sums' >> src/calc.sh && echo '# checked' >> tests/test_add.sh",
                           "Comment the sums");
        commit("printf '. src/calc.sh\\ntest \"$(add 1 1)\" = 2\\n' > tests/test_more.sh",
               "Test more sums");
        commit("git mv notes/a.txt notes/b.txt", "Rename the notes");
        sh_ok(
            "git checkout -q -b side && echo x > src/side.sh && git add -A && git commit -q -m "
            "side && git checkout -q main && git merge -q --no-ff -m \"Merge branch 'side'\" side",
            repo_);
        commit(
            "printf 'add() { echo 0; }\\nmul() { echo $(($1 * $2)); }\\n' > src/calc.sh && printf "
            "'. src/calc.sh\\ntest \"$(mul 2 3)\" = 6\\n' > tests/test_mul.sh",
            "Multiply, and break the sums");
        commit("printf '\\211PNG\\r\\n\\032\\n\\0\\0' > logo.png", "A logo");
    }

    std::string add_, sub_, refactor_;
};

TEST_F(Replay, MineTurnsExactlyTheChangesWithTestsThatFailBeforeAndPassAfterIntoTasks) {
    make_history();
    Shell mined = dispatch("replay mine --json");
    ASSERT_EQ(mined.exit_code, 0) << mined.err;
    const json out = json::parse(mined.out);
    ASSERT_EQ(out["tasks"].size(), 2u) << out.dump(2);

    // Newest first: the subtraction, then the addition.
    const json& sub = out["tasks"][0];
    EXPECT_EQ(sub["id"], sub_.substr(0, 12));
    EXPECT_EQ(sub["commit"], sub_);
    EXPECT_EQ(sub["hidden_tests"], json::array({"tests/test_sub.sh"}));
    EXPECT_EQ(sub["fail_to_pass"], json::array({"unit"}));
    EXPECT_EQ(sub["pass_to_pass"], json::array({"present"}));
    EXPECT_EQ(sub["flaky"], json::array({"flaky"}));
    EXPECT_EQ(sub["verify"].size(), 2u) << "the flaky command is not one the task runs";
    // It closes issue 3: the agent is told the issue, not the commit message.
    EXPECT_EQ(sub["statement"]["title"], "Issue 3");
    EXPECT_EQ(sub["statement"]["source"], "issue #3");
    EXPECT_EQ(sub["kind"], "fix/S");
    const json& add = out["tasks"][1];
    EXPECT_EQ(add["commit"], add_);
    EXPECT_EQ(add["statement"]["title"], "Add numbers");
    EXPECT_EQ(add["statement"]["source"], "commit message");
    // The base has no src/calc.sh? It has the empty one: `present` passes at both.
    EXPECT_EQ(add["fail_to_pass"], json::array({"unit"}));

    std::map<std::string, std::string> why;
    for (const auto& s : out["skipped"]) why[s["why"]] = s["commit"];
    for (const char* reason :
         {"touches no test", "its tests do not fail at its base", "touches no code", "only renames",
          "a merge", "only binary files", "does not pass its own tests: unit fails at the change"})
        EXPECT_TRUE(why.count(reason)) << reason << "\n" << out["skipped"].dump(2);
    EXPECT_EQ(why["its tests do not fail at its base"], refactor_);
    // Every change tried for real ran three commands: a task's three times at both sides (18
    // runs), a change that is no task only until that was known.
    int tried = static_cast<int>(out["tasks"].size());
    for (const auto& s : out["skipped"])
        if (s["why"] == "its tests do not fail at its base" ||
            s["why"].get<std::string>().rfind("does not pass its own tests", 0) == 0)
            ++tried;
    EXPECT_GE(out["verify_runs"].get<int>(), 2 * 18) << out["verify_runs"];
    EXPECT_LT(out["verify_runs"].get<int>(), tried * 18)
        << "every command ran six times at every change tried";

    // The task's folder: task.json and the hidden tests as a patch of the test files alone,
    // which makes the base fail its unit tests.
    const fs::path folder = repo_ / ".cocode/replay/tasks" / sub_.substr(0, 12);
    EXPECT_EQ(json::parse(read_text(folder / "task.json"))["base"], sub["base"]);
    const std::string patch = read_text(folder / "hidden-tests.patch");
    EXPECT_NE(patch.find("tests/test_sub.sh"), std::string::npos) << patch;
    EXPECT_EQ(patch.find("b/src/calc.sh"), std::string::npos) << patch;
    sh_ok("git worktree add -q --detach " + quote((dir_ / "at-base").string()) + " " +
              sub["base"].get<std::string>(),
          repo_);
    sh_ok("git apply " + quote((folder / "hidden-tests.patch").string()), dir_ / "at-base");
    EXPECT_NE(sh("sh tests/run.sh", dir_ / "at-base").exit_code, 0);

    // list reads them back; mining again finds nothing new.
    Shell listed = dispatch("replay list");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find(sub_.substr(0, 12) + "  fix/S         1     1  Issue 3"),
              std::string::npos)
        << listed.out;
    Shell again = dispatch("replay mine --json");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(json::parse(again.out)["tasks"].empty());

    // A task.json someone broke is named, exit 2.
    const std::string task_json = read_text(folder / "task.json");
    write_text(folder / "task.json", R"({"id": "zz"})");
    Shell broken = dispatch("replay list");
    EXPECT_EQ(broken.exit_code, 2);
    EXPECT_NE(broken.err.find("task.json: field 'id': expected a commit id (hex)"),
              std::string::npos)
        << broken.err;
    write_text(folder / "task.json", task_json);  // as mined: the suite's schema check reads it
}

// Replaying the two tasks with agents whose answers are known: one applies the true change to
// both (from answers the test keeps outside the repository), one changes nothing, one solves
// the addition and gets the subtraction wrong (a hidden test it never saw fails it), and one
// looks for the answer in git and on disk and finds nothing. The scorecard of replays says
// exactly that.
TEST_F(Replay, RunRacesAgentsOnTasksWhoseAnswersTheyCannotSee) {
    make_history();
    ASSERT_EQ(dispatch("replay mine").exit_code, 0);
    const fs::path answers = dir_ / "answers";
    fs::create_directories(answers);
    sh_ok("git show " + sub_ + ":src/calc.sh > " + quote((answers / "sub.sh").string()) +
              " && git show " + add_ + ":src/calc.sh > " + quote((answers / "add.sh").string()),
          repo_);
    // The agents' own data reaches them through a variable their configuration names (the
    // sandbox shows what the environment names); the snoop writes what it finds in its run
    // folder, the one place of the host it may write.
    const json answers_env = {{"ANSWERS", answers.string()}};
    // Which task: the subtraction's statement is issue 3's ("Do thing 3.").
    const std::string which =
        "if grep -q 'thing 3' \"$COCODE_ISSUE_BODY_FILE\"; then t=sub; else t=add; fi; ";
    const std::string commit =
        " && git add -A && git commit -q -m answer -m \"$COCODE_READY_MARKER\"";
    const std::string snoop =
        which +
        "out=\"$JRUN_RUN_FOLDER/found-$t\"; "
        "git rev-list --all > $out.commits; "
        "git cat-file --batch-all-objects --batch-check > $out.objects; "
        "git fsck --lost-found > $out.fsck 2>&1; "
        "git stash list > $out.stash; git reflog --all > $out.reflog; "
        "cat " +
        quote((repo_ / "src/calc.sh").string()) +
        " > $out.main 2>&1; "
        "ls -A " +
        quote((repo_ / ".git/objects").string()) + " " + quote((repo_ / ".cocode/runs").string()) +
        " > $out.folders 2>&1; "
        // The hidden test's line, put together here so that no configuration holds it whole.
        "p='sub 5'; grep -rlF \"$p 3\" " +
        quote(repo_.string()) +
        " > $out.grep 2>/dev/null; "
        // And its code looks again when the verify commands run it.
        "cp \"$ANSWERS/snoop.sh\" src/calc.sh" +
        commit + "; true";
    // The verify commands show it its own task's hidden tests (they run it with them); the
    // answer, in the main repository, stays out of its sight.
    write_text(answers / "snoop.sh", "echo \"verify saw: $(cat " +
                                         quote((repo_ / "src/calc.sh").string()) + " " +
                                         quote((repo_ / ".git/HEAD").string()) +
                                         " 2>/dev/null | head -c 300)|\"\ncalc() { :; }\n");
    configure(
        {{"agents",
          {{"truth",
            {{"command", "sh"},
             {"env", answers_env},
             {"args", {"-c", which + "cp \"$ANSWERS/$t.sh\" src/calc.sh" + commit}}}},
           {"idle", {{"command", "sh"}, {"args", {"-c", "true"}}}},
           {"half",
            {{"command", "sh"},
             {"env", answers_env},
             {"args",
              {"-c", which +
                         "if [ $t = add ]; then cp \"$ANSWERS/add.sh\" src/calc.sh; else echo "
                         "'sub() { echo 0; }' >> src/calc.sh; fi" +
                         commit}}}},
           {"snoop", {{"command", "sh"}, {"env", answers_env}, {"args", {"-c", snoop}}}}}},
         {"check", {{"verify", {{{"name", "unit"}, {"run", "sh tests/run.sh"}}}}}}});

    Shell ran = dispatch("replay run --json");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    ASSERT_TRUE(json::accept(ran.out)) << ran.out << ran.err;
    std::map<std::string, std::string> verdict;  // "agent task" -> PASS/FAIL
    for (const auto& r : json::parse(ran.out))
        verdict[r["agent"].get<std::string>() + " " +
                (r["task"] == sub_.substr(0, 12) ? "sub" : "add")] =
            r["verdict"].is_string() ? r["verdict"].get<std::string>() : "none";
    EXPECT_EQ(verdict, (std::map<std::string, std::string>{{"truth add", "PASS"},
                                                           {"truth sub", "PASS"},
                                                           {"idle add", "FAIL"},
                                                           {"idle sub", "FAIL"},
                                                           {"half add", "PASS"},
                                                           {"half sub", "FAIL"},
                                                           {"snoop add", "FAIL"},
                                                           {"snoop sub", "FAIL"}}))
        << ran.err;

    // What the snoop saw of the subtraction's answer: nothing after its base, anywhere.
    fs::path found;
    for (const auto& entry : fs::recursive_directory_iterator(repo_ / ".git/cocode/replay"))
        if (entry.path().filename() == "found-sub.commits") found = entry.path().parent_path();
    ASSERT_FALSE(found.empty()) << "the snoop wrote what it found in its run folder";
    // The base's history: the commits up to the base, none after (the subtraction is fourth).
    const std::string commits = read_text(found / "found-sub.commits");
    EXPECT_EQ(commits.find(sub_), std::string::npos) << commits;
    EXPECT_NE(commits.find(add_), std::string::npos) << commits;
    EXPECT_EQ(read_text(found / "found-sub.objects").find(sub_), std::string::npos);
    EXPECT_EQ(read_text(found / "found-sub.fsck").find("dangling commit"), std::string::npos);
    EXPECT_EQ(read_text(found / "found-sub.stash"), "");
    EXPECT_EQ(read_text(found / "found-sub.reflog").find(sub_.substr(0, 7)), std::string::npos);
    EXPECT_NE(read_text(found / "found-sub.main").find("No such file"), std::string::npos)
        << "the main worktree is out of sight: " << read_text(found / "found-sub.main");
    EXPECT_EQ(read_text(found / "found-sub.folders").find("pack"), std::string::npos)
        << read_text(found / "found-sub.folders");
    EXPECT_EQ(read_text(found / "found-sub.grep"), "")
        << "no file it can read holds the hidden test";
    // Nor when the verify commands ran its code: they see what the agent saw.
    int looked = 0;
    for (const auto& entry : fs::recursive_directory_iterator(repo_ / ".git/cocode/replay")) {
        if (entry.path().filename().string().rfind("verify-", 0) != 0) continue;
        for (const auto& line : read_lines(entry.path())) {
            if (line.rfind("verify saw: ", 0) != 0) continue;
            ++looked;
            EXPECT_EQ(line, "verify saw: |") << entry.path();
        }
    }
    EXPECT_GT(looked, 0) << "the snoop's code ran in the verify commands";

    // The replays' scorecard: each agent's runs and PASS rate with its interval; live runs
    // apart (there are none).
    Shell report = dispatch("report --source replay --by agent --json");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    ASSERT_TRUE(json::accept(report.out)) << report.out << report.err;
    const json rows = json::parse(report.out)["rows"];
    std::map<std::string, std::pair<int, int>> passed;
    for (const auto& row : rows) passed[row["key"]] = {row["passed"], row["judged"]};
    EXPECT_EQ(passed,
              (std::map<std::string, std::pair<int, int>>{
                  {"half", {1, 2}}, {"idle", {0, 2}}, {"snoop", {0, 2}}, {"truth", {2, 2}}}));
    EXPECT_NEAR(rows[0]["pass_rate_interval"][0].get<double>(), 0.0945, 5e-4);  // half: 1 of 2
    Shell live = dispatch("report --json");
    ASSERT_TRUE(json::accept(live.out)) << live.out << live.err;
    EXPECT_TRUE(json::parse(live.out)["rows"].empty()) << "no live run";
    // The same as a picture: truth's bar is whole, half's is half, idle's and snoop's none.
    Shell drawn =
        dispatch("report --source replay --svg " + quote((dir_ / "replays.svg").string()));
    ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
    const std::string svg = read_text(dir_ / "replays.svg");
    EXPECT_NE(svg.find("width=\"300.0\" height=\"14\"><title>truth: PASS 100% of 2 judged"),
              std::string::npos)
        << svg;
    EXPECT_NE(svg.find("width=\"150.0\" height=\"14\"><title>half: PASS 50% of 2 judged"),
              std::string::npos)
        << svg;
    Shell nowhere = dispatch("report --svg " + quote((dir_ / "no/such/folder/x.svg").string()));
    EXPECT_EQ(nowhere.exit_code, 1);
    EXPECT_NE(nowhere.err.find("--svg "), std::string::npos) << nowhere.err;

    // Each replay's seal names its task.
    const fs::path common = repo_ / ".git/cocode/replay/runs";
    int sealed = 0;
    for (const auto& space : fs::directory_iterator(common))
        for (const auto& seal : fs::directory_iterator(space.path() / "repo/.cocode/seals"))
            if (seal.path().extension() == ".json")  // beside it: its processes, its stop
                sealed += json::parse(read_text(seal.path())).contains("replay_task");
    EXPECT_EQ(sealed, 8);
}

// The README's own pattern: an agent whose program is a script of the repository's that git
// does not track. `replay run` finds it as `run` does (before, "program … not found" in the
// replay's repository, though `doctor` said ok); the task's subject is its issue's body when
// the commit says nothing more (before, an empty issue.md); and `logs` and `status` open the
// run id it prints (before, "no run matches").
TEST_F(Replay, AnUntrackedAgentScriptRunsAndItsRunOpensWithLogsAndStatus) {
    make_history();
    ASSERT_EQ(dispatch("replay mine").exit_code, 0);
    std::string task;
    Shell listed = dispatch("replay list --json");
    for (const auto& t : json::parse(listed.out))
        if (t["statement"]["title"] == "Add numbers") task = t["id"];
    ASSERT_FALSE(task.empty()) << listed.out;
    configure({{"agents", {{"fix", {{"command", ".cocode/fix.sh"}}}}}});
    write_text(repo_ / ".cocode/fix.sh",
               "#!/bin/sh\necho \"issue: $(cat \"$COCODE_ISSUE_BODY_FILE\")\"\n"
               "printf 'add() { echo $(($1 + $2)); }\\n' > src/calc.sh\n"
               "git add -A && git commit -q -m answer -m \"$COCODE_READY_MARKER\"\n");
    fs::permissions(repo_ / ".cocode/fix.sh", fs::perms::owner_all);
    ASSERT_EQ(sh("git ls-files --error-unmatch .cocode/fix.sh", repo_).exit_code, 1)
        << "the script is untracked";

    Shell ran = dispatch("replay run --task " + task + " --json");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const json row = json::parse(ran.out).at(0);
    EXPECT_EQ(row["verdict"], "PASS") << ran.err;
    const std::string id = row["run_id"];
    ASSERT_FALSE(id.empty());
    Shell logs = dispatch("logs " + id);
    EXPECT_EQ(logs.exit_code, 0) << logs.err;
    EXPECT_NE(logs.out.find("issue: Add numbers"), std::string::npos) << logs.out;
    Shell status = dispatch("status " + id);
    EXPECT_EQ(status.exit_code, 0) << status.err;
    EXPECT_NE(status.out.find(id), std::string::npos) << status.out;
    EXPECT_NE(status.out.find("PASS"), std::string::npos) << status.out;

    // A program the replay cannot reach is refused before anything starts, with its reason.
    configure({{"agents", {{"gone", {{"command", ".cocode/gone.sh"}}}}}});
    Shell gone = dispatch("replay run --task " + task);
    EXPECT_EQ(gone.exit_code, 3) << gone.err;
    EXPECT_NE(gone.err.find("agent 'gone': its program " + (repo_ / ".cocode/gone.sh").string() +
                            " does not exist"),
              std::string::npos)
        << gone.err;
}

TEST_F(Replay, RunIsRefusedWithoutTheSandbox) {
    make_history();
    ASSERT_EQ(dispatch("replay mine").exit_code, 0);
    json config = json::parse(read_text(repo_ / ".cocode/config.json"));
    config["sandbox"] = "none";
    configure(config);
    Shell ran = dispatch("replay run");
    EXPECT_EQ(ran.exit_code, 3);
    EXPECT_NE(ran.err.find("a replay runs only in the sandbox (its answer is on the same disk)"),
              std::string::npos)
        << ran.err;
}

TEST_F(Replay, MiningWithoutVerifyCommandsSaysWhatItNeeds) {
    configure({{"agents", {{"none", {{"command", "true"}}}}}});
    Shell mined = dispatch("replay mine");
    EXPECT_EQ(mined.exit_code, 2);
    EXPECT_NE(mined.err.find("check.verify: mining needs the verify commands"), std::string::npos)
        << mined.err;
}

}  // namespace cocode::test
