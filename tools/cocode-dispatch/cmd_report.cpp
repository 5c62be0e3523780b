// cocode-dispatch report: which agent to trust for which work (check/scorecard.h) — what the
// runs in this repository did and cost and what became of their pull requests, by agent,
// model, kind of work, issue or day; --refresh asks GitHub first (check/outcome.h); --prices
// prints the shipped price table (docs/cost.md).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/usage.h"
#include "check/chart.h"
#include "check/outcome.h"
#include "check/published.h"
#include "check/scorecard.h"
#include "commands.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "git/repository.h"
#include "issues/source.h"
#include "progress.h"
#include "replay/run.h"
#include "views.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using SystemClock = std::chrono::system_clock;

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

// "2/3": of `whole`, `part`; "-" when there is no whole.
std::string share_text(int part, int whole) {
    if (whole <= 0) return "-";
    return std::to_string(part) + "/" + std::to_string(whole);
}

json number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json row_json(const check::Scorecard& card, const check::ReportRow& row) {
    json keys = json::object();
    if (row.keys.size() == card.by.size())
        for (std::size_t i = 0; i < card.by.size(); ++i)
            keys[check::dimension_name(card.by[i])] = row.keys[i];
    const auto interval = row.pass_interval();
    return {{"key", row.key()},
            {"keys", keys},
            {"runs", row.runs},
            {"judged", row.judged},
            {"passed", row.passed},
            {"running", row.running},
            {"interrupted", row.interrupted},
            {"never_started", row.never_started},
            {"pass_rate", number(row.pass_rate())},
            {"pass_rate_interval",
             interval ? json::array({interval->low, interval->high}) : json(nullptr)},
            {"pull_requests", row.pulls},
            {"merged", row.merged},
            {"closed_unmerged", row.closed},
            {"merge_rate", number(row.merge_rate())},
            {"median_seconds_to_merge", number(row.median_merge_seconds)},
            {"reverted", row.reverted},
            {"revert_rate", number(row.revert_rate())},
            {"lines", {{"agent", row.lines_agent}, {"kept", row.lines_kept}}},
            {"lines_kept_rate", number(row.kept_rate())},
            {"tokens",
             {{"input", row.tokens.input},
              {"output", row.tokens.output},
              {"cached", row.tokens.cached}}},
            {"cost_usd", number(row.known_cost())},
            {"unpriced_runs", row.unpriced},
            {"cost_per_pass_usd", number(row.cost_per_pass())},
            {"cost_per_merge_usd", number(row.cost_per_merge())},
            {"median_seconds_to_ready", number(row.median_ready_seconds)}};
}

