// What `run` and the detached supervisor (`supervise`, started by `run --detach`) share: the
// supervisor's options from the configuration, a run's line in a log, and the check after a
// batch.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/confined.h"
#include "agent/prepare.h"
#include "agent/supervisor.h"
#include "check/route.h"
#include "check/run_check.h"
#include "commands.h"
#include "config/config.h"
#include "issues/source.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

agent::SupervisorOptions supervisor_options(const config::Config& config);

// The workspace with `run`'s flags over its configuration, and the --timeout they name.
std::pair<Workspace, std::optional<config::Duration>> configured_workspace(const RunArgs& args);

// `run`'s batch from the issues chosen on: plan the pairs (with `round`, each pair's next
// round; with `round_of_agent`, that agent's own round), supervise them in the live view,
// judge and publish, print; the batch's exit code. `routed`: the agents each issue gets, when
// routing by evidence chose them (routing.h).
int run_pairs(const RunArgs& args, const Workspace& ws, std::optional<config::Duration> timeout,
              issues::IssueSource* source, const std::vector<github::Issue>& issues,
              const std::vector<config::AgentConfig>& agents,
              std::optional<agent::RoundRequest> round,
              std::map<std::string, agent::RoundRequest> round_of_agent,
              const std::map<long, check::Routed>& routed = {});

// "12:00:01  <run id>  #7 claude  <what>"
std::string run_line(const agent::PlannedRun& run, const std::string& what);

// The check (docs/check.md): every run that ended is judged, as it ends, and its verdict
// published when asked. Nothing not judged yet after an interrupt: the user wants to stop.
struct AfterRun {
    bool check = true;
    bool publish = false;
    const config::Config* config = nullptr;
    issues::IssueSource* source = nullptr;
    std::function<void(const check::BatchCheck&)> on_judged;  // from the judging threads
    // What the verify commands must not see either (a replay's main repository: run --hide),
    // and what of it they read (the replay's hidden tests, beside its repository).
    agent::Surroundings around;
};

// The check of a batch's runs, each as soon as it ends (up to `concurrency` at once, its
// verdict published then when asked): a fast agent's verdict does not wait for the slowest.
// After an interrupt no run not judged yet is judged.
class JudgeAsTheyEnd {
  public:
    // `after.on_judged` is taken now: set it first.
    JudgeAsTheyEnd(const std::vector<agent::PlannedRun>& runs, const AfterRun& after);
    // Chains onto the options' on_update: a run that has finished is handed to the judges.
    void attach(agent::SupervisorOptions& options);
    // Once the batch is over: every run not handed in yet is (none after an interrupt), then
    // the checks of all that were, when each is judged.
    std::vector<check::BatchCheck> finish(const agent::BatchResult& batch);

  private:
    void hand_in(const agent::PlannedRun& run);
    const std::vector<agent::PlannedRun>& runs_;
    std::unique_ptr<check::Judges> judges_;  // none without a check
};
const check::BatchCheck* check_of(const std::vector<check::BatchCheck>& checks,
                                  const std::string& run_id);
// "PASS  <report>  <comment url>", or why there is no verdict.
std::string check_line(const check::BatchCheck& c);

}  // namespace cocode::dispatch_cli
