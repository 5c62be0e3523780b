// The installed hook under real `git commit`s: the seed's examples, chaining, worktrees,
// bad input, and fifty agents committing at once.
#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "core/flat_yaml.h"
#include "hook_fixture.h"

namespace cocode::test {
namespace fs = std::filesystem;

using HookCommit = HookRepo;

TEST_F(HookCommit, SeedValidExamplesAreRecorded) {
    install();
    // ../shared/seeds/cocode-agent-protocol.md, "Valid Examples", one run each.
    const std::vector<std::string> commits = {
        "git commit -q --allow-empty -m 'cocode ready for check'",
        "git commit -q --allow-empty -m 'Fix issue' -m 'cocode ready for check'",
        "git commit -q --allow-empty -m 'feat: add feature - cocode ready for check'",
    };
    for (std::size_t i = 0; i < commits.size(); ++i) {
        RunWorktree run = add_run("valid-" + std::to_string(i));
        Shell r = sh(commits[i], run.worktree);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("ready for check at"), std::string::npos) << r.err;
        auto ev = events(run);
        ASSERT_EQ(ev.size(), 1u) << commits[i];
        EXPECT_EQ(ev[0]["type"], "READY");
        EXPECT_EQ(ev[0]["run_id"], run.run_id);
        EXPECT_EQ(ev[0]["commit"], head(run.worktree));
        auto info =
            FlatYaml::parse(read_text(run.run_folder / "run-info.yaml"), "run-info").value();
        EXPECT_EQ(info.get("ready_commit"), head(run.worktree));
        EXPECT_EQ(info.get("status"), "running");  // the hook touches only its own field
    }
}

TEST_F(HookCommit, SeedInvalidExamplesAreNot) {
    install();
    RunWorktree run = add_run("invalid");
    // "In code comments (not detected)" and "In file content (not detected)".
    sh_ok(
        "echo '// cocode ready for check' > file.js && git add file.js && git commit -q -m 'Add "
        "comment'",
        run.worktree);
    sh_ok(
        "echo 'cocode ready for check' > README.md && git add README.md && git commit -q -m "
        "'Update README'",
        run.worktree);
    Shell quiet = sh("git commit -q --allow-empty -m 'progress'", run.worktree);
    EXPECT_EQ(quiet.err, "");  // inside a run, a commit without the marker is silent too
    EXPECT_FALSE(fs::exists(run.run_folder / "events.jsonl"));
}

TEST_F(HookCommit, AMarkerAlreadyInTheBaseNeverCounts) {
    sh_ok("git commit -q --allow-empty -m 'old work' -m 'cocode ready for check'", repo);
    install();
    RunWorktree run = add_run("stale-base");
    // Re-running the hook on the base commit (nothing new was committed) records nothing.
    Shell rerun = sh(quote(hook_tool().string()) + " post-commit", run.worktree);
    EXPECT_EQ(rerun.exit_code, 0);
    EXPECT_FALSE(fs::exists(run.run_folder / "events.jsonl"));
    sh_ok("git commit -q --allow-empty -m 'unrelated progress'", run.worktree);
    EXPECT_FALSE(fs::exists(run.run_folder / "events.jsonl"));
    // A new commit that carries it does.
    sh_ok("git commit -q --allow-empty -m 'done' -m 'cocode ready for check'", run.worktree);
    EXPECT_EQ(events(run).size(), 1u);
}

TEST_F(HookCommit, MarkerFromTheAgentEnvironmentOrTheRunConfiguration) {
    install();
    RunWorktree configured = add_run("configured", std::string("[ship it]"));
    sh_ok("git commit -q --allow-empty -m 'cocode ready for check'", configured.worktree);
    EXPECT_FALSE(fs::exists(configured.run_folder / "events.jsonl"));
    sh_ok("git commit -q --allow-empty -m 'done [ship it]'", configured.worktree);
    EXPECT_EQ(events(configured).size(), 1u);

    RunWorktree env = add_run("env");
    sh_ok("COCODE_READY_MARKER='READY-42' git commit -q --allow-empty -m 'done READY-42'",
          env.worktree);
    EXPECT_EQ(events(env).size(), 1u);
}

TEST_F(HookCommit, JrunRunFolderInTheEnvironmentWinsOverThePointer) {
    install();
    RunWorktree a = add_run("a");
    RunWorktree b = add_run("b");
    sh_ok("JRUN_RUN_FOLDER=" + quote(b.run_folder.string()) +
              " git commit -q --allow-empty -m 'cocode ready for check'",
          a.worktree);
    EXPECT_FALSE(fs::exists(a.run_folder / "events.jsonl"));
    ASSERT_EQ(events(b).size(), 1u);
}

