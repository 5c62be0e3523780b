#include "batch.h"

#include <chrono>

#include "agent/confined.h"
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

JudgeAsTheyEnd::JudgeAsTheyEnd(const std::vector<agent::PlannedRun>& runs, const AfterRun& after)
    : runs_(runs) {
    if (!after.check || runs.empty()) return;
    // <repo>/.cocode/runs/<id>: the repository the runs are of.
    const auto repo_root = runs.front().files.folder.parent_path().parent_path().parent_path();
    judges_ = std::make_unique<check::Judges>(
        *after.config, after.config->concurrency, after.publish ? after.source : nullptr,
        agent::confined_runner(*after.config, repo_root, std::nullopt, after.around),
        after.on_judged);
}

void JudgeAsTheyEnd::hand_in(const agent::PlannedRun& run) {
    auto info = run::read_run_info(run.files.folder);
    if (!info) return;
    auto record = run::record_from(*info, run.files.folder);
    // An interrupted run, or one whose agent never started, has nothing to judge: no verdict,
    // no error (check::not_judged_because).
    if (!check::not_judged_because(record).empty()) return;
    judges_->add(record);
}

void JudgeAsTheyEnd::attach(agent::SupervisorOptions& options) {
    if (!judges_) return;
    auto before = options.on_update;
    options.on_update = [this, before](const agent::RunUpdate& u) {
        if (before) before(u);
        if (u.kind == agent::UpdateKind::finished) hand_in(*u.run);
    };
}

std::vector<check::BatchCheck> JudgeAsTheyEnd::finish(const agent::BatchResult& batch) {
    if (!judges_) return {};
    if (!batch.interrupted)
        for (const auto& run : runs_)
            if (!judges_->has(run.run_id)) hand_in(run);
    return judges_->finish();
}

const check::BatchCheck* check_of(const std::vector<check::BatchCheck>& checks,
                                  const std::string& run_id) {
    for (const auto& c : checks)
        if (c.run_id == run_id) return &c;
    return nullptr;
}

std::string check_line(const check::BatchCheck& c) {
    if (!c.verdict) return c.interrupted ? c.error : "check: " + c.error;
    std::string line = std::string(c.verdict->pass ? "PASS" : "FAIL") + "  " +
                       (c.verdict->report_dir / check::kCheckMarkdown).string();
    if (!c.verdict->pass)
        if (const std::string why = check::first_failure(*c.verdict); !why.empty())
            line += "  " + why;
    if (!c.comment_url.empty()) line += "  " + c.comment_url;
    if (!c.error.empty()) line += "  (" + c.error + ")";
    // A plan: how to approve it (docs/review.md, "Plans first").
    if (const std::string approve = check::approve_command(*c.verdict); !approve.empty())
        line += "  plan " + c.verdict->plan->hash + ": " + approve;
    return line;
}

}  // namespace cocode::dispatch_cli
