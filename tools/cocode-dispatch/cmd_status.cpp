// cocode-dispatch status: every run, the truth about it, once or as it changes.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent/usage.h"
#include "check/run_check.h"
#include "commands.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "git/repository.h"
#include "progress.h"
#include "run/checking.h"
#include "views.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;

std::optional<long> parse_time(const std::string& stamp) {
    auto time = parse_utc_timestamp(stamp);
    if (!time) return std::nullopt;
    return static_cast<long>(std::chrono::system_clock::to_time_t(*time));
}

std::string elapsed(const run::RunRecord& r) {
    auto start = parse_time(r.start_time);
    if (!start) return "-";
    auto end = parse_time(r.end_time);
    long now = static_cast<long>(std::time(nullptr));
    return format_elapsed((end ? *end : now) - *start);
}

// PASS or FAIL once cocode-check has judged the run, "interrupted" when its check was
// stopped; empty before.
std::string verdict_of(const run::RunRecord& r) {
    auto verdict = check::recorded_verdict(r.folder);
    if (!verdict)
        return !run::is_active(r.status) && run::check_interrupted(r.folder) ? "interrupted"
                                                                             : std::string();
    return verdict->pass ? "PASS" : "FAIL";
}

// <root>/.cocode/runs/<run id> -> <root>
std::filesystem::path root_of(const run::RunRecord& r) {
    return r.folder.parent_path().parent_path().parent_path();
}

// The step of its check under way, once its agent has ended and while a check runs.
std::optional<run::Checking> checking_of(const run::RunRecord& r) {
    if (run::is_active(r.status)) return std::nullopt;
    return run::checking_now(root_of(r), r.run_id);
}

// "checking (verify: tests, 12s of 10m)"
std::string checking_text(const run::Checking& step) {
    std::string text = "checking (" + step.step;
    if (auto since = parse_time(step.step_started)) {
        text += ", " + format_elapsed(static_cast<long>(std::time(nullptr)) - *since);
        if (step.timeout)
            text += " of " + config::format_duration(
                                 std::chrono::duration_cast<config::Duration>(*step.timeout));
    }
    return text + ")";
}

// `repo` is the workspace's repository, opened once per listing (null when it cannot be).
std::optional<int> commits_since_base(const git::Repository* repo, const run::RunRecord& r) {
    if (!repo || r.base_commit.empty() || !repo->branch_exists(r.branch)) return std::nullopt;
    auto commits = repo->commits_between(r.base_commit, "refs/heads/" + r.branch);
    if (!commits) return std::nullopt;
    return static_cast<int>(commits->size());
}

std::string state_of(const run::RunRecord& r) {
    if (auto step = checking_of(r)) return checking_text(*step);
    const std::string status(run::status_name(r.status));
    return r.reason_text.empty() ? status : status + " (" + r.reason_text + ")";
}

std::string line_of(const git::Repository* repo, const run::RunRecord& r,
                    const run::RunUsage& usage) {
    auto commits = commits_since_base(repo, r);
    // A plan round that planned shows PLAN: there is a plan to approve, not code that passed.
    const std::string verdict =
        r.plan_round && verdict_of(r) == "PASS" ? std::string("PLAN") : verdict_of(r);
    // A round on the pull request beyond the first is shown beside its agent: "claude r2".
    const std::string agent = r.round > 1 ? r.agent + " r" + std::to_string(r.round) : r.agent;
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-28s #%-5ld %-12s %-30s %8s %7s %-12s %4s %7s %8s  %s",
                  r.run_id.c_str(), r.issue, agent.c_str(), state_of(r).c_str(), elapsed(r).c_str(),
                  commits ? std::to_string(*commits).c_str() : "-",
                  r.ready_commit.empty() ? "-" : r.ready_commit.substr(0, 12).c_str(),
                  r.exit_code ? std::to_string(*r.exit_code).c_str() : "-",
                  run::tokens_cell(usage).c_str(), run::cost_cell(usage).c_str(),
                  verdict.empty() ? "-" : verdict.c_str());
    // run-info is in a folder the agent can write to: shown, never interpreted.
    return terminal_safe_line(buf);
}