TEST_F(HookCommit, LinkedWorktreesEachReportToTheirOwnRun) {
    install();
    std::vector<RunWorktree> runs;
    for (int i = 0; i < 4; ++i) runs.push_back(add_run("wt" + std::to_string(i)));
    for (const RunWorktree& run : runs) {
        fs::create_directories(run.worktree / "src/deep");
        // Committing from a subfolder: git starts the hook at the worktree's top.
        sh_ok("cd src/deep && git commit -q --allow-empty -m 'cocode ready for check'",
              run.worktree);
    }
    for (const RunWorktree& run : runs) {
        auto ev = events(run);
        ASSERT_EQ(ev.size(), 1u);
        EXPECT_EQ(ev[0]["run_id"], run.run_id);
        EXPECT_EQ(ev[0]["commit"], head(run.worktree));
    }
    // The main worktree is in no run: its commits leave no trace.
    Shell main_commit = sh("git commit -q --allow-empty -m 'cocode ready for check'", repo);
    EXPECT_EQ(main_commit.exit_code, 0);
    EXPECT_EQ(main_commit.err, "");
}

TEST_F(HookCommit, ChainedHookRunsInAndOutOfRunsAndKeepsItsExitCode) {
    fs::path user_hook = repo / ".git/hooks/post-commit";
    write_text(user_hook,
               "#!/bin/sh\necho \"user hook $(basename \"$0\") $#\" >> \"$(git rev-parse "
               "--git-common-dir)/user-hook.log\"\nexit 7\n");
    ::chmod(user_hook.c_str(), 0755);
    install();
    RunWorktree run = add_run("chained");
    sh_ok("git commit -q --allow-empty -m 'outside a run'", repo);
    sh_ok("git commit -q --allow-empty -m 'cocode ready for check'", run.worktree);
    auto log = read_lines(repo / ".git/user-hook.log");
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0], "user hook post-commit 0");  // $0 keeps the hook's real name
    EXPECT_EQ(events(run).size(), 1u);
    // git ignores post-commit's status, so check the exit code by running the hook as git would.
    Shell direct = sh(quote((repo / ".git/hooks/post-commit").string()), repo);
    EXPECT_EQ(direct.exit_code, 7);
    std::string git_dir = sh_ok("git rev-parse --absolute-git-dir", run.worktree);
    git_dir.pop_back();
    Shell in_run =
        sh("GIT_DIR=" + quote(git_dir) + " " + quote((repo / ".git/hooks/post-commit").string()),
           run.worktree);
    EXPECT_EQ(in_run.exit_code, 7);
}

