// cocode-dispatch report: what the runs in this repository did and cost (check/spend.h), by
// agent, issue or day; --prices prints the shipped price table (docs/cost.md).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/usage.h"
#include "check/spend.h"
#include "commands.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "progress.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
using SystemClock = std::chrono::system_clock;

// --since: a number of days ("7d"), a duration ("12h"), or a day ("2026-11-20", UTC).
SystemClock::time_point since_of(const std::string& text) {
    const auto now = SystemClock::now();
    if (text.size() >= 2 && text.back() == 'd' && text.size() <= 6 &&
        text.find_first_not_of("0123456789") == text.size() - 1)
        return now - std::chrono::hours(24) * std::stoi(text.substr(0, text.size() - 1));
    if (text.size() == 10 && text[4] == '-' && text[7] == '-')
        if (auto day = parse_utc_timestamp(text + "T00:00:00Z")) return *day;
    if (auto duration = config::parse_duration(text)) return now - *duration;
    throw Failure(Error::usage("--since " + text +
                               ": expected a number of days (7d), a duration (12h) or a day "
                               "(2026-11-20)"));
}

std::string percent(const std::optional<double>& rate) {
    if (!rate) return "-";
    char text[16];
    std::snprintf(text, sizeof text, "%.0f%%", *rate * 100);
    return text;
}

// "83% (55-95)": the rate and its 95 % interval; "-" when nothing was judged.
std::string rate_text(const check::ReportRow& row) {
    const auto interval = row.pass_interval();
    if (!interval) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%s (%.0f-%.0f)", percent(row.pass_rate()).c_str(),
                  interval->low * 100, interval->high * 100);
    return text;
}

std::string seconds_text(const std::optional<double>& seconds) {
    if (!seconds) return "-";
    return format_elapsed(static_cast<long>(*seconds + 0.5));
}

json row_json(const check::ReportRow& row) {
    auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    return {{"key", row.key},
            {"runs", row.runs},
            {"judged", row.judged},
            {"passed", row.passed},
            {"running", row.running},
            {"pass_rate", number(row.pass_rate())},
            {"pass_rate_interval", row.pass_interval() ? json::array({row.pass_interval()->low,
                                                                      row.pass_interval()->high})
                                                       : json(nullptr)},
            {"tokens",
             {{"input", row.tokens.input},
              {"output", row.tokens.output},
              {"cached", row.tokens.cached}}},
            {"cost_usd", row.cost_usd},
            {"unpriced_runs", row.unpriced},
            {"cost_per_pass_usd", number(row.cost_per_pass())},
            {"median_seconds_to_ready", number(row.median_ready_seconds)}};
}

void print_row(const check::ReportRow& row) {
    const std::string tokens = run::format_tokens(row.tokens);
    std::string cost = run::format_cost(row.cost_usd);
    if (row.unpriced) cost += "+";  // runs whose cost is not known are left out
    std::printf("%s\n", terminal_safe_line([&] {
                            char line[512];
                            std::snprintf(line, sizeof line, "%-20s %5d %14s %-32s %10s %10s %8s",
                                          row.key.c_str(), row.runs, rate_text(row).c_str(),
                                          tokens.c_str(), cost.c_str(),
                                          run::format_cost(row.cost_per_pass()).c_str(),
                                          seconds_text(row.median_ready_seconds).c_str());
                            return std::string(line);
                        }())
                            .c_str());
}

int print_prices(bool as_json) {
    if (as_json) {
        json table = json::object();
        for (const auto& p : agent::price_table())
            table[std::string(p.model)] = {
                {"input", p.price.input}, {"output", p.price.output}, {"cached", p.price.cached}};
        const json out = {{"date", agent::kPriceTableDate}, {"prices", table}};
        std::cout << json_output(out, 2) << "\n";
        return 0;
    }
    std::printf(
        "USD per million tokens, as of %s; a model's name starting with one of these is "
        "priced by it (`pricing` in the config goes first)\n\n",
        agent::kPriceTableDate);
    std::printf("%-24s %8s %8s %8s\n", "MODEL", "INPUT", "CACHED", "OUTPUT");
    for (const auto& p : agent::price_table())
        std::printf("%-24s %8.3f %8.3f %8.3f\n", std::string(p.model).c_str(), p.price.input,
                    p.price.cached, p.price.output);
    return 0;
}

}  // namespace

int run_report(const ReportArgs& args) {
    if (args.prices) return print_prices(args.json);
    Workspace ws = open_workspace(false);
    const auto since = since_of(args.since);
    const check::ReportBy by = args.by == "issue" ? check::ReportBy::issue
                               : args.by == "day" ? check::ReportBy::day
                                                  : check::ReportBy::agent;
    const check::SpendReport report =
        check::spend_report(run::list_runs(ws.runs_dir()).runs, by, since);
    if (args.json) {
        json rows = json::array();
        for (const auto& row : report.rows) rows.push_back(row_json(row));
        const json out = {{"since", format_utc_timestamp(since)},
                          {"by", args.by},
                          {"rows", rows},
                          {"total", row_json(report.total)}};
        std::cout << json_output(out, 2) << "\n";
        return 0;
    }
    if (report.rows.empty()) {
        std::printf("no runs since %s\n", format_utc_timestamp(since).substr(0, 16).c_str());
        return 0;
    }
    std::printf("%-20s %5s %14s %-32s %10s %10s %8s\n",
                args.by == "agent"   ? "AGENT"
                : args.by == "issue" ? "ISSUE"
                                     : "DAY",
                "RUNS", "PASS (95%)", "TOKENS", "COST", "PER PASS", "READY IN");
    for (const auto& row : report.rows) print_row(row);
    print_row(report.total);
    if (report.total.unpriced)
        std::printf(
            "\n+ %d runs with tokens but no known cost (a subscription, or a model with "
            "no price) are not in COST\n",
            report.total.unpriced);
    return 0;
}

}  // namespace cocode::dispatch_cli