// A CSV cell: quoted when it must be; one that a spreadsheet would read as a formula (=, +,
// -, @ first) gets a leading apostrophe.
std::string csv_cell(const std::string& text) {
    std::string cell = text;
    if (!cell.empty() && std::string_view("=+-@").find(cell[0]) != std::string_view::npos &&
        !(cell[0] == '-' && cell.size() > 1 && std::isdigit(static_cast<unsigned char>(cell[1]))))
        cell = "'" + cell;
    if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
    std::string quoted = "\"";
    for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

std::string csv_number(const std::optional<double>& v) {
    if (!v) return "";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", *v);
    return text;
}

void print_csv(const check::Scorecard& card) {
    std::string header;
    for (auto d : card.by) header += std::string(check::dimension_name(d)) + ",";
    std::printf(
        "%sruns,judged,passed,pass_rate,pass_rate_low,pass_rate_high,pull_requests,merged,"
        "closed_unmerged,merge_rate,median_seconds_to_merge,reverted,revert_rate,lines_agent,"
        "lines_kept,lines_kept_rate,input_tokens,output_tokens,cached_tokens,cost_usd,"
        "unpriced_runs,cost_per_pass_usd,cost_per_merge_usd,median_seconds_to_ready,interrupted,"
        "never_started\n",
        header.c_str());
    auto line = [&](const check::ReportRow& row) {
        std::string out;
        for (std::size_t i = 0; i < card.by.size(); ++i)
            out += csv_cell(i < row.keys.size() ? row.keys[i] : row.keys.front()) + ",";
        const auto interval = row.pass_interval();
        for (const std::string& cell :
             std::vector<std::string>{std::to_string(row.runs),
                                      std::to_string(row.judged),
                                      std::to_string(row.passed),
                                      csv_number(row.pass_rate()),
                                      interval ? csv_number(interval->low) : "",
                                      interval ? csv_number(interval->high) : "",
                                      std::to_string(row.pulls),
                                      std::to_string(row.merged),
                                      std::to_string(row.closed),
                                      csv_number(row.merge_rate()),
                                      csv_number(row.median_merge_seconds),
                                      std::to_string(row.reverted),
                                      csv_number(row.revert_rate()),
                                      std::to_string(row.lines_agent),
                                      std::to_string(row.lines_kept),
                                      csv_number(row.kept_rate()),
                                      std::to_string(row.tokens.input),
                                      std::to_string(row.tokens.output),
                                      std::to_string(row.tokens.cached),
                                      csv_number(row.known_cost()),
                                      std::to_string(row.unpriced),
                                      csv_number(row.cost_per_pass()),
                                      csv_number(row.cost_per_merge()),
                                      csv_number(row.median_ready_seconds),
                                      std::to_string(row.interrupted),
                                      std::to_string(row.never_started)})
            out += cell + ",";
        out.back() = '\n';
        std::fputs(out.c_str(), stdout);
    };
    for (const auto& row : card.rows) line(row);
    line(card.total);
}

// The key columns' widths: the first at least 20 wide, the others as wide as their words.
std::vector<int> key_widths(const check::Scorecard& card) {
    std::vector<int> widths;
    for (std::size_t i = 0; i < card.by.size(); ++i) {
        int width = i == 0 ? 20 : static_cast<int>(std::strlen(check::dimension_name(card.by[i])));
        for (const auto& row : card.rows)
            if (i < row.keys.size()) width = std::max(width, static_cast<int>(row.keys[i].size()));
        widths.push_back(width);
    }
    return widths;
}

void print_row(const check::ReportRow& row, const std::vector<int>& widths) {
    std::string keys;
    for (std::size_t i = 0; i < widths.size(); ++i) {
        const std::string key = i < row.keys.size() ? row.keys[i] : "";
        keys += key +
                std::string(
                    static_cast<std::size_t>(std::max(0, widths[i] - static_cast<int>(key.size()))),
                    ' ') +
                " ";
    }
    const std::string tokens = run::format_tokens(row.tokens);
    std::string cost = run::format_cost(row.known_cost());
    if (row.unpriced) cost += "+";  // runs whose cost is not known are left out
    const auto kept = row.kept_rate();
    char line[640];
    std::snprintf(line, sizeof line, "%s%5d %14s %-32s %10s %10s %8s %6s %8s %8s %5s %10s",
                  keys.c_str(), row.runs, rate_text(row).c_str(), tokens.c_str(), cost.c_str(),
                  run::format_cost(row.cost_per_pass()).c_str(),
                  seconds_text(row.median_ready_seconds).c_str(),
                  share_text(row.merged, row.merged + row.closed).c_str(),
                  seconds_text(row.median_merge_seconds).c_str(),
                  share_text(row.reverted, row.merged).c_str(), percent(kept).c_str(),
                  run::format_cost(row.cost_per_merge()).c_str());
    std::string text = line;
    while (!text.empty() && text.back() == ' ') text.pop_back();
    std::printf("%s\n", terminal_safe_line(text).c_str());
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

std::unique_ptr<issues::IssueSource> github_source(const Workspace& ws, const ReportArgs& args) {
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    return issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
}

// --refresh: what became of the pull requests of the runs, asked of GitHub (check/outcome.h).
void refresh(const Workspace& ws, github::GitHub& github, const std::vector<run::RunRecord>& runs) {
    const auto done =
        check::refresh_outcomes(ws.root, runs, github, SystemClock::now()).value_or_throw();
    for (const auto& line : done.unknown) notice(line);
    notice("outcomes: " + std::to_string(done.asked) + " pull requests asked about, " +
           std::to_string(done.recorded) + " new or changed, " + std::to_string(done.settled) +
           " settled");
}

// The scorecard of `args` (the runs here, the replays, or those published on GitHub).
check::Scorecard scorecard_of(const Workspace& ws, const ReportArgs& args,
                              SystemClock::time_point since) {
    const auto by = check::dimensions_of(args.by).value_or_throw();
    std::vector<check::RunFacts> facts;
    if (args.published) {
        // The action's runs: their folders are gone with their runners; their verdicts are on
        // the issues (check/published.h). The comments updated since --since, read once: a
        // run's comment is updated after the run started, so no run since then is missed.
        if (args.runs == "replay")
            throw Failure(Error::usage("--published: replays are not published; --source live"));
        auto source = github_source(ws, args);
        github::GitHub& github = github_of(*source, "report --published");
        const auto found =
            check::published_since(github, format_utc_timestamp(since)).value_or_throw();
        const auto& published = found.runs;
        notice("published: " + std::to_string(published.summaries.size()) + " runs of " +
               std::to_string(found.comments) + " comments");
        if (args.refresh) refresh(ws, github, published.records);
        // A published run that is here too is counted as here, as routing counts it.
        const fs::path cache =
            args.source.options.no_cache ? fs::path() : ws.root / check::kScorecardCache;
        facts = check::run_facts(
            ws.root,
            check::evidence_runs(check::run_summaries(ws.root, ws.runs_dir(), cache),
                                 published.summaries, check::EvidenceRuns::published_only),
            since);
    } else if (args.refresh) {
        auto source = github_source(ws, args);
        refresh(ws, github_of(*source, "report --refresh"), run::list_runs(ws.runs_dir()).runs);
    }
    // What each run said, from the cache of ended runs' summaries (`--no-cache`: read all).
    auto facts_of = [&](const fs::path& repo) {
        const fs::path cache =
            args.source.options.no_cache ? fs::path() : repo / check::kScorecardCache;
        return check::run_facts(repo, check::run_summaries(repo, repo / run::kRunsDir, cache),
                                since);
    };
    if (!args.published && args.runs != "replay") facts = facts_of(ws.root);
    if (!args.published && args.runs != "live") {
        // Each replay's runs are in its own repository (replay/run.h).
        const auto common = git::Repository::open(ws.root).value_or_throw().common_dir();
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(replay::replay_runs_dir(common), ec)) {
            auto replayed = facts_of(entry.path() / "repo");
            facts.insert(facts.end(), replayed.begin(), replayed.end());
        }
    }
    return check::scorecard(facts, by);
}

}  // namespace

