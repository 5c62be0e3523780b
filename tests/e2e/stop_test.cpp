// Stop means stop: Ctrl-C, `cocode-dispatch stop` and cocode-check's Ctrl-C end a run in
// whatever phase it is — its worktree's setup, its agent, its check — with every process of
// that phase ended (the verify's group, in its sandbox), its clean tree removed, one line
// naming the phase, and the run or its check recorded `interrupted`, never a FAIL verdict.
#include <signal.h>
#include <unistd.h>

#include "dispatch_fixture.h"
#include "fake_github.h"

namespace cocode::test {
namespace {

class Stop : public DispatchRun {
  protected:
    // A command line no other process has: `sleep <mark>` is the phase's process.
    std::string mark() const { return "86400." + std::to_string(::getpid()) + "1"; }

    // `tool args` started in the background, as a person's terminal would run it: its pid,
    // its output in out.txt and err.txt, its exit code in code.txt when it ends. `env`: "NAME=value
    // " assignments before it.
    pid_t start(const std::string& tool, const std::string& args, const std::string& env = "") {
        Shell started = sh("(" + env + quote(tool_path(tool).string()) + " " + args +
                               " > out.txt 2> err.txt & echo $! > pid.txt; wait $!; "
                               "echo $? > code.txt) > /dev/null 2>&1 & "
                               "until test -s pid.txt; do sleep 0.01; done; cat pid.txt",
                           repo_);
        return static_cast<pid_t>(std::stol(started.out));
    }

    // Its exit code, once it has ended.
    std::string ended() {
        EXPECT_TRUE(wait_until(
            [&] {
                return fs::exists(repo_ / "code.txt") && !read_text(repo_ / "code.txt").empty();
            },
            std::chrono::seconds(60)));
        return read_text(repo_ / "code.txt");
    }

    // `run 1` of an agent that sleeps ten minutes (to be stopped, never to end by itself), in the
    // background: whether it came to run.
    bool a_sleeper_running() {
        configure({{"grace", "300ms"},
                   {"agents",
                    {{"sleeper",
                      {{"command", agent_path("sleep-agent.sh")}, {"env", {"AGENT_SLEEP"}}}}}}});
        start("cocode-dispatch", "run 1", "AGENT_SLEEP=600 ");
        return wait_until([&] {
            auto all = runs();
            return all.size() == 1 && all[0].status == run::RunStatus::running;
        });
    }

    bool verify_running() { return !processes_marked("sleep " + mark()).empty(); }

    // No clean tree is left in the repository's git folder.
    bool no_clean_tree() {
        const fs::path trees = repo_ / ".git/cocode/trees";
        std::error_code ec;
        return !fs::exists(trees, ec) || fs::is_empty(trees, ec);
    }

