#include "check/scorecard.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "check/report.h"
#include "check/run_check.h"
#include "core/run_id.h"
#include "run/seal.h"

namespace cocode::check {

namespace fs = std::filesystem;

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

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool ends_with(std::string_view text, std::string_view end) {
    return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

// The model that used most of a run's tokens.
std::string main_model(const run::RunUsage& usage) {
    const run::ModelTokens* best = nullptr;
    for (const auto& m : usage.models)
        if (!m.model.empty() && (!best || m.tokens.total() > best->tokens.total())) best = &m;
    return best ? best->model : "";
}

// Each issue's kind, from its runs: the labels sealed with them, and the accepted change — the
// merged pull request's last verdict, else the best PASS.
std::map<long, std::string> kinds_of(const fs::path& repo_root,
                                     const std::vector<run::RunRecord>& runs,
                                     const std::map<std::string, Verdict>& verdicts) {
    struct Issue {
        bool sealed = false;  // its labels read (from its first run's seal)
        std::vector<std::string> labels;
        std::optional<Verdict> merged;
        std::vector<Verdict> passed;
    };
    std::map<long, Issue> issues;
    for (const auto& r : runs) {
        Issue& issue = issues[r.issue];
        if (!issue.sealed)
            if (auto seal = run::read_seal(repo_root, r.run_id); seal.ok() && *seal) {
                issue.labels = (*seal)->issue_labels;
                issue.sealed = true;
            }
        auto v = verdicts.find(r.run_id);
        if (v != verdicts.end() && v->second.pass && !v->second.plan_round)
            issue.passed.push_back(v->second);
    }
    for (const auto& pair : pairs_of(runs)) {
        auto outcome = latest_outcome(repo_root, pair.front()->run_id);
        if (!outcome || !outcome->merged()) continue;
        for (auto it = pair.rbegin(); it != pair.rend(); ++it)
            if (auto v = verdicts.find((*it)->run_id); v != verdicts.end()) {
                issues[pair.front()->issue].merged = v->second;
                break;
            }
    }
    std::map<long, std::string> out;
    for (auto& [number, issue] : issues) {
        std::optional<Verdict> accepted = issue.merged;
        if (!accepted && !issue.passed.empty()) accepted = rank(issue.passed).front();
        std::optional<AcceptedChange> change;
        if (accepted)
            change = AcceptedChange{accepted->files, accepted->insertions + accepted->deletions};
        out[number] = work_kind(issue.labels, change);
    }
    return out;
}

struct Tally {
    ReportRow row;
    std::vector<double> ready, merge;
};

void count(Tally& t, const RunFacts& f) {
    ReportRow& row = t.row;
    ++row.runs;
    if (f.active) {
        ++row.running;
        return;
    }
    if (f.pass) {
        ++row.judged;
        row.passed += *f.pass;
    }
    row.tokens += f.tokens;
    if (f.cost_usd)
        row.cost_usd += *f.cost_usd;
    else if (f.unpriced)
        ++row.unpriced;
    if (f.ready_seconds) t.ready.push_back(*f.ready_seconds);
    if (const auto& o = f.outcome) {
        ++row.pulls;
        row.merged += o->merged();
        row.closed += o->state == "closed";
        if (o->merged()) {
            row.reverted += o->reverted();
            if (o->ready_to_merge_seconds) t.merge.push_back(*o->ready_to_merge_seconds);
            if (o->lines) {
                row.lines_agent += o->lines->agent;
                row.lines_kept += o->lines->kept;
            }
        }
    }
}

ReportRow settle(Tally& t) {
    if (!t.ready.empty()) t.row.median_ready_seconds = median(t.ready);
    if (!t.merge.empty()) t.row.median_merge_seconds = median(t.merge);
    return t.row;
}

std::string key_of(const RunFacts& f, Dimension d) {
    switch (d) {
        case Dimension::agent:
            return f.agent;
        case Dimension::model:
            return f.model.empty() ? "-" : f.model;
        case Dimension::kind:
            return f.kind;
        case Dimension::issue:
            return "#" + std::to_string(f.issue);
        case Dimension::day:
            return f.day;
    }
    return "";
}

// Orders rows as people read them: issues by number, the rest as text.
std::string sort_key_of(const RunFacts& f, Dimension d) {
    if (d == Dimension::issue) {
        char text[24];
        std::snprintf(text, sizeof text, "%020ld", f.issue);
        return text;
    }
    return key_of(f, d);
}

std::optional<double> ratio(double part, double whole) {
    if (whole <= 0) return std::nullopt;
    return part / whole;
}

}  // namespace

bool is_document_path(const std::string& path) {
    const std::string p = lower(path);
    const std::string name = p.substr(p.rfind('/') + 1);
    return p.rfind("docs/", 0) == 0 || p.rfind("doc/", 0) == 0 ||
           p.find("/docs/") != std::string::npos || p.find("/doc/") != std::string::npos ||
           ends_with(name, ".md") || ends_with(name, ".rst") || ends_with(name, ".adoc") ||
           ends_with(name, ".txt") || name.rfind("readme", 0) == 0 ||
           name.rfind("changelog", 0) == 0 || name.rfind("license", 0) == 0;
}

bool is_test_path(const std::string& path) {
    const std::string p = "/" + lower(path);
    const std::string name = p.substr(p.rfind('/') + 1);
    for (const char* folder :
         {"/test/", "/tests/", "/spec/", "/specs/", "/__tests__/", "/testdata/"})
        if (p.find(folder) != std::string::npos) return true;
    const std::string stem = name.substr(0, name.find('.'));
    return name.rfind("test_", 0) == 0 || ends_with(stem, "_test") || ends_with(stem, "_spec") ||
           ends_with(stem, "test") || name.find(".test.") != std::string::npos ||
           name.find(".spec.") != std::string::npos;
}

const char* dimension_name(Dimension d) {
    switch (d) {
        case Dimension::agent:
            return "agent";
        case Dimension::model:
            return "model";
        case Dimension::kind:
            return "kind";
        case Dimension::issue:
            return "issue";
        case Dimension::day:
            return "day";
    }
    return "";
}

Result<std::vector<Dimension>> dimensions_of(std::string_view text) {
    std::vector<Dimension> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string word(text.substr(start, end - start));
        std::optional<Dimension> d;
        for (Dimension each : {Dimension::agent, Dimension::model, Dimension::kind,
                               Dimension::issue, Dimension::day})
            if (word == dimension_name(each)) d = each;
        if (!d)
            return Error::usage("--by " + std::string(text) + ": '" + word +
                                "' is not one of agent, model, kind, issue, day");
        if (std::find(out.begin(), out.end(), *d) != out.end())
            return Error::usage("--by " + std::string(text) + ": '" + word + "' is named twice");
        out.push_back(*d);
        start = end + 1;
    }
    return out;
}