json report_json(const Workspace& ws, const ReportArgs& args) {
    const auto since = since_flag(args.since);
    const check::Scorecard card = scorecard_of(ws, args, since);
    json rows = json::array();
    for (const auto& row : card.rows) rows.push_back(row_json(card, row));
    return {{"since", format_utc_timestamp(since)},
            {"by", args.by},
            {"rows", rows},
            {"total", row_json(card, card.total)}};
}

int run_report(const ReportArgs& args) {
    if (args.prices) return print_prices(args.json);
    Workspace ws = open_workspace(false);
    const int formats = args.json + args.csv + args.markdown;
    if (formats > 1) throw Failure(Error::usage("report: one of --json, --csv or --markdown"));
    if (args.json && !args.svg) {
        std::cout << json_output(report_json(ws, args), 2) << "\n";
        return 0;
    }
    const auto since = since_flag(args.since);
    const auto by = check::dimensions_of(args.by).value_or_throw();
    const check::Scorecard card = scorecard_of(ws, args, since);
    if (args.svg)
        if (auto written = write_file_atomic(*args.svg, check::scorecard_svg(card)); !written)
            throw Failure(Error::general("--svg " + *args.svg + ": " + written.error().message));
    if (args.json) {
        std::cout << json_output(report_json(ws, args), 2) << "\n";
        return 0;
    }
    if (args.csv) {
        print_csv(card);
        return 0;
    }
    if (args.markdown) {
        std::cout << check::scorecard_markdown(card);
        return 0;
    }
    if (card.rows.empty()) {
        std::printf("no runs since %s\n", format_utc_timestamp(since).substr(0, 16).c_str());
        return 0;
    }
    check::ReportRow header;
    for (auto d : by) {
        std::string name = check::dimension_name(d);
        for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        header.keys.push_back(name);
    }
    const auto widths = key_widths(card);
    std::string keys;
    for (std::size_t i = 0; i < widths.size(); ++i)
        keys += header.keys[i] +
                std::string(static_cast<std::size_t>(widths[i]) - header.keys[i].size(), ' ') + " ";
    std::printf("%s%5s %14s %-32s %10s %10s %8s %6s %8s %8s %5s %10s\n", keys.c_str(), "RUNS",
                "PASS (95%)", "TOKENS", "COST", "PER PASS", "READY IN", "MERGED", "TO MERGE",
                "REVERTED", "KEPT", "PER MERGE");
    for (const auto& row : card.rows) print_row(row, widths);
    print_row(card.total, widths);
    if (const std::string apart = check::apart_note(card.total); !apart.empty())
        std::printf("\n%s\n", apart.c_str());
    if (card.total.unpriced)
        std::printf(
            "\n+ %d runs with tokens but no known cost (a subscription, or a model with "
            "no price) are not in COST\n",
            card.total.unpriced);
    return 0;
}

}  // namespace cocode::dispatch_cli
