// The supervisor reads its deadlines from an injected clock: an hour's timeout and an hour's
// grace pass on events of the agent's (it has started, it got SIGTERM), with real processes
// and a real git repository, and no test waits an hour or a wall-clock second on purpose.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agent/prepare.h"
#include "agent/supervisor.h"
#include "config/config.h"
#include "run/run_folder.h"
#include "test_support.h"

namespace cocode {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::TempDir;

class SupervisorClock : public ::testing::Test {
  protected:
    void SetUp() override {
        repo_ = dir_ / "repo";
        test::make_repo(repo_);
        flags_ = dir_ / "flags";
        fs::create_directories(flags_);
    }

    // Plans one run of `script` (sh) for issue 1 with the given limits, as `run` would.
    std::vector<agent::PlannedRun> plan(const std::string& script, const std::string& limits,
                                        const std::string& agent_limits = "") {
        test::write_text(dir_ / "agent.sh", script);
        fs::permissions(dir_ / "agent.sh", fs::perms::owner_all);
        const std::string text = R"({"sandbox": "none", )" + limits + R"(, "agents": {"slow": {)" +
                                 agent_limits + R"("command": ")" + (dir_ / "agent.sh").string() +
                                 R"("}}})";
        config_ = config::parse_config(text, "config.json", repo_).value_or_throw();
        const auto& config = config_;
        agent::DispatchContext context;
        context.repo_root = repo_;
        context.config = config;
        context.project_id = "repo";
        github::Issue issue;
        issue.number = 1;
        issue.title = "slow";
        return agent::plan_runs(context, {issue}, config.agents).value_or_throw();
    }

    // The supervisor's options from the configuration, as `run` makes them, on `clock`.
    agent::SupervisorOptions options(std::function<Clock::time_point()> clock) const {
        agent::SupervisorOptions o;
        o.grace = config_.grace;
        o.clock = std::move(clock);
        return o;
    }

    TempDir dir_;
    config::Config config_;
    fs::path repo_, flags_;
    std::atomic<int> reads_{0};  // of the clock, by the supervisor
};

TEST_F(SupervisorClock, AnHourTimeoutAndAnHourGracePassOnTheAgentsEvents) {
    // Ignores SIGTERM, so only the end of the grace period (SIGKILL) ends it; never ends alone.
    const std::string flags = test::quote(flags_.string());
    auto runs = plan("#!/bin/sh\ntrap 'touch " + flags + "/term' TERM\necho working\ntouch " +
                         flags + "/started\nwhile :; do sleep 1; done\n",
                     R"("timeout": "1h", "grace": "1h")");
    ASSERT_EQ(runs.size(), 1u);
    // Two hours on once the agent has started, two more once it was asked to stop.
    auto batch = agent::supervise(runs, options([this] {
                                      auto offset = Clock::duration::zero();
                                      if (fs::exists(flags_ / "started")) offset += 2h;
                                      if (fs::exists(flags_ / "term")) offset += 2h;
                                      ++reads_;
                                      return Clock::now() + offset;
                                  }));
    ASSERT_TRUE(batch.ok()) << batch.error().message;
    ASSERT_EQ(batch->runs.size(), 1u);
    const auto& result = batch->runs[0];
    EXPECT_EQ(result.status, run::RunStatus::failed);
    EXPECT_EQ(result.reason, run::StopReason::timeout);
    EXPECT_EQ(result.exit_code, 124);
    EXPECT_TRUE(fs::exists(flags_ / "term"));  // SIGTERM came first, then the grace ran out
    EXPECT_GT(reads_.load(), 0);

    auto info = run::read_run_info(runs[0].files.folder);
    ASSERT_TRUE(info.ok()) << info.error().message;
    auto record = run::record_from(*info, runs[0].files.folder);
    EXPECT_EQ(record.status, run::RunStatus::failed);
    EXPECT_EQ(record.error_summary, "timed out after 1h");
}

TEST_F(SupervisorClock, AnHourOfSilenceIsAnIdleStop) {
    const std::string flags = test::quote(flags_.string());
    auto runs = plan("#!/bin/sh\necho hello\ntouch " + flags + "/started\nexec sleep 3600\n",
                     R"("timeout": "1000h", "grace": "1s")", R"("idle_timeout": "1h", )");
    ASSERT_EQ(runs.size(), 1u);
    // Once the agent is quiet, every reading of the clock is another two hours on (its one
    // line of output may be seen after the first jump).
    auto batch = agent::supervise(runs, options([this] {
                                      if (fs::exists(flags_ / "started")) ++reads_;
                                      return Clock::now() + 2h * reads_.load();
                                  }));
    ASSERT_TRUE(batch.ok()) << batch.error().message;
    EXPECT_EQ(batch->runs[0].reason, run::StopReason::idle);
    EXPECT_EQ(batch->runs[0].exit_code, 124);
}

}  // namespace
}  // namespace cocode