bool finished(const run::RunRecord& r) { return !run::is_active(r.status) && !checking_of(r); }

}  // namespace

json run_row(const git::Repository* repo, const run::RunRecord& r, const run::RunUsage& usage) {
    auto commits = commits_since_base(repo, r);
    const std::string verdict = verdict_of(r);
    json checking = nullptr;
    if (auto step = checking_of(r)) {
        checking = {{"step", step->step}, {"step_started", step->step_started}};
        checking["timeout_ms"] = step->timeout ? json(step->timeout->count()) : json(nullptr);
    }
    return {{"run_id", r.run_id},
            {"issue", r.issue},
            {"agent", r.agent},
            {"round", r.round},
            {"round_trigger", r.round_trigger.empty() ? json(nullptr) : json(r.round_trigger)},
            {"status", run::status_name(r.status)},
            {"reason", r.reason_text},
            {"start_time", r.start_time},
            {"end_time", r.end_time},
            {"elapsed", elapsed(r)},
            {"commits", commits ? json(*commits) : json(nullptr)},
            {"ready_commit", r.ready_commit.empty() ? json(nullptr) : json(r.ready_commit)},
            {"issue_title", r.issue_title},
            {"round_from", r.round_from},
            {"plan_round", r.plan_round},
            {"parent_run_id", r.parent_run_id},
            {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
            {"restarts", r.restarts},
            {"verdict", verdict.empty() ? json(nullptr) : json(verdict)},
            {"checking", checking},
            {"tokens",
             {{"input", usage.tokens.input},
              {"output", usage.tokens.output},
              {"cached", usage.tokens.cached}}},
            {"cost_usd", usage.cost_usd ? json(*usage.cost_usd) : json(nullptr)},
            {"cost_source", usage.cost_source},
            {"models", run::usage_json(usage)["models"]},
            {"branch", r.branch},
            {"worktree", r.worktree.string()},
            {"run_folder", r.folder.string()},
            {"error_summary", r.error_summary}};
}

int run_status(const StatusArgs& args) {
    Workspace ws = open_workspace(false);
    auto usage_of = [&](const run::RunRecord& r) {
        return agent::usage_of_run(r.folder, ws.config.pricing);
    };
    auto opened = git::Repository::open(ws.root);
    const git::Repository* repo = opened ? &*opened : nullptr;
    if (!args.watch) {
        auto runs = select_runs(ws, args.which, RunScope::with_replays);
        if (args.json) {
            json out = json::array();
            for (const auto& r : runs) out.push_back(run_row(repo, r, usage_of(r)));
            std::cout << json_output(out, 2) << "\n";
            return 0;
        }
        if (runs.empty()) {
            std::printf("no runs in %s\n", ws.runs_dir().c_str());
            return 0;
        }
        std::printf("%-28s %-6s %-12s %-30s %8s %7s %-12s %4s %7s %8s  %s\n", "RUN", "ISSUE",
                    "AGENT", "STATE", "ELAPSED", "COMMITS", "READY", "EXIT", "TOKENS", "COST",
                    "VERDICT");
        for (const auto& r : runs) std::printf("%s\n", line_of(repo, r, usage_of(r)).c_str());
        return 0;
    }
    // --watch: until every run shown has finished (or Ctrl-C).
    Progress progress(stdout);
    std::map<std::string, std::string> shown;
    while (true) {
        auto runs = select_runs(ws, args.which, RunScope::with_replays);
        for (const auto& r : runs) {
            const run::RunUsage usage = usage_of(r);
            std::string line =
                args.json ? json_dump(run_row(repo, r, usage)) : line_of(repo, r, usage);
            // Without a terminal, print a run again only when its state changed.
            std::string key = progress.in_place() ? line : state_of(r) + r.ready_commit;
            if (shown[r.run_id] == key) continue;
            shown[r.run_id] = key;
            progress.set(r.run_id, line, std::string(run::status_name(r.status)));
        }
        if (std::all_of(runs.begin(), runs.end(), finished)) return 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(progress.in_place() ? 1000 : 250));
    }
}

}  // namespace cocode::dispatch_cli