    // The verify runs what the agent wrote; here, code that fights being ended: it ignores
    // SIGTERM and leaves a process in a session of its own, out of the verify's group.
    void configure_hanging_verify() {
        configure({{"check",
                    {{"verify", {"trap '' TERM; setsid sleep " + mark() + " & sleep " + mark()}}}},
                   {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
    }

    // `status` shows the run being checked, with its verify and that verify's timeout.
    bool status_shows_checking() {
        Shell status = dispatch("status");
        return status.out.find("checking (verify: trap") != std::string::npos &&
               status.out.find(" of 10m)") != std::string::npos;
    }

    // A run with a worktree_setup command that runs until it is ended, started in the
    // background: its dispatcher's pid, once that command runs.
    pid_t a_setup_running() {
        configure({{"worktree_setup", {{"commands", {"sleep " + mark()}}}},
                   {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
        const pid_t dispatcher = start("cocode-dispatch", "run 1");
        EXPECT_TRUE(wait_until([&] { return verify_running(); }, std::chrono::seconds(60)))
            << read_text(repo_ / "err.txt");
        return dispatcher;
    }

    // The run ended interrupted in its setup: exit 130, the command ended, not judged.
    void expect_interrupted_in_setup() {
        EXPECT_EQ(ended(), "130\n") << read_text(repo_ / "err.txt");
        EXPECT_TRUE(wait_until([&] { return !verify_running(); }, std::chrono::seconds(20)));
        const auto& r = only_run();
        EXPECT_EQ(r.status, run::RunStatus::failed);
        EXPECT_EQ(r.reason, run::StopReason::interrupted);
        EXPECT_EQ(r.exit_code, 130);
        const std::string said = read_text(repo_ / "out.txt") + read_text(repo_ / "err.txt");
        EXPECT_NE(said.find("interrupted in setup: worktree_setup.commands"), std::string::npos)
            << said;
        // Not judged: nothing of the agent's is there.
        EXPECT_FALSE(fs::exists(r.folder / "check.json"));
        EXPECT_EQ(said.find("FAIL"), std::string::npos) << said;
    }

    void expect_check_interrupted(const std::string& err) {
        EXPECT_NE(err.find("interrupted in the check, during verify: trap '' TERM; setsid sleep " +
                           mark()),
                  std::string::npos)
            << err;
        // Every process of the check ended with it, its clean tree removed.
        EXPECT_TRUE(wait_until([&] { return !verify_running(); }, std::chrono::seconds(20)));
        EXPECT_TRUE(no_clean_tree());
        const auto& r = only_run();
        // The agent's run stands as it ended; its check has no verdict, only its interruption.
        EXPECT_EQ(r.status, run::RunStatus::completed);
        EXPECT_FALSE(fs::exists(r.folder / "check.json"));
        EXPECT_EQ(event_types(r).back(), "CHECK_INTERRUPTED");
        Shell status = dispatch("status --json");
        ASSERT_EQ(status.exit_code, 0) << status.err;
        const json row = json::parse(status.out).at(0);
        EXPECT_EQ(row["verdict"], "interrupted");
        EXPECT_TRUE(row["checking"].is_null());
    }

    // A GitHub that answers nothing to the verdict's comment (a hung front end), and a seed
    // agent; then the command line's part that publishes there and the token it needs.
    std::string hold_the_verdicts_comment(FakeGitHub& server) {
        server.add_issue(1, "Fix it", "b", {});
        Fault hung;
        hung.method = "POST";
        hung.path_contains = "/issues/1/comments";
        hung.kind = Fault::Kind::hold;
        hung.times = 100;
        server.inject(hung);
        configure({{"progress", false},
                   {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
        return " --publish --repo octo-org/demo --api-url " + server.base_url() + " --ca-bundle " +
               quote(loopback_tls().files.certificate.string());
    }
    static std::string token() { return "GITHUB_TOKEN=" + std::string(kTestToken) + " "; }

    // Once its request is held: `status` shows the publishing, `stop` ends it at once and says
    // so, the verdict is kept here and the request is never sent again.
    void expect_publishing_stopped(const FakeGitHub& server) {
        ASSERT_TRUE(wait_until([&] { return server.held() > 0; }, std::chrono::seconds(60)))
            << read_text(repo_ / "err.txt");
        const std::string id = only_run().run_id;
        EXPECT_NE(dispatch("status").out.find("checking (publishing"), std::string::npos)
            << dispatch("status").out;
        // Waiting for the run to end: bounded by half the request's read timeout (30 s).
        Shell stop = dispatch("stop " + id, "timeout 15 ");
        ASSERT_EQ(stop.exit_code, 0) << "124: still publishing 15 s after the stop\n" << stop.err;
        EXPECT_NE(stop.out.find(id + ": completed, its publishing interrupted"), std::string::npos)
            << stop.out;
        EXPECT_EQ(ended(), "130\n") << read_text(repo_ / "err.txt");
        const auto& r = only_run();
        EXPECT_TRUE(fs::exists(r.folder / "check.json")) << "the verdict is kept here";
        const auto events = event_types(r);
        EXPECT_EQ(std::count(events.begin(), events.end(), "PUBLISH"), 0);
        EXPECT_EQ(server.held(), 1) << "one request, never sent again";
    }
};

TEST_F(Stop, CtrlCInTheCheckEndsItsVerifyAndLeavesNoVerdict) {
    configure_hanging_verify();
    const pid_t dispatcher = start("cocode-dispatch", "run 1");
    ASSERT_TRUE(wait_until([&] { return status_shows_checking(); }, std::chrono::seconds(60)))
        << dispatch("status").out << read_text(repo_ / "err.txt");
    // `status` says so as the verify starts: its process follows at once.
    ASSERT_TRUE(wait_until([&] { return verify_running(); }));
    ASSERT_EQ(::kill(dispatcher, SIGINT), 0);
    const std::string code = ended();
    EXPECT_EQ(code, "130\n") << read_text(repo_ / "err.txt");
    // It ended at all: its verify would have slept a day (the design: SIGTERM, 1 s, SIGKILL).
    expect_check_interrupted(read_text(repo_ / "out.txt") + read_text(repo_ / "err.txt"));
}

TEST_F(Stop, StopInTheCheckEndsItsVerifyAndLeavesNoVerdict) {
    configure_hanging_verify();
    start("cocode-dispatch", "run 1");
    ASSERT_TRUE(wait_until([&] { return status_shows_checking(); }, std::chrono::seconds(60)))
        << dispatch("status").out << read_text(repo_ / "err.txt");
    const std::string id = only_run().run_id;
    // clean leaves a run being checked as it leaves one running, naming stop.
    Shell clean = dispatch("clean 1");
    EXPECT_NE(clean.err.find("is being checked"), std::string::npos) << clean.out << clean.err;
    EXPECT_TRUE(fs::exists(repo_ / ".cocode/worktrees/1-seed"));
    Shell stop = dispatch("stop " + id);
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    EXPECT_NE(stop.out.find("stopping " + id), std::string::npos) << stop.out;
    EXPECT_NE(stop.out.find(id + ": completed, its check interrupted"), std::string::npos)
        << stop.out;
    const std::string code = ended();
    EXPECT_EQ(code, "130\n") << read_text(repo_ / "err.txt");
    expect_check_interrupted(read_text(repo_ / "out.txt") + read_text(repo_ / "err.txt"));
    // A stop is spent by the check it stopped: the next check of the run is not stopped by it.
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/seals" / (id + ".stop")));
}

TEST_F(Stop, CtrlCEndsCocodeChecksVerify) {
    configure_hanging_verify();
    ASSERT_EQ(dispatch("run 1 --no-check").exit_code, 0);
    const std::string id = only_run().run_id;
    const pid_t check = start("cocode-check", "--run " + id);
    ASSERT_TRUE(wait_until([&] { return status_shows_checking(); }, std::chrono::seconds(60)))
        << dispatch("status").out << read_text(repo_ / "err.txt");
    ASSERT_EQ(::kill(check, SIGINT), 0);
    const std::string code = ended();
    EXPECT_EQ(code, "130\n") << read_text(repo_ / "err.txt");
    expect_check_interrupted(read_text(repo_ / "err.txt"));
}

TEST_F(Stop, CtrlCInTheWorktreeSetupEndsItAndTheRunIsInterruptedNotFailed) {
    const pid_t dispatcher = a_setup_running();
    ASSERT_EQ(::kill(dispatcher, SIGINT), 0);
    expect_interrupted_in_setup();
}

// `stop` (and so the dashboard's Stop, the same call) while the run's worktree_setup command
// runs: that command's group is ended, as Ctrl-C ends it, and the run is interrupted in its
// setup; before, the stop waited for the command to end by itself or time out (20 minutes).
TEST_F(Stop, StopInTheWorktreeSetupEndsItAndTheRunIsInterruptedNotFailed) {
    a_setup_running();
    Shell stop = dispatch("stop " + only_run().run_id);
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    EXPECT_NE(stop.out.find("stopping " + only_run().run_id), std::string::npos) << stop.out;
    expect_interrupted_in_setup();
}

TEST_F(Stop, ARunStoppedWhileItsAgentRanIsNotJudged) {
    ASSERT_TRUE(a_sleeper_running());
    Shell stop = dispatch("stop " + only_run().run_id);
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    const std::string code = ended();
    EXPECT_EQ(code, "130\n") << read_text(repo_ / "err.txt");
    const auto& r = only_run();
    EXPECT_EQ(r.reason, run::StopReason::interrupted);
    EXPECT_FALSE(fs::exists(r.folder / "check.json"));
    const std::string said = read_text(repo_ / "out.txt") + read_text(repo_ / "err.txt");
    EXPECT_NE(said.find("interrupted while its agent ran"), std::string::npos) << said;
    EXPECT_EQ(said.find("FAIL"), std::string::npos) << said;
    EXPECT_EQ(said.find("no verdict"), std::string::npos) << said;
    // Asked by hand, the check says why there is nothing to judge.
    Shell check = sh(quote(tool_path("cocode-check").string()) + " --run " + r.run_id, repo_);
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_NE(check.err.find("is not judged: it was interrupted"), std::string::npos) << check.err;
}

// An agent that fights being ended (it ignores SIGTERM) is killed a second after a person's
// stop, whatever `grace` says: a stop ends a run within 2 s. `grace` is for cocode's own stops
// (a timeout), which nobody waits on; before, the stop here waited out its 30 s.
TEST_F(Stop, AStopEndsAnAgentThatIgnoresItWithinASecondOfGrace) {
    configure(
        {{"grace", "30s"},
         {"agents",
          {{"stubborn",
            {{"command", "sh"}, {"args", {"-c", "trap '' TERM; sleep " + mark() + "; true"}}}}}}});
    start("cocode-dispatch", "run 1");
    ASSERT_TRUE(wait_until([&] { return verify_running(); }, std::chrono::seconds(60)))
        << read_text(repo_ / "err.txt");
    ASSERT_EQ(dispatch("stop --no-wait " + only_run().run_id).exit_code, 0);
    // A bound, not a measure: half the grace the stop no longer waits for.
    EXPECT_TRUE(wait_until([&] { return !verify_running(); }, std::chrono::seconds(15)))
        << "the agent outlived its stop by 15 s";
    EXPECT_EQ(ended(), "130\n") << read_text(repo_ / "err.txt");
    EXPECT_EQ(only_run().reason, run::StopReason::interrupted);
}

// A stop while the verdict goes to GitHub, which answers nothing (a hung front end), ends the
// publishing at once: the request is cut short (not waited out for its read timeout, then
// retried), the verdict is kept here, and `stop` says so. Before, `stop` found nothing to stop
// and the run waited on GitHub.
TEST_F(Stop, StopWhileTheVerdictIsPublishedEndsItAndKeepsTheVerdictHere) {
    FakeGitHub server(loopback_options());
    start("cocode-dispatch", "run 1" + hold_the_verdicts_comment(server), token());
    expect_publishing_stopped(server);
    const std::string said = read_text(repo_ / "out.txt") + read_text(repo_ / "err.txt");
    EXPECT_NE(said.find("(interrupted)"), std::string::npos) << said;
}

// The same through the other door, `cocode-check --run ID --publish` (the verdict sent later, by
// hand or by a runner): it exits 130 too.
TEST_F(Stop, StopWhileCocodeCheckPublishesARunEndsIt) {
    FakeGitHub server(loopback_options());
    const std::string publish = hold_the_verdicts_comment(server);
    ASSERT_EQ(dispatch("run 1").exit_code, 0);
    start("cocode-check", "--run " + only_run().run_id + publish, token());
    expect_publishing_stopped(server);
}

// `clean --stop` stops a run still going first, as `stop` does, then removes what it made;
// without --stop it leaves it, naming both ways.
TEST_F(Stop, CleanStopStopsARunningPairThenRemovesIt) {
    ASSERT_TRUE(a_sleeper_running());
    Shell kept = dispatch("clean 1");
    EXPECT_EQ(kept.exit_code, 1);
    EXPECT_NE(kept.err.find("(`clean --stop` does both)"), std::string::npos) << kept.err;
    EXPECT_TRUE(fs::exists(repo_ / ".cocode/worktrees/1-sleeper"));
    Shell clean = dispatch("clean 1 --stop");
    EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
    EXPECT_NE(clean.out.find("stopping " + only_run().run_id), std::string::npos) << clean.out;
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/worktrees/1-sleeper")) << clean.out << clean.err;
    EXPECT_EQ(sh("git rev-parse --verify -q cocode/1-sleeper", repo_).exit_code, 1);
    EXPECT_EQ(ended(), "130\n");
}

// The scorecard counts only what the agent finished: its run a person stopped and its run
// whose program was missing are counted apart, so one PASS of one finished run is 100 %.
TEST_F(Stop, TheReportCountsStoppedAndNeverStartedRunsApart) {
    const std::string work =
        "if [ \"$COCODE_ISSUE_NUMBER\" = 1 ]; then exec sleep 60; fi; echo done > f && "
        "git add f && git commit -q -m \"$COCODE_READY_MARKER\"";
    configure({{"grace", "300ms"},
               {"agents", {{"worker", {{"command", "sh"}, {"args", {"-c", work}}}}}}});
    ASSERT_EQ(dispatch("run 2").exit_code, 0);
    start("cocode-dispatch", "run 1");
    ASSERT_TRUE(wait_until([&] {
        for (const auto& r : runs())
            if (r.issue == 1 && r.status == run::RunStatus::running) return true;
        return false;
    }));
    for (const auto& r : runs())
        if (r.issue == 1) {
            ASSERT_EQ(dispatch("stop " + r.run_id).exit_code, 0);
        }
    EXPECT_EQ(ended(), "130\n");
    configure({{"agents", {{"worker", {{"command", "/nonexistent/worker"}}}}}});
    EXPECT_EQ(dispatch("run 3").exit_code, 3);

    Shell report = dispatch("report --json");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const json row = json::parse(report.out)["rows"].at(0);
    EXPECT_EQ(row["key"], "worker");
    EXPECT_EQ(row["runs"], 3);
    EXPECT_EQ(row["judged"], 1);
    EXPECT_EQ(row["passed"], 1);
    EXPECT_EQ(row["interrupted"], 1);
    EXPECT_EQ(row["never_started"], 1);
    EXPECT_EQ(row["pass_rate"], 1.0);
    // A script agent's cost is not known to cocode: unknown, never "$0.00" (free).
    EXPECT_TRUE(row["cost_usd"].is_null()) << row.dump();
    EXPECT_TRUE(row["cost_per_pass_usd"].is_null()) << row.dump();
    Shell text = dispatch("report");
    EXPECT_EQ(text.out.find("$0.00"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("runs counts 1 interrupted and 1 whose agent never started: not "
                            "judged, not in the PASS rate"),
              std::string::npos)
        << text.out;
    Shell csv = dispatch("report --csv");
    EXPECT_NE(csv.out.find(",interrupted,never_started\n"), std::string::npos) << csv.out;
}

// What an agent writes in its run folder says nothing of its check: a CHECK_INTERRUPTED it
// planted in events.jsonl does not make `status` say its check was interrupted.
TEST_F(Stop, AnInterruptionAnAgentPlantedIsNotBelieved) {
    const std::string plant =
        "printf '%s\\n' '{\"type\":\"CHECK_INTERRUPTED\",\"run_id\":\"x\"}' >> "
        "\"$JRUN_RUN_FOLDER/events.jsonl\"; echo x > f && git add f && "
        "git commit -q -m \"$COCODE_READY_MARKER\"";
    configure({{"agents", {{"planter", {{"command", "sh"}, {"args", {"-c", plant}}}}}}});
    ASSERT_EQ(dispatch("run 1 --no-check").exit_code, 0);
    const auto types = event_types(only_run());
    ASSERT_NE(std::find(types.begin(), types.end(), "CHECK_INTERRUPTED"), types.end())
        << "the agent planted it";
    Shell status = dispatch("status --json");
    ASSERT_EQ(status.exit_code, 0) << status.err;
    EXPECT_TRUE(json::parse(status.out).at(0)["verdict"].is_null()) << status.out;
}

// A check run again is judged by the rules its run was dispatched with, whatever the
// configuration says now, and says so: before, a shorter timeout written since was silently
// not used.
TEST_F(Stop, ACheckRunAgainSaysItUsesTheSealedRulesWhenTheConfigurationChanged) {
    configure({{"check", {{"verify", {"true"}}}},
               {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
    ASSERT_EQ(dispatch("run 1 --no-check").exit_code, 0);
    const std::string id = only_run().run_id;
    Shell same = sh(quote(tool_path("cocode-check").string()) + " --run " + id, repo_);
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(same.err.find("dispatched with"), std::string::npos) << same.err;

    configure({{"check", {{"verify", {"false"}}, {"verify_timeout", "1s"}}},
               {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
    Shell again = sh(quote(tool_path("cocode-check").string()) + " --run " + id, repo_);
    EXPECT_EQ(again.exit_code, 0) << "judged by the sealed `true`: " << again.err;
    EXPECT_NE(again.err.find("run " + id + " is judged by the rules it was dispatched with"),
              std::string::npos)
        << again.err;
    EXPECT_NE(again.err.find("has changed since: check.verify, check.verify_timeout."),
              std::string::npos)
        << again.err;
}

}  // namespace
}  // namespace cocode::test
