// The reliability campaign's cases (docs/reliability.md): hostile agents, kill -9 of the
// dispatcher at random points, recycled pids, a full disk at every write point. Each runs here
// at a small scale; ci/reliability runs them with COCODE_CAMPAIGN=1 at the campaign's.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "dispatch_fixture.h"
#include "proc/sandbox.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// What is still alive of a run: processes with its JRUN_ID, or its mark on their command line.
std::string survivors(const run::RunRecord& r) {
    std::string out;
    for (pid_t pid : run_processes(RunMarks{{}, "JRUN_ID=" + r.run_id}))
        out += std::to_string(pid) + " ";
    for (pid_t pid : processes_marked("daemon-of-" + r.run_id)) out += std::to_string(pid) + " ";
    return out;
}

class HostileAgent : public DispatchRun,
                     public ::testing::WithParamInterface<std::tuple<const char*, const char*>> {};

// Every trick commits outside the allowed paths: the verdict must be FAIL whatever else it
// does, nothing it started may outlive the run by more than a second, and where the check
// can see the trick, it names it.
TEST_P(HostileAgent, NeitherEscapesNorPasses) {
    const std::string trick = std::get<0>(GetParam());
    const std::string sandbox = std::get<1>(GetParam());
    const fs::path origin = dir_ / "origin.git";
    sh_ok("git init -q --bare " + quote(origin.string()), dir_.path());
    json config = {{"sandbox", sandbox},
                   {"grace", "300ms"},
                   {"timeout", trick == "ignore-term" ? "1s" : "120s"},
                   {"check", {{"allowed_paths", {"src/**"}}}},
                   {"agents",
                    {{"hostile",
                      {{"command", agent_path("hostile-agent.sh")},
                       {"env", {"AGENT_TRICK", "AGENT_OUTPUT_MB"}}}}}}};
    // 1 GiB and more in the campaign, against the default cap; a smaller cap here.
    std::string env = "AGENT_TRICK=" + trick + " AGENT_OUTPUT_MB=" + (campaign() ? "1100" : "64");
    if (!campaign()) config["output_cap"] = "16MiB";
    configure(config);
    sh_ok("git remote add origin " + quote(origin.string()) + " && git push -q origin main", repo_);
    const std::string base = sh_ok("git rev-parse main", repo_);

    Shell run = dispatch("run 1", env + " ");
    const auto& r = only_run();
    EXPECT_TRUE(wait_until([&] { return survivors(r).empty(); }, 1s))
        << trick << " left: " << survivors(r);
    ASSERT_TRUE(fs::exists(r.folder / "check.json")) << run.err;
    auto verdict = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(verdict["verdict"], "FAIL") << verdict.dump(2);
    std::map<std::string, json> checks;
    for (const auto& c : verdict["checks"]) checks[c["id"]] = c;
    const auto reason_of = [&](const char* id) {
        return checks[id]["reason"].is_string() ? checks[id]["reason"].get<std::string>() : "";
    };
    if (trick == "rewrite-config") {
        // The rules it was dispatched under still hold.
        EXPECT_EQ(checks["scope"]["result"], "fail") << verdict.dump(2);
    } else if (trick == "amend-base") {
        EXPECT_EQ(checks["base"]["result"], "fail");
        EXPECT_NE(reason_of("base").find("does not contain the base"), std::string::npos);
    } else if (trick == "move-main") {
        // The refs it moved are its own repository's: the main repository's main and
        // origin/main stand where they stood, and the base is judged from them.
        EXPECT_EQ(sh_ok("git rev-parse main", repo_), base);
        EXPECT_EQ(sh_ok("git rev-parse origin/main", repo_), base);
        EXPECT_EQ(checks["base"]["result"], "pass") << checks["base"].dump();
    } else if (trick == "force-push") {
        // Where the push got through (no sandbox), the moved remote-tracking ref is named.
        const std::string now =
            sh_ok("git --git-dir " + quote(origin.string()) + " rev-parse main", dir_.path());
        if (now != base) {
            EXPECT_EQ(checks["base"]["result"], "fail");
            EXPECT_NE(reason_of("base").find("origin/main was rewritten during the run"),
                      std::string::npos)
                << checks["base"].dump();
        }
    } else if (trick == "ignore-term") {
        EXPECT_EQ(r.reason, run::StopReason::timeout);
    } else if (trick == "flood") {
        EXPECT_EQ(r.reason, run::StopReason::output_cap);
        std::error_code ec;
        EXPECT_LT(fs::file_size(r.folder / "agent-stdout.txt", ec),
                  campaign() ? std::uintmax_t{1} << 30 : std::uintmax_t{16} << 20);
    } else if (trick == "closed-stdout" || trick == "delete-git") {
        EXPECT_EQ(r.status, run::RunStatus::completed) << r.error_summary;
    }
    EXPECT_EQ(checks["scope"]["result"], "fail") << verdict.dump(2);
    // cocode-check --run later judges the same way.
    Shell again =
        sh(quote(tool_path("cocode-check").string()) + " --run " + r.run_id + " --json", repo_);
    EXPECT_EQ(json::parse(again.out)["verdict"], "FAIL") << again.out << again.err;
    if (trick == "delete-git") {
        // What is left of its worktree is only files now: clean takes them away.
        Shell clean = dispatch("clean 1 --force");
        EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
        EXPECT_FALSE(fs::exists(r.worktree)) << clean.out;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Tricks, HostileAgent,
    ::testing::Combine(::testing::Values("rewrite-config", "amend-base", "move-main", "force-push",
                                         "ignore-term", "double-fork", "env-daemon", "fork-storm",
                                         "flood", "closed-stdout", "delete-git"),
                       ::testing::Values("auto", "none")),
    [](const auto& param_info) {
        std::string name = std::string(std::get<0>(param_info.param)) + "_sandbox_" +
                           std::get<1>(param_info.param);
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    });

// kill -9 of the dispatcher at random points of a ten-run batch. After each: `status` tells
// every run's truth, nothing of the batch is alive, every run folder reads, every worktree is
// a run's, and `--resume` finishes the batch.
class Kill9 : public DispatchRun {};

TEST_F(Kill9, AtRandomPointsOfABatchLosesNothing) {
    for (int n = 7; n <= 10; ++n) {
        json issue = {{"number", n},
                      {"title", "Issue " + std::to_string(n)},
                      {"body", "Do thing " + std::to_string(n) + ".\n"},
                      {"state", "open"}};
        write_text(repo_ / ".cocode/issues" / (std::to_string(n) + ".json"), issue.dump());
    }
    configure(
        {{"grace", "300ms"}, {"agents", {{"seed", {{"command", agent_path("seed-agent.py")}}}}}});
    const fs::path pristine = repo_;
    const std::string batch = "run 1 2 3 4 5 6 7 8 9 10 --concurrency 3";

    // How long a whole batch takes here: kill points are drawn from it.
    const auto began = Clock::now();
    Shell whole = dispatch(batch);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const auto length = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);

    const int points = at_scale(3, 50);
    const unsigned seed = std::random_device{}();
    std::mt19937 random(seed);
    std::uniform_int_distribution<long> at(0, length.count());
    int killed = 0;
    for (int point = 0; point < points; ++point) {
        repo_ = dir_ / ("repo-" + std::to_string(point));
        sh_ok("git clone -q " + quote(pristine.string()) + " " + quote(repo_.string()) + " && cd " +
                  quote(repo_.string()) +
                  " && git config user.name 'cocode agent' && git config user.email "
                  "agent@cocode.invalid",
              dir_.path());
        const long delay = at(random);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", point " + std::to_string(point) +
                     ": kill -9 after " + std::to_string(delay) + " ms");
        Shell started = sh("(exec " + quote(tool_path("cocode-dispatch").string()) + " " + batch +
                               " > /dev/null 2>&1) & echo $!",
                           repo_);
        const pid_t dispatcher = static_cast<pid_t>(std::stol(started.out));
        std::this_thread::sleep_for(std::chrono::milliseconds(delay));  // the random point
        if (::kill(dispatcher, SIGKILL) == 0) ++killed;
        ASSERT_TRUE(wait_until([&] { return !run::process_alive(dispatcher); }));

        Shell status = dispatch("status --json");
        ASSERT_EQ(status.exit_code, 0) << status.err;
        const auto listed = run::list_runs(repo_ / ".cocode/runs");
        EXPECT_EQ(listed.problems, std::vector<std::string>{});
        std::set<fs::path> worktrees;
        for (const auto& r : listed.runs) {
            EXPECT_FALSE(run::is_active(r.status)) << r.run_id;
            EXPECT_TRUE(wait_until([&] { return survivors(r).empty(); }, 1300ms))
                << r.run_id << " left: " << survivors(r);
            worktrees.insert(r.worktree);
        }
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(repo_ / ".cocode/worktrees", ec))
            EXPECT_TRUE(worktrees.count(entry.path())) << "stray worktree " << entry.path();

        Shell resumed = dispatch(batch + " --resume");
        EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
        std::map<long, run::RunRecord> latest;  // oldest first: the last one counts
        for (const auto& r : run::list_runs(repo_ / ".cocode/runs").runs) latest[r.issue] = r;
        EXPECT_EQ(latest.size(), 10u);
        for (const auto& [issue, r] : latest) {
            EXPECT_EQ(r.status, run::RunStatus::completed) << "issue " << issue;
            EXPECT_FALSE(r.ready_commit.empty()) << "issue " << issue;
        }
    }
    RecordProperty("kills", killed);
    EXPECT_GE(killed, points / 2) << "most points must fall inside the batch";
}