TEST_F(HookCommit, TheShimRecordsItselfAndHandsAPackedCommitToCocodeHook) {
    // Install from a copy of the tool, so that it can be taken away.
    fs::copy_file(hook_tool(), dir / "cocode-hook");
    fs::copy_file(hook_shim(), dir / "cocode-hook-shim");
    sh_ok(quote((dir / "cocode-hook").string()) + " install", repo);
    const std::string hook = quote((repo / ".git/hooks/post-commit").string());

    // The new commit in git's files: READY recorded by the shim, in its own process.
    RunWorktree fast = add_run("fast");
    fs::remove(dir / "cocode-hook");
    Shell r = sh("PATH=/usr/bin:/bin git commit -q --allow-empty -m 'cocode ready for check'",
                 fast.worktree);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.err.find("is ready for check"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    ASSERT_EQ(events(fast).size(), 1u);
    EXPECT_EQ(events(fast)[0]["commit"].get<std::string>(), head(fast.worktree));

    // A commit git has packed is not read by the shim: cocode-hook, which asks git, records it.
    RunWorktree packed = add_run("packed");
    sh_ok(
        "git -c core.hooksPath=/dev/null commit -q --allow-empty -m 'cocode ready for check' "
        "&& git repack -adq && git prune-packed",
        packed.worktree);
    std::string id = head(packed.worktree);
    ASSERT_FALSE(fs::exists(repo / ".git/objects" / id.substr(0, 2) / id.substr(2)));
    // Missing, it is one line and the commit stands.
    Shell missing = sh("PATH=/usr/bin:/bin " + hook, packed.worktree);
    EXPECT_EQ(missing.exit_code, 0);
    EXPECT_NE(missing.err.find("cocode-hook: not found"), std::string::npos) << missing.err;
    EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
    EXPECT_FALSE(fs::exists(packed.run_folder / "events.jsonl"));
    // Back, it records the commit.
    fs::copy_file(hook_tool(), dir / "cocode-hook");
    Shell handed = sh(hook, packed.worktree);
    EXPECT_EQ(handed.exit_code, 0) << handed.err;
    ASSERT_EQ(events(packed).size(), 1u) << handed.err;
    EXPECT_EQ(events(packed)[0]["commit"].get<std::string>(), id);
}

TEST_F(HookCommit, BadInputLeavesTheCommitStandingWithOneClearLine) {
    install();
    // A message that is not UTF-8: the marker is matched on bytes; the event is valid JSON.
    RunWorktree latin1 = add_run("latin1");
    sh_ok(
        "printf 'Fix \\351t\\351\\n\\ncocode ready for check\\n' > ../msg && git -c "
        "i18n.commitEncoding=latin1 commit -q --allow-empty -F ../msg",
        latin1.worktree);
    ASSERT_EQ(events(latin1).size(), 1u);

    // A 1 MB message with the marker at its very end.
    RunWorktree big = add_run("big");
    write_text(dir / "big-msg", std::string(1 << 20, 'x') + "\n\ncocode ready for check\n");
    sh_ok("git commit -q --allow-empty -F " + quote((dir / "big-msg").string()), big.worktree);
    ASSERT_EQ(events(big).size(), 1u);

    auto commit_err = [&](const RunWorktree& run) {
        std::string before = head(run.worktree);
        Shell r = sh("git commit -q --allow-empty -m 'cocode ready for check'", run.worktree);
        EXPECT_EQ(r.exit_code, 0);
        EXPECT_NE(head(run.worktree), before) << "the commit must stand";
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        return r.err;
    };

    RunWorktree vanished = add_run("vanished");
    fs::remove_all(vanished.run_folder);
    EXPECT_NE(commit_err(vanished).find("is gone"), std::string::npos);
    EXPECT_FALSE(fs::exists(vanished.run_folder));  // not re-created half-way

    RunWorktree locked = add_run("unwritable");
    fs::create_directory(locked.run_folder / "events.jsonl");  // unwritable, even for root
    std::string info_before = read_text(locked.run_folder / "run-info.yaml");
    EXPECT_NE(commit_err(locked).find("events.jsonl"), std::string::npos);
    EXPECT_EQ(read_text(locked.run_folder / "run-info.yaml"), info_before);  // nothing half-written

    RunWorktree corrupt = add_run("corrupt");
    std::string git_dir = sh_ok("git rev-parse --absolute-git-dir", corrupt.worktree);
    git_dir.pop_back();
    write_text(fs::path(git_dir) / "cocode-run", std::string("\x7f"
                                                             "ELF\0\0garbage",
                                                             12));
    std::string err = commit_err(corrupt);
    EXPECT_NE(err.find("corrupt run pointer"), std::string::npos) << err;
}

TEST_F(HookCommit, FiftyWorktreesCommittingAtOnceGiveFiftyWholeReadyLines) {
    install();
    fs::path bus = repo / ".cocode/runs/events.jsonl";
    std::vector<RunWorktree> runs;
    for (int i = 0; i < 50; ++i)
        runs.push_back(add_run("agent" + std::to_string(i), std::nullopt, bus));
    // One shell starts fifty commits in the background and waits for all of them.
    std::string script;
    for (const RunWorktree& run : runs)
        script += "(cd " + quote(run.worktree.string()) +
                  " && git commit -q --allow-empty -m 'done' -m 'cocode ready for check') &\n";
    script += "wait\n";
    sh_ok(script, repo);

    auto lines = read_lines(bus);
    ASSERT_EQ(lines.size(), 50u);
    std::set<std::string> run_ids;
    for (const std::string& line : lines) {
        ASSERT_TRUE(nlohmann::json::accept(line)) << line;
        auto event = nlohmann::json::parse(line);
        EXPECT_EQ(event["type"], "READY");
        run_ids.insert(event["run_id"].get<std::string>());
    }
    EXPECT_EQ(run_ids.size(), 50u);
    for (const RunWorktree& run : runs) EXPECT_EQ(events(run).size(), 1u);
}

}  // namespace cocode::test
