#include "live.h"

#include <chrono>

#include "workspace.h"

namespace cocode::dispatch_cli {

namespace {

// The row of a run as the supervisor sees it.
std::string state_of(const agent::RunView& view, bool judged_after) {
    switch (view.state) {
        case agent::ViewState::queued:
            return "queued";
        case agent::ViewState::running:
        case agent::ViewState::stopping:
        case agent::ViewState::restarting:
            return view.ready_commit.empty() ? "running" : "READY";
        case agent::ViewState::completed:
        case agent::ViewState::failed:
            break;
    }
    // Ended: judged next (here, or by cocode-check in the action's next step).
    return judged_after || view.state == agent::ViewState::completed ? "judging" : "failed";
}

}  // namespace

LiveProgress::LiveProgress(const std::vector<agent::PlannedRun>& runs, const config::Config& config,
                           issues::IssueSource* source, bool publish, bool judged_after)
    : judged_after_(judged_after) {
    if (!publish || !source || !config.progress.enabled) return;
    check::ProgressPace pace;
    pace.interval = std::chrono::duration_cast<std::chrono::milliseconds>(config.progress.interval);
    for (const auto& run : runs) {
        if (run.failed) continue;
        issue_of_[run.run_id] = run.issue;
        check::ProgressRow row;
        row.agent = run.agent.name;
        row.state = "queued";
        row.logs_url = check::actions_logs_url();
        rows_[run.run_id] = row;
        if (!comments_.count(run.issue))
            comments_[run.issue] = std::make_unique<check::LiveComment>(
                *source, run.issue, pace, [](const std::string& line) { notice(line); }, run.route);
    }
    // The comment appears at once, every run queued.
    for (auto& [issue, comment] : comments_) {
        std::vector<check::ProgressRow> rows;
        for (const auto& [id, row] : rows_)
            if (issue_of_[id] == issue) rows.push_back(row);
        comment->set(rows, true);
    }
}

void LiveProgress::attach(agent::SupervisorOptions& options) {
    if (!active()) return;
    auto before = options.on_tick;
    options.on_tick = [this, before](const std::vector<agent::RunView>& views) {
        tick(views);
        if (before) before(views);
    };
}

void LiveProgress::tick(const std::vector<agent::RunView>& views) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<long, bool> changed;
    for (const auto& view : views) {
        auto at = rows_.find(view.run->run_id);
        if (at == rows_.end()) continue;
        check::ProgressRow row = at->second;
        const std::string state = state_of(view, judged_after_);
        changed[view.run->issue] = changed[view.run->issue] || state != row.state;
        row.state = state;
        if (view.started != std::chrono::steady_clock::time_point{}) {
            const auto until = view.ended != std::chrono::steady_clock::time_point{}
                                   ? view.ended
                                   : std::chrono::steady_clock::now();
            row.seconds = static_cast<long>(
                std::chrono::duration_cast<std::chrono::seconds>(until - view.started).count());
        }
        row.commits = view.commits;
        if (view.usage) {
            row.tokens = view.usage->tokens.total();
            row.cost_usd = view.usage->cost_usd;
        }
        at->second = row;
    }
    for (auto& [issue, comment] : comments_) {
        std::vector<check::ProgressRow> rows;
        for (const auto& [id, row] : rows_)
            if (issue_of_[id] == issue) rows.push_back(row);
        comment->set(rows, changed[issue]);
    }
}

void LiveProgress::judged(const check::BatchCheck& c) {
    if (!active() || !c.verdict) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto at = rows_.find(c.run_id);
    if (at == rows_.end()) return;
    check::ProgressRow row = check::row_of(*c.verdict, c.pr_url);
    row.logs_url = at->second.logs_url;
    at->second = row;
    const long issue = issue_of_[c.run_id];
    std::vector<check::ProgressRow> rows;
    for (const auto& [id, r] : rows_)
        if (issue_of_[id] == issue) rows.push_back(r);
    comments_[issue]->set(rows, true);
}

void LiveProgress::finish(const std::vector<check::BatchCheck>& checks) {
    if (!active()) return;
    std::map<long, std::vector<check::Verdict>> verdicts;
    for (const auto& c : checks) {
        auto at = rows_.find(c.run_id);
        if (at == rows_.end()) continue;
        if (!c.verdict) {
            at->second.state = "failed";
            continue;
        }
        verdicts[issue_of_[c.run_id]].push_back(*c.verdict);
        check::ProgressRow row = check::row_of(*c.verdict, c.pr_url);
        row.logs_url = at->second.logs_url;
        at->second = row;
    }
    for (auto& [issue, comment] : comments_) {
        std::vector<check::ProgressRow> rows;
        for (const auto& [id, row] : rows_)
            if (issue_of_[id] == issue) rows.push_back(row);
        auto done = comment->finish(rows, check::rank(verdicts[issue]));
        if (!done)
            notice("live comment on #" + std::to_string(issue) + ": " + done.error().message);
    }
}

}  // namespace cocode::dispatch_cli