// Pids recycled on purpose (ns_last_pid, in a PID namespace of the test's own): after kill -9
// of a run's dispatcher and agent, strangers get their pids, the agent's as their process
// group too. `status` finds the run's dispatcher gone and ends what is left of it: none of
// the strangers may be signalled, and the run may not stay running.
class PidReuse : public DispatchRun {};

TEST_F(PidReuse, NoForeignProcessIsSignalled) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a PID namespace and ns_last_pid";
    configure(
        {{"sandbox", "none"},
         {"grace", "300ms"},
         {"agents",
          {{"sleeper", {{"command", agent_path("sleep-agent.sh")}, {"env", {"AGENT_SLEEP"}}}}}}});
    const int rounds = at_scale(3, 100);
    Shell shell =
        sh("unshare -pf --mount-proc " +
               quote(std::string(COCODE_SOURCE_DIR) + "/tests/e2e/recycle-pids.sh") + " " +
               quote(tool_path("cocode-dispatch").string()) + " " + std::to_string(rounds),
           repo_);
    ASSERT_EQ(shell.exit_code, 0) << shell.out << shell.err;
    int seen = 0, recycled = 0, signalled = 0;
    std::istringstream lines(shell.out);
    for (std::string line; std::getline(lines, line);) {
        int round = 0, r = 0, s = 0, running = 0;
        ASSERT_EQ(std::sscanf(line.c_str(), "round %d recycled %d signalled %d running %d", &round,
                              &r, &s, &running),
                  4)
            << line;
        ++seen;
        recycled += r;
        signalled += s;
        EXPECT_EQ(running, 0) << line;
    }
    EXPECT_EQ(seen, rounds) << shell.err;
    RecordProperty("recycled", recycled);
    EXPECT_GE(recycled, rounds) << "most pids must have gone to a stranger";
    EXPECT_EQ(signalled, 0) << shell.out;
}

