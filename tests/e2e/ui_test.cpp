// The dashboard (`cocode-dispatch ui`, docs/dashboard.md) in Debian's chromium: a real race of
// two agents in a real repository, watched live by tests/ui/browser.mjs (playwright-core and
// axe-core, test peers), which also stops one run from the page. Screenshots of every page are
// kept in the build tree's artifacts/ui/.
#include <httplib.h>
#include <signal.h>

#include "dispatch_fixture.h"
#include "plan_agent.h"

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

    // A client of the dashboard at `where` (HOST:PORT), with the token.
    static httplib::Client client_of(const std::string& where) {
        const auto colon = where.rfind(':');
        httplib::Client client(where.substr(0, colon), std::stoi(where.substr(colon + 1)));
        client.set_bearer_token_auth(kToken);
        client.set_read_timeout(60, 0);
        return client;
    }

    // Waits until there are `n` runs and the newest has ended and been judged.
    std::vector<run::RunRecord> ended_runs(std::size_t n) {
        std::vector<run::RunRecord> all;
        EXPECT_TRUE(wait_until(
            [&] {
                all = runs();
                return all.size() == n && !run::is_active(all.back().status) &&
                       fs::exists(all.back().folder / "check.json");
            },
            std::chrono::seconds(60)))
            << all.size() << " runs";
        return all;
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
    configure({{"agents",
                {{"fast", {{"command", agent.string()}}},
                 {"slow", {{"command", agent.string()}}},
                 {"quiet", {{"command", "true"}}}}}});
    // An agent that says nothing, on another issue, ended before the race starts: its page's
    // log says it has no output (it was an empty dark bar).
    Shell quiet = dispatch("run 2 --agent quiet --no-check --sandbox none");
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    const std::string quiet_id = runs().at(0).run_id;
    Shell run = dispatch("run 1 --agent fast --agent slow --detach --sandbox none");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::vector<run::RunRecord> started;
    for (const auto& r : runs())
        if (r.issue == 1) started.push_back(r);
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
                           {"stopped", {{"id", slow.run_id}}},
                           {"quiet", {{"id", quiet_id}}}};
    write_text(dir_.path() / "scenario.json", scenario.dump());
    // With the peers' Node.js first: playwright-core needs a newer one than Debian 12's, which
    // tests/peers/install then links there (tests/support/pinned-node).
    Shell browser = sh("PATH=" + quote(std::string(COCODE_PEERS_DIR) + "/node_modules/.bin") +
                           ":\"$PATH\" node " +
                           quote(std::string(COCODE_SOURCE_DIR) + "/tests/ui/browser.mjs") + " " +
                           quote((dir_.path() / "scenario.json").string()),
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

// The page's other actions are the CLI's commands, recorded as they record them: a plan revised
// and then approved from the page, and the pair's next round asked for with feedback.
TEST_F(Dashboard, APlanRevisedAndApprovedAndARoundAskedForFromThePageAreTheCommands) {
    configure(plan_agent_config());
    Shell planned = dispatch("run 1 --plan");
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    const run::RunRecord plan_run = only_run();
    auto client = client_of(start_ui(""));

    auto detail = client.Get("/api/runs/" + plan_run.run_id);
    ASSERT_TRUE(detail);
    ASSERT_EQ(detail->status, 200);
    const json shown = json::parse(detail->body);
    const std::string hash = shown.value("plan_hash", "");
    ASSERT_EQ(hash.size(), 12u) << detail->body;
    EXPECT_NE(shown["check_md"].get<std::string>().find("PLAN"), std::string::npos);

    auto post = [&](const std::string& path, const json& body) {
        auto answer = client.Post(path, body.dump(), "application/json");
        EXPECT_TRUE(answer);
        return answer ? std::make_pair(answer->status, answer->body)
                      : std::make_pair(0, std::string());
    };
    // The command's own refusal comes back: a hash that is not the plan's starts nothing.
    auto [stale, why] = post("/api/runs/" + plan_run.run_id + "/plan",
                             {{"verb", "approve"}, {"hash", "0123456789ab"}});
    EXPECT_EQ(stale, 409);
    EXPECT_NE(why.find("is not the current plan"), std::string::npos) << why;
    EXPECT_EQ(runs().size(), 1u);
    EXPECT_EQ(post("/api/runs/" + plan_run.run_id + "/plan", {{"verb", "revise"}}).first, 400)
        << "a revision says what to change";

    EXPECT_EQ(post("/api/runs/" + plan_run.run_id + "/plan",
                   {{"verb", "revise"}, {"message", "Off by default, please."}})
                  .first,
              202);
    auto all = ended_runs(2);
    const run::RunRecord revised = all[1];
    EXPECT_TRUE(revised.plan_round);
    EXPECT_NE(read_text(revised.folder / "feedback.md").find("Off by default, please."),
              std::string::npos);
    const std::string new_hash =
        json::parse(read_text(revised.folder / "check.json"))["plan_round"]["hash"];

    EXPECT_EQ(
        post("/api/runs/" + revised.run_id + "/plan", {{"verb", "approve"}, {"hash", new_hash}})
            .first,
        202);
    all = ended_runs(3);
    const run::RunRecord code = all[2];
    EXPECT_FALSE(code.plan_round);
    EXPECT_EQ(code.round_trigger, "plan " + new_hash + " approved (terminal)");

    EXPECT_EQ(post("/api/runs/" + code.run_id + "/again", {{"message", "Add a test too."}}).first,
              202);
    all = ended_runs(4);
    EXPECT_EQ(all[3].round, code.round + 1);
    EXPECT_NE(read_text(all[3].folder / "feedback.md").find("Add a test too."), std::string::npos);
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

// The dashboard's Stop ends a run being checked, as `stop` does: its hanging verify ends and
// the check is interrupted. Before, a run whose agent had ended was "already ended" (409)
// while its verify went on.
TEST_F(Dashboard, StopEndsARunsCheckToo) {
    const std::string hang = "sleep 86400." + std::to_string(::getpid()) + "2";
    configure({{"check", {{"verify", {hang}}}},
               {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
    ASSERT_EQ(dispatch("run 1 --detach").exit_code, 0);
    const std::string where = start_ui("");
    auto client = client_of(where);
    const std::string id = only_run().run_id;
    json row;
    ASSERT_TRUE(wait_until(
        [&] {
            auto got = client.Get("/api/runs");
            if (!got || got->status != 200) return false;
            const json all = json::parse(got->body);
            for (const auto& r : all["runs"])
                if (r["run_id"] == id) row = r;
            // Its clean tree is made first, then the verify runs.
            return row.contains("checking") && row["checking"].is_object() &&
                   row["checking"]["step"] == "verify: " + hang;
        },
        std::chrono::seconds(60)))
        << row.dump();
    auto stopped = client.Post("/api/runs/" + id + "/stop", "", "application/json");
    ASSERT_TRUE(stopped);
    EXPECT_EQ(stopped->status, 202) << stopped->body;
    EXPECT_TRUE(wait_until([&] { return processes_marked(hang).empty(); }));
    EXPECT_TRUE(wait_until([&] { return event_types(only_run()).back() == "CHECK_INTERRUPTED"; }));
    EXPECT_FALSE(fs::exists(only_run().folder / "check.json"));
}

// A second dashboard on a port in use fails at once, naming the port: before, both listened
// (SO_REUSEPORT) and the kernel split the pages' requests between two servers with two tokens.
TEST_F(Dashboard, ASecondDashboardOnAPortInUseFailsAtOnce) {
    const std::string where = start_ui("");
    const std::string port = where.substr(where.rfind(':') + 1);
    Shell second = sh("COCODE_UI_TOKEN=" + std::string(kToken) + " timeout -k 2 10 " +
                          quote(tool_path("cocode-dispatch").string()) + " ui --port " + port,
                      repo_);
    EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
    EXPECT_NE(second.err.find("cannot listen on 127.0.0.1:" + port + ": the port is in use"),
              std::string::npos)
        << second.err;
    // The first still answers, alone.
    auto page = client_of(where).Get("/api/runs");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
}

// Seen from other machines, the dashboard's token is one chosen for it, never one printed.
TEST_F(Dashboard, ABindBeyondLoopbackNeedsAChosenToken) {
    Shell refused = dispatch("ui --bind 0.0.0.0 --port 0");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("COCODE_UI_TOKEN"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/ui/listening"));
}

// The agent rewrote its run-info's base to an option of git's (`--output=FILE` writes a file)
// and made its output.md a link to a secret: the run's page shows the diff from the sealed base,
// writes nothing, and shows no secret.
TEST_F(Dashboard, ARunsRewrittenRecordWritesNothingAndShowsNoSecret) {
    const fs::path written = dir_.path() / "written-by-git", secret = dir_.path() / "id_secret";
    write_text(secret, "the-secret-key-0x5eed\n");
    const std::string agent =
        "echo change > file.txt && git add file.txt && "
        "git commit -qm \"fix: $COCODE_READY_MARKER\" && "
        "sed -i 's|^base_commit: .*|base_commit: \"--output=" +
        written.string() +
        "\"|' \"$JRUN_RUN_FOLDER/run-info.yaml\" && "
        "ln -sf " +
        secret.string() + " \"$JRUN_RUN_FOLDER/output.md\"";
    configure({{"agents", {{"hostile", {{"command", "sh"}, {"args", {"-c", agent}}}}}}});
    ASSERT_EQ(dispatch("run 1 --no-check").exit_code, 0);
    const auto r = only_run();
    ASSERT_NE(read_text(r.folder / "run-info.yaml").find("--output="), std::string::npos);
    auto client = client_of(start_ui("--read-only"));
    auto got = client.Get(("/api/runs/" + r.run_id).c_str());
    ASSERT_TRUE(got);
    ASSERT_EQ(got->status, 200) << got->body;
    const json page = json::parse(got->body);
    EXPECT_NE(page.value("diff", "").find("file.txt"), std::string::npos) << got->body;
    EXPECT_FALSE(fs::exists(written)) << "git wrote where the agent said";
    EXPECT_EQ(got->body.find("the-secret-key"), std::string::npos) << got->body;
}

}  // namespace
}  // namespace cocode::test