std::string work_type_of_labels(const std::vector<std::string>& labels) {
    for (const auto& label : labels) {
        std::string l = lower(label);
        // "type: bug", "kind/feature", "type/docs": the word after the prefix.
        if (auto cut = l.find_last_of(":/"); cut != std::string::npos) l = l.substr(cut + 1);
        l.erase(0, l.find_first_not_of(' '));
        if (l == "documentation" || l == "docs" || l == "doc") return "docs";
        if (l == "test" || l == "tests" || l == "testing") return "tests";
        if (l == "bug" || l == "fix" || l == "bugfix" || l == "defect" || l == "regression")
            return "fix";
        if (l == "enhancement" || l == "feature" || l == "feature request") return "feature";
    }
    return "";
}

std::string work_type_of_change(const std::vector<git::FileChange>& files) {
    if (files.empty()) return "";
    bool all_documents = true, documents_and_tests = true, new_code = false;
    for (const auto& f : files) {
        const bool document = is_document_path(f.path), test = is_test_path(f.path);
        all_documents &= document;
        documents_and_tests &= document || test;
        new_code |= f.status == 'A' && !document && !test;
    }
    if (all_documents) return "docs";
    if (documents_and_tests) return "tests";
    return new_code ? "feature" : "fix";
}

char size_of_change(int lines) { return lines <= 30 ? 'S' : lines <= 300 ? 'M' : 'L'; }

