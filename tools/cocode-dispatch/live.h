// The live comment of each issue of a batch (check/progress.h): fed by the supervisor's views
// as the runs go on, then by the verdicts as they come; `run` and the detached supervisor
// both use it. Only when the batch publishes and `progress` is on.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/supervisor.h"
#include "check/progress.h"
#include "check/run_check.h"
#include "config/config.h"
#include "issues/source.h"

namespace cocode::dispatch_cli {

class LiveProgress {
  public:
    // Nothing is written unless `publish`, a source and the configuration's `progress` say so.
    LiveProgress(const std::vector<agent::PlannedRun>& runs, const config::Config& config,
                 issues::IssueSource* source, bool publish, bool judged_after);
    bool active() const { return !comments_.empty(); }
    // Chains onto the options' on_tick: every view of the runs reaches the comments.
    void attach(agent::SupervisorOptions& options);
    void judged(const check::BatchCheck& check);
    // The final edit of each issue's comment, read back until it holds its rows.
    void finish(const std::vector<check::BatchCheck>& checks);

  private:
    void tick(const std::vector<agent::RunView>& views);

    bool judged_after_ = false;
    std::mutex mutex_;
    std::map<long, std::unique_ptr<check::LiveComment>> comments_;
    std::map<std::string, long> issue_of_;            // run id → issue
    std::map<std::string, check::ProgressRow> rows_;  // run id → its row now
};

}  // namespace cocode::dispatch_cli
