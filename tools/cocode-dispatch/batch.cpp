#include "batch.h"

#include <chrono>

#include "agent/setup_runner.h"
#include "check/report.h"
#include "core/run_id.h"

namespace cocode::dispatch_cli {

agent::SupervisorOptions supervisor_options(const config::Config& config) {
    agent::SupervisorOptions options;
    options.concurrency = config.concurrency;
    options.grace = config.grace;
    options.ready_quiet = config.ready_quiet;
    options.restart_backoff = config.restart_backoff;
    options.pricing = config.pricing;
    return options;
}

std::string run_line(const agent::PlannedRun& run, const std::string& what) {
    return format_utc_timestamp(std::chrono::system_clock::now()).substr(11, 8) + "  " +
           run.run_id + "  #" + std::to_string(run.issue) + " " + run.agent.name + "  " + what;
}

std::vector<check::BatchCheck> check_after(const std::vector<agent::PlannedRun>& runs,
                                           const agent::BatchResult& batch, const AfterRun& after) {
    if (!agent::judged_after(batch, after.check)) return {};
    std::vector<run::RunRecord> records;
    for (const auto& run : runs) {
        auto info = run::read_run_info(run.files.folder);
        if (info) records.push_back(run::record_from(*info, run.files.folder));
    }
    if (records.empty()) return {};
    // <repo>/.cocode/runs/<id>: the repository the runs are of.
    const auto repo_root = records.front().folder.parent_path().parent_path().parent_path();
    return check::check_batch(records, *after.config, after.config->concurrency,
                              after.publish ? after.source : nullptr,
                              agent::setup_runner(*after.config, repo_root), after.on_judged);
}

const check::BatchCheck* check_of(const std::vector<check::BatchCheck>& checks,
                                  const std::string& run_id) {
    for (const auto& c : checks)
        if (c.run_id == run_id) return &c;
    return nullptr;
}

std::string check_line(const check::BatchCheck& c) {
    if (!c.verdict) return "check: " + c.error;
    std::string line = std::string(c.verdict->pass ? "PASS" : "FAIL") + "  " +
                       (c.verdict->report_dir / check::kCheckMarkdown).string();
    if (!c.comment_url.empty()) line += "  " + c.comment_url;
    if (!c.error.empty()) line += "  (" + c.error + ")";
    // A plan: how to approve it (docs/review.md, "Plans first").
    if (const std::string approve = check::approve_command(*c.verdict); !approve.empty())
        line += "  plan " + c.verdict->plan->hash + ": " + approve;
    return line;
}

}  // namespace cocode::dispatch_cli