std::string work_kind(const std::vector<std::string>& labels,
                      const std::optional<AcceptedChange>& change) {
    std::string type = work_type_of_labels(labels);
    if (type.empty() && change) type = work_type_of_change(change->files);
    if (type.empty()) return "unknown";
    return type + "/" + (change ? std::string(1, size_of_change(change->lines)) : "?");
}

std::optional<RateInterval> wilson_interval(int successes, int trials) {
    if (trials <= 0 || successes < 0 || successes > trials) return std::nullopt;
    constexpr double z = 1.959963984540054;  // the normal quantile of 97.5 %: 95 % two-sided
    const double n = trials, p = successes / n, z2 = z * z;
    const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
    const double margin = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return RateInterval{std::max(0.0, center - margin), std::min(1.0, center + margin)};
}

std::string ReportRow::key() const {
    std::string out;
    for (const auto& k : keys) out += (out.empty() ? "" : " ") + k;
    return out;
}

std::optional<double> ReportRow::pass_rate() const { return ratio(passed, judged); }

std::optional<double> ReportRow::cost_per_pass() const {
    if (passed == 0 || unpriced > 0) return std::nullopt;
    return cost_usd / passed;
}

std::optional<double> ReportRow::merge_rate() const { return ratio(merged, merged + closed); }
std::optional<double> ReportRow::revert_rate() const { return ratio(reverted, merged); }
std::optional<double> ReportRow::kept_rate() const { return ratio(lines_kept, lines_agent); }

std::optional<double> ReportRow::cost_per_merge() const {
    if (merged == 0 || unpriced > 0) return std::nullopt;
    return cost_usd / merged;
}

std::vector<RunFacts> run_facts(const fs::path& repo_root, const std::vector<run::RunRecord>& runs,
                                Clock::time_point since) {
    std::map<std::string, Verdict> verdicts;
    for (const auto& r : runs)
        if (!run::is_active(r.status))
            if (auto v = recorded_verdict(r.folder)) verdicts.emplace(r.run_id, std::move(*v));
    const auto kinds = kinds_of(repo_root, runs, verdicts);
    std::map<std::string, const run::RunRecord*> first_of_pair;
    for (const auto& pair : pairs_of(runs)) first_of_pair[pair.front()->run_id] = pair.front();
    std::vector<RunFacts> out;
    for (const auto& r : runs) {
        auto started = started_at(r);
        if (!started || *started < since) continue;
        RunFacts f;
        f.run_id = r.run_id;
        f.agent = r.agent;
        f.issue = r.issue;
        f.kind = kinds.at(r.issue);
        f.day = format_utc_timestamp(*started).substr(0, 10);
        f.active = run::is_active(r.status);
        if (auto v = verdicts.find(r.run_id); v != verdicts.end()) f.pass = v->second.pass;
        if (auto end = run::read_run_end(run::RunFiles{r.folder}); end && end->usage) {
            f.model = main_model(*end->usage);
            f.tokens = end->usage->tokens;
            f.cost_usd = end->usage->cost_usd;
            f.unpriced = !f.cost_usd && !end->usage->tokens.empty();
        }
        if (auto start = parse_utc_timestamp(r.start_time))
            if (auto ready = ready_at(r))
                f.ready_seconds = std::chrono::duration<double>(*ready - *start).count();
        if (first_of_pair.count(r.run_id)) f.outcome = latest_outcome(repo_root, r.run_id);
        out.push_back(std::move(f));
    }
    return out;
}

Scorecard scorecard(const std::vector<RunFacts>& facts, const std::vector<Dimension>& by) {
    std::map<std::vector<std::string>, Tally> tallies;  // by their sort keys
    Tally total;
    total.row.keys = {"total"};
    for (const auto& f : facts) {
        std::vector<std::string> sort_keys, keys;
        for (Dimension d : by) {
            sort_keys.push_back(sort_key_of(f, d));
            keys.push_back(key_of(f, d));
        }
        Tally& t = tallies[sort_keys];
        t.row.keys = keys;
        count(t, f);
        count(total, f);
    }
    Scorecard out;
    out.by = by;
    for (auto& [sort_keys, t] : tallies) out.rows.push_back(settle(t));
    out.total = settle(total);
    return out;
}

}  // namespace cocode::check
