#include "check/spend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "check/run_check.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"

namespace cocode::check {

namespace {

using Clock = std::chrono::system_clock;

// When a run started: run-info's start_time, else the time in its id (YYYYMMDD-HHMMSSmmm).
std::optional<Clock::time_point> started_at(const run::RunRecord& r) {
    if (auto t = parse_utc_timestamp(r.start_time)) return t;
    const std::string& id = r.run_id;
    if (id.size() < 18 || id[8] != '-') return std::nullopt;
    return parse_utc_timestamp(id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) +
                               "T" + id.substr(9, 2) + ":" + id.substr(11, 2) + ":" +
                               id.substr(13, 2) + "Z");
}

// Seconds from the run's start to its first READY event.
std::optional<double> seconds_to_ready(const run::RunRecord& r) {
    if (r.ready_commit.empty()) return std::nullopt;
    auto start = parse_utc_timestamp(r.start_time);
    if (!start) return std::nullopt;
    auto events = read_file(run::RunFiles{r.folder}.events(), std::size_t{16} << 20);
    if (!events) return std::nullopt;
    const auto ready = first_json_line(*events, "\"READY\"", [](const nlohmann::json& e) {
        return json_value(e, "type", "") == "READY" &&
               parse_utc_timestamp(json_value(e, "time", "")).has_value();
    });
    if (!ready) return std::nullopt;
    return std::chrono::duration<double>(*parse_utc_timestamp(json_value(*ready, "time", "")) -
                                         *start)
        .count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Tally {
    ReportRow row;
    std::vector<double> ready;
};

void count(Tally& t, const run::RunRecord& r) {
    ReportRow& row = t.row;
    ++row.runs;
    if (run::is_active(r.status)) {
        ++row.running;
        return;
    }
    if (auto verdict = recorded_verdict(r.folder)) {
        ++row.judged;
        row.passed += verdict->pass;
    }
    if (auto end = run::read_run_end(run::RunFiles{r.folder}); end && end->usage) {
        row.tokens += end->usage->tokens;
        if (end->usage->cost_usd)
            row.cost_usd += *end->usage->cost_usd;
        else if (!end->usage->tokens.empty())
            ++row.unpriced;
    }
    if (auto seconds = seconds_to_ready(r)) t.ready.push_back(*seconds);
}

void settle(Tally& t) {
    if (!t.ready.empty()) t.row.median_ready_seconds = median(t.ready);
}

}  // namespace

std::optional<RateInterval> wilson_interval(int successes, int trials) {
    if (trials <= 0 || successes < 0 || successes > trials) return std::nullopt;
    constexpr double z = 1.959963984540054;  // the normal quantile of 97.5 %: 95 % two-sided
    const double n = trials, p = successes / n, z2 = z * z;
    const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
    const double margin = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return RateInterval{std::max(0.0, center - margin), std::min(1.0, center + margin)};
}

std::optional<double> ReportRow::pass_rate() const {
    if (judged == 0) return std::nullopt;
    return static_cast<double>(passed) / judged;
}

std::optional<double> ReportRow::cost_per_pass() const {
    if (passed == 0 || unpriced > 0) return std::nullopt;
    return cost_usd / passed;
}

SpendReport spend_report(const std::vector<run::RunRecord>& runs, ReportBy by,
                         Clock::time_point since) {
    std::map<std::string, Tally> tallies;
    std::map<long, std::string> issue_keys;  // issues in number order
    Tally total;
    total.row.key = "total";
    for (const auto& r : runs) {
        auto started = started_at(r);
        if (!started || *started < since) continue;
        std::string key;
        switch (by) {
            case ReportBy::agent:
                key = r.agent;
                break;
            case ReportBy::issue:
                key = "#" + std::to_string(r.issue);
                issue_keys[r.issue] = key;
                break;
            case ReportBy::day:
                key = format_utc_timestamp(*started).substr(0, 10);
                break;
        }
        Tally& t = tallies[key];
        t.row.key = key;
        count(t, r);
        count(total, r);
    }
    SpendReport report;
    if (by == ReportBy::issue) {
        for (const auto& [number, key] : issue_keys) {
            settle(tallies[key]);
            report.rows.push_back(tallies[key].row);
        }
    } else {
        for (auto& [key, t] : tallies) {
            settle(t);
            report.rows.push_back(t.row);
        }
    }
    settle(total);
    report.total = total.row;
    return report;
}

}  // namespace cocode::check