// The disk fills at every point of a run, in turn: a tmpfs of its own is filled until only N
// pages are free, for each N from none to what a whole run needs. Whatever failed, nothing
// is lost: once there is room again, `status` reads every run folder, no run stays running,
// and a run whose agent ran shows the exit code the agent really ended with.
class FullDisk : public DispatchRun {};

TEST_F(FullDisk, AtEveryWritePointNoFinalStateIsLost) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for a tmpfs of its own";
    const fs::path outside = dir_ / "outside";
    fs::create_directories(outside);
    // What a run needs here, in pages: every point below it fails somewhere else.
    const int pages = 160;
    std::vector<int> points;
    for (int free = 0; free <= pages; free += campaign() ? 1 : 20) points.push_back(free);
    int ran = 0, refused = 0, agent_failed = 0;
    for (int free : points) {
        SCOPED_TRACE(std::to_string(free) + " pages free");
        const fs::path disk = dir_ / ("disk-" + std::to_string(free));
        const fs::path exit_file = outside / std::to_string(free);
        fs::create_directories(disk);
        const std::string dispatch_tool = quote(tool_path("cocode-dispatch").string());
        const std::string script =
            "set -e; mount -t tmpfs -o size=4M tmpfs " + quote(disk.string()) + "; cd " +
            quote(disk.string()) +
            "; git init -q -b main repo; cd repo; git config user.name t; git config user.email "
            "t@example.invalid; echo hi > README.md; mkdir -p .cocode/issues; "
            "echo '{\"number\": 1, \"title\": \"t\", \"body\": \"b\", \"state\": "
            "\"open\"}' > .cocode/issues/1.json; echo '{\"sandbox\": \"none\", \"agents\": "
            "{\"noter\": {\"command\": \"" +
            agent_path("note-exit-agent.sh") +
            "\", \"env\": [\"AGENT_EXIT_FILE\"]}}}' > .cocode/config.json; git add -A; git "
            "commit -q -m base; "
            "avail=$(df --output=avail -B4096 . | tail -n 1); "
            "dd if=/dev/zero of=../ballast bs=4096 count=$((avail - " +
            std::to_string(free) +
            ")) 2> /dev/null || true; set +e; AGENT_EXIT_FILE=" + quote(exit_file.string()) + " " +
            dispatch_tool +
            " run 1 --no-check > run.out 2> run.err; echo \"exit $?\"; "
            "rm -f ../ballast; " +
            dispatch_tool + " status --json";
        Shell shell = sh("unshare -m --propagation private sh -c " + quote(script), dir_.path());
        const std::size_t json_start = shell.out.find('[');
        ASSERT_NE(json_start, std::string::npos) << shell.out << shell.err;
        const int dispatched = std::stoi(shell.out.substr(5));
        auto shown = json::parse(shell.out.substr(json_start));
        for (const auto& r : shown) EXPECT_NE(r["status"], "running") << r.dump();
        // The agent ran to its end: its run says how it ended, exactly.
        if (fs::exists(exit_file)) {
            ++ran;
            const int agent_exit = std::stoi(read_text(exit_file));
            agent_failed += agent_exit != 0;
            ASSERT_EQ(shown.size(), 1u) << shell.err;
            EXPECT_EQ(shown[0]["exit_code"], agent_exit) << shown.dump(2) << shell.err;
            EXPECT_EQ(shown[0]["status"], agent_exit == 0 ? "completed" : "failed")
                << shown.dump(2);
            EXPECT_NE(shown[0]["reason"], "crashed") << shown.dump(2);
        } else {
            // It never started: the dispatcher said why and failed.
            ++refused;
            EXPECT_NE(dispatched, 0) << shell.err;
            for (const auto& r : shown) EXPECT_EQ(r["status"], "failed") << r.dump();
        }
    }
    RecordProperty("ran", ran);
    RecordProperty("refused", refused);
    RecordProperty("agent_failed", agent_failed);
    EXPECT_GT(ran, 0);
    EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace cocode::test
