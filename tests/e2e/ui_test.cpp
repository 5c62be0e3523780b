// The dashboard (`cocode-dispatch ui`, docs/dashboard.md) in Debian's chromium: a real race of
// two agents in a real repository, watched live by tests/ui/browser.mjs (playwright-core and
// axe-core, test peers), which also stops one run from the page. Screenshots of every page are
// kept in the build tree's artifacts/ui/.
#include <signal.h>

#include "dispatch_fixture.h"

namespace cocode::test {
namespace {

constexpr char kToken[] = "the-dashboards-token-for-the-test-0123456789";
// The issue's title carries markup and a terminal escape: both must show as characters.
constexpr char kHostileTitle[] = "<img src=x onerror=alert(1)> \x1b[31mred";

class Dashboard : public DispatchRun {
  protected:
    void TearDown() override {
        for (pid_t pid : servers_) {
            ::kill(pid, SIGTERM);
            EXPECT_TRUE(wait_until([&] { return !run::process_alive(pid); }))
                << "the dashboard did not end on SIGTERM";
        }
    }

    // `ui FLAGS` on a free port, in the background; its address once it listens.
    std::string start_ui(const std::string& flags) {
        const fs::path listening = repo_ / ".cocode/ui/listening";
        fs::remove(listening);
        const std::string n = std::to_string(servers_.size());
        sh_ok("COCODE_UI_TOKEN=" + std::string(kToken) + " " +
                  quote(tool_path("cocode-dispatch").string()) + " ui --port 0 " + flags +
                  " >../ui-" + n + ".out 2>../ui-" + n + ".err & echo $! >../ui-" + n + ".pid",
              repo_);
        servers_.push_back(std::stoi(read_text(dir_.path() / ("ui-" + n + ".pid"))));
        EXPECT_TRUE(wait_until([&] { return fs::exists(listening); }))
            << read_text(dir_.path() / ("ui-" + n + ".err"));
        const std::string where = read_text(listening);
        return where.substr(0, where.find('\n'));
    }

    std::vector<pid_t> servers_;
};

TEST_F(Dashboard, ARaceSeenLiveInChromiumStoppedFromThePageAndNoHostileTextRuns) {
    ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "Debian's chromium: ci/install-deps";
    json issue = json::parse(read_text(repo_ / ".cocode/issues/1.json"));
    issue["title"] = kHostileTitle;
    write_text(repo_ / ".cocode/issues/1.json", issue.dump());
    // Each agent waits for the test: `go` to commit with the marker, `end` to exit.
    const fs::path agent = dir_.path() / "gated-agent.sh";
    write_text(agent,
               "#!/bin/sh\n"
               "echo 'working on it'\n"
               "while [ ! -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n"
               "echo change >file.txt && git add file.txt && "
               "git commit -qm \"fix: $COCODE_READY_MARKER\"\n"
               "while [ ! -e \"$JRUN_RUN_FOLDER/end\" ]; do sleep 0.05; done\n");
    fs::permissions(agent, fs::perms::owner_all);
    configure(
        {{"agents",
          {{"fast", {{"command", agent.string()}}}, {"slow", {{"command", agent.string()}}}}}});
    Shell run = dispatch("run 1 --detach --sandbox none");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto started = runs();
    ASSERT_EQ(started.size(), 2u);
    std::sort(started.begin(), started.end(),
              [](const auto& a, const auto& b) { return a.agent < b.agent; });
    const run::RunRecord fast = started[0], slow = started[1];

    const std::string url = "http://" + start_ui("") + "/#token=" + kToken;
    const std::string read_only = "http://" + start_ui("--read-only") + "/#token=" + kToken;
    EXPECT_NE(read_text(dir_.path() / "ui-0.out").find(url), std::string::npos)
        << "ui prints the address to open, with its token";

    const json scenario = {{"peers", COCODE_PEERS_DIR},
                           {"chromium", "/usr/bin/chromium"},
                           {"url", url},
                           {"readOnlyUrl", read_only},
                           {"token", kToken},
                           {"artifacts", COCODE_UI_ARTIFACTS},
                           {"race", {{"id", fast.run_id}, {"folder", fast.folder.string()}}},
                           {"stopped", {{"id", slow.run_id}}}};
    write_text(dir_.path() / "scenario.json", scenario.dump());
    Shell browser = sh("node " + quote(std::string(COCODE_SOURCE_DIR) + "/tests/ui/browser.mjs") +
                           " " + quote((dir_.path() / "scenario.json").string()),
                       dir_.path());
    EXPECT_EQ(browser.exit_code, 0) << browser.out << browser.err;

    // What the page did is what the CLI does, recorded as the CLI records it.
    ASSERT_TRUE(wait_until([&] {
        auto info = run::read_run_info(slow.folder);
        return info && !run::is_active(run::record_from(*info, slow.folder).status);
    }));
    const auto after = run::list_runs(repo_ / ".cocode/runs").runs;
    for (const auto& r : after) {
        if (r.run_id != slow.run_id) continue;
        EXPECT_EQ(r.reason, run::StopReason::interrupted);
        bool asked = false;
        for (const auto& e : events(r.folder / "events.jsonl"))
            asked |= e["type"] == "STOP_REQUESTED" && e["by"] == "dashboard";
        EXPECT_TRUE(asked) << "the stop is in the run's events, by the dashboard";
    }
}

// `stop` from a terminal: what the dashboard's Stop does. The run ends as Ctrl-C ends it, the
// request is recorded, and a second stop finds nothing to stop.
TEST_F(Dashboard, StopEndsARunAsCtrlCDoesAndSaysWhoAsked) {
    configure({{"agents", {{"waiter", {{"command", agent_path("wait-agent.sh")}}}}}});
    Shell run = dispatch("run 1 --detach");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const run::RunRecord started = only_run();
    Shell stop = dispatch("stop 1");
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    EXPECT_NE(stop.out.find("stopping " + started.run_id), std::string::npos) << stop.out;
    EXPECT_NE(stop.out.find("failed (interrupted)"), std::string::npos)
        << "stop waits for the end and says it: " << stop.out;
    const run::RunRecord& ended = only_run();
    EXPECT_EQ(ended.reason, run::StopReason::interrupted);
    EXPECT_EQ(ended.exit_code, 130);
    bool asked = false;
    for (const auto& e : events(ended.folder / "events.jsonl"))
        asked |= e["type"] == "STOP_REQUESTED" && e["by"] == "terminal";
    EXPECT_TRUE(asked);
    EXPECT_TRUE(nothing_left(ended));
    Shell again = dispatch("stop " + started.run_id);
    EXPECT_EQ(again.exit_code, 0);
    EXPECT_NE(again.out.find("nothing to stop"), std::string::npos) << again.out;
}

// Seen from other machines, the dashboard's token is one chosen for it, never one printed.
TEST_F(Dashboard, ABindBeyondLoopbackNeedsAChosenToken) {
    Shell refused = dispatch("ui --bind 0.0.0.0 --port 0");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("COCODE_UI_TOKEN"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/ui/listening"));
}

}  // namespace
}  // namespace cocode::test
