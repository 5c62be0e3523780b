// `cocode-dispatch report`: what runs did and cost, from the run folders (docs/cost.md) — runs,
// PASS rate, tokens, cost, cost per PASS, the median time to READY — by agent, issue or day.
// The table a team chooses agents by.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "run/run_folder.h"
#include "run/usage.h"

namespace cocode::check {

enum class ReportBy { agent, issue, day };

// How sure a rate of `successes` in `trials` is: its 95 % Wilson score interval, which stays
// inside [0, 1] and is honest for few trials and for rates near 0 or 1 (10 PASS of 12 judged:
// 55 % to 95 %). nullopt without a trial.
struct RateInterval {
    double low = 0;
    double high = 0;
};
std::optional<RateInterval> wilson_interval(int successes, int trials);

struct ReportRow {
    std::string key;  // the agent, "#12", or "2026-11-25"
    int runs = 0;
    int judged = 0;  // with a verdict
    int passed = 0;
    int running = 0;  // not ended: counted, their usage not yet
    run::Tokens tokens;
    double cost_usd = 0;  // of the runs whose cost is known
    int unpriced = 0;     // ended runs with tokens but no known cost
    std::optional<double> median_ready_seconds;

    // PASS of those judged; nullopt when none was. With its 95 % interval.
    std::optional<double> pass_rate() const;
    std::optional<RateInterval> pass_interval() const { return wilson_interval(passed, judged); }
    // What each PASS cost: every run's cost over the PASSes; nullopt without a PASS or when a
    // run's cost is not known.
    std::optional<double> cost_per_pass() const;
};

struct SpendReport {
    std::vector<ReportRow> rows;  // by key: agents and days in order, issues by number
    ReportRow total;
};

// Runs started at or after `since` (their start_time; a run not started yet, by its id's time).
SpendReport spend_report(const std::vector<run::RunRecord>& runs, ReportBy by,
                         std::chrono::system_clock::time_point since);

}  // namespace cocode::check
