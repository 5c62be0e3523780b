#include "check/scorecard.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "check/report.h"
#include "check/run_check.h"
#include "core/files.h"
#include "core/run_id.h"
#include "run/seal.h"

namespace cocode::check {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::system_clock;

// When a run started: run-info's start_time, else the time in its id (YYYYMMDD-HHMMSSmmm).
std::optional<Clock::time_point> started_at(const std::string& start_time, const std::string& id) {
    if (auto t = parse_utc_timestamp(start_time)) return t;
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
// merged pull request's last verdict, else the best PASS by the comparison's rule.
std::map<long, std::string> kinds_of(const std::vector<RunSummary>& runs,
                                     const std::map<std::string, PullOutcome>& outcomes) {
    struct Issue {
        bool sealed = false;
        std::vector<std::string> labels;
        const RunSummary* merged = nullptr;
        const RunSummary* best = nullptr;
    };
    std::map<long, Issue> issues;
    for (const auto& r : runs) {
        Issue& issue = issues[r.issue];
        if (!issue.sealed && r.sealed) {
            issue.labels = r.labels;
            issue.sealed = true;
        }
        if (r.pass.value_or(false) && !r.plan_round &&
            (!issue.best || ranks_before(r.rank, issue.best->rank)))
            issue.best = &r;
    }
    for (const auto& pair : pairs_of(runs)) {
        auto outcome = outcomes.find(pair.front()->run_id);
        if (outcome == outcomes.end() || !outcome->second.merged()) continue;
        for (auto it = pair.rbegin(); it != pair.rend(); ++it)
            if ((*it)->pass) {
                issues[pair.front()->issue].merged = *it;
                break;
            }
    }
    std::map<long, std::string> out;
    for (auto& [number, issue] : issues) {
        const RunSummary* accepted = issue.merged ? issue.merged : issue.best;
        out[number] =
            kind_of(work_type_of_labels(issue.labels), accepted ? accepted->change_type : "",
                    accepted ? std::optional<int>(accepted->lines) : std::nullopt);
    }
    return out;
}

// A run's summary as one line of the cache: tab-separated, its text fields with no tab,
// newline or unit separator (0x1f, which joins the labels) left in them.
std::string cache_text(std::string text) {
    for (auto& c : text)
        if (c == '\t' || c == '\n' || c == '\r' || c == '\x1f') c = ' ';
    return text;
}
std::string optional_number(const std::optional<double>& v) {
    if (!v) return "-";
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", *v);
    return text;
}
std::optional<double> number_of(const std::string& text) {
    if (text == "-" || text.empty()) return std::nullopt;
    try {
        return std::stod(text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
constexpr char kCacheHeader[] = "cocode scorecard cache 2";
constexpr std::size_t kCacheFields = 24;

std::string cache_line(const std::string& stamp, const RunSummary& r) {
    std::string labels;
    for (const auto& l : r.labels) labels += (labels.empty() ? "" : "\x1f") + cache_text(l);
    const std::vector<std::string> fields = {cache_text(r.run_id),
                                             stamp,
                                             cache_text(r.agent),
                                             std::to_string(r.issue),
                                             cache_text(r.branch),
                                             cache_text(r.start_time),
                                             std::to_string(r.round),
                                             r.sealed ? "1" : "0",
                                             labels,
                                             !r.pass   ? "-"
                                             : *r.pass ? "1"
                                                       : "0",
                                             r.plan_round ? "1" : "0",
                                             std::to_string(r.rank.outside),
                                             std::to_string(r.rank.lines),
                                             optional_number(r.rank.seconds),
                                             cache_text(r.change_type),
                                             std::to_string(r.lines),
                                             cache_text(r.model),
                                             std::to_string(r.tokens.input),
                                             std::to_string(r.tokens.output),
                                             std::to_string(r.tokens.cached),
                                             optional_number(r.cost_usd),
                                             r.unpriced ? "1" : "0",
                                             optional_number(r.ready_seconds),
                                             std::to_string(static_cast<int>(r.apart))};
    std::string out;
    for (const auto& f : fields) out += (out.empty() ? "" : "\t") + f;
    return out + "\n";
}

std::optional<std::pair<std::string, RunSummary>> from_cache_line(std::string_view line) {
    std::vector<std::string> f;
    std::size_t start = 0;
    while (start <= line.size()) {
        std::size_t end = line.find('\t', start);
        if (end == std::string_view::npos) end = line.size();
        f.emplace_back(line.substr(start, end - start));
        start = end + 1;
    }
    if (f.size() != kCacheFields) return std::nullopt;
    try {
        RunSummary r;
        r.run_id = f[0];
        r.agent = f[2];
        r.issue = std::stol(f[3]);
        r.branch = f[4];
        r.start_time = f[5];
        r.round = std::stoi(f[6]);
        r.sealed = f[7] == "1";
        for (std::size_t at = 0; !f[8].empty() && at <= f[8].size();) {
            std::size_t end = f[8].find('\x1f', at);
            if (end == std::string::npos) end = f[8].size();
            r.labels.push_back(f[8].substr(at, end - at));
            at = end + 1;
        }
        if (f[9] != "-") r.pass = f[9] == "1";
        r.plan_round = f[10] == "1";
        r.rank = {r.pass.value_or(false), std::stoul(f[11]), std::stoi(f[12]), number_of(f[13]),
                  r.agent};
        r.change_type = f[14];
        r.lines = std::stoi(f[15]);
        r.model = f[16];
        r.tokens = {std::stoull(f[17]), std::stoull(f[18]), std::stoull(f[19])};
        r.cost_usd = number_of(f[20]);
        r.unpriced = f[21] == "1";
        r.ready_seconds = number_of(f[22]);
        const int apart = std::stoi(f[23]);
        if (apart < 0 || apart > static_cast<int>(run::NotJudged::never_started))
            return std::nullopt;
        r.apart = static_cast<run::NotJudged>(apart);
        return std::pair{f[1], std::move(r)};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// When a run folder last changed (its modification and change times): an ended run's files
// change only by a file renamed in (a new verdict), which changes both.
std::optional<std::string> folder_stamp(const fs::path& folder) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) return std::nullopt;
    return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
           std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
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
    if (f.apart == run::NotJudged::interrupted) ++row.interrupted;
    if (f.apart == run::NotJudged::never_started) ++row.never_started;
    if (f.pass && f.apart == run::NotJudged::no) {
        ++row.judged;
        row.passed += *f.pass;
    }
    row.tokens += f.tokens;
    if (f.cost_usd) {
        row.cost_usd += *f.cost_usd;
        ++row.priced;
    } else if (f.unpriced)
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

std::string kind_of(std::string type, const std::string& change_type, std::optional<int> lines) {
    if (type.empty()) type = change_type;
    if (type.empty()) return "unknown";
    return type + "/" + (lines ? std::string(1, size_of_change(*lines)) : "?");
}

std::string work_kind(const std::vector<std::string>& labels,
                      const std::optional<AcceptedChange>& change) {
    return kind_of(work_type_of_labels(labels), change ? work_type_of_change(change->files) : "",
                   change ? std::optional<int>(change->lines) : std::nullopt);
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
    if (passed == 0 || priced < runs - running - never_started) return std::nullopt;
    return cost_usd / passed;
}

std::optional<double> ReportRow::merge_rate() const { return ratio(merged, merged + closed); }
std::optional<double> ReportRow::revert_rate() const { return ratio(reverted, merged); }
std::optional<double> ReportRow::kept_rate() const { return ratio(lines_kept, lines_agent); }

std::optional<double> ReportRow::cost_per_merge() const {
    if (merged == 0 || priced < runs - running - never_started) return std::nullopt;
    return cost_usd / merged;
}

void take_verdict(RunSummary& s, const Verdict& v) {
    s.pass = v.pass;
    s.plan_round = v.plan_round;
    s.rank = rank_facts(v);
    s.change_type = work_type_of_change(v.files);
    s.lines = v.insertions + v.deletions;
}

void take_usage(RunSummary& s, const run::RunUsage& usage) {
    s.model = main_model(usage);
    s.tokens = usage.tokens;
    s.cost_usd = usage.cost_usd;
    s.unpriced = !s.cost_usd && !usage.tokens.empty();
}

RunSummary summarize(const fs::path& repo_root, const run::RunRecord& r) {
    RunSummary s;
    s.run_id = r.run_id;
    s.agent = r.agent;
    s.issue = r.issue;
    s.branch = r.branch;
    s.start_time = r.start_time;
    s.round = r.round;
    s.active = run::is_active(r.status);
    if (auto seal = run::read_seal(repo_root, r.run_id); seal.ok() && *seal) {
        s.labels = (*seal)->issue_labels;
        s.sealed = true;
    }
    // A verdict of a run with nothing of its agent's doing in it (one judged before such runs
    // were left unjudged: `exit 130: interrupted`) is not counted.
    if (!s.active) s.apart = run::not_judged(r.reason);
    if (!s.active && s.apart == run::NotJudged::no)
        if (auto v = recorded_verdict(r.folder)) take_verdict(s, *v);
    if (auto end = run::read_run_end(run::RunFiles{r.folder}); end && end->usage)
        take_usage(s, *end->usage);
    if (auto start = parse_utc_timestamp(r.start_time))
        if (auto ready = ready_at(r))
            s.ready_seconds = std::chrono::duration<double>(*ready - *start).count();
    return s;
}

std::vector<RunSummary> run_summaries(const fs::path& repo_root, const fs::path& runs_dir,
                                      const fs::path& cache) {
    struct Cached {
        std::string stamp;
        RunSummary summary;
        std::string_view line;  // as the cache holds it, its newline included
    };
    std::unordered_map<std::string, Cached> cached;  // by run id
    std::string text;
    if (!cache.empty())
        if (auto read = read_file(cache, std::size_t{1} << 30);
            read && read->rfind(kCacheHeader, 0) == 0) {
            text = std::move(*read);
            cached.reserve(text.size() / 200);
            std::size_t start = text.find('\n') + 1;
            while (start > 0 && start < text.size()) {
                std::size_t end = text.find('\n', start);
                if (end == std::string::npos) break;  // a torn last line
                const std::string_view line = std::string_view(text).substr(start, end - start);
                if (auto entry = from_cache_line(line)) {
                    const std::string id = entry->second.run_id;
                    cached[id] = {std::move(entry->first), std::move(entry->second),
                                  std::string_view(text).substr(start, end + 1 - start)};
                }
                start = end + 1;
            }
        }
    std::error_code ec;
    std::vector<std::string> ids;  // run ids sort by time, as names
    for (const auto& entry : list_folder(runs_dir, ec))
        if (entry.is_directory)
            if (std::string name = entry.path.filename().string(); is_run_id(name))
                ids.push_back(std::move(name));
    std::sort(ids.begin(), ids.end());
    std::vector<RunSummary> out;
    out.reserve(ids.size());
    std::string lines;
    bool changed = cached.size() != ids.size();
    for (const auto& id : ids) {
        const fs::path folder = runs_dir / id;
        const auto stamp = folder_stamp(folder);
        auto hit = cached.find(id);
        if (stamp && hit != cached.end() && hit->second.stamp == *stamp) {
            lines += hit->second.line;
            out.push_back(std::move(hit->second.summary));
            continue;
        }
        auto info = run::read_run_info(folder);
        if (!info) continue;  // a folder whose run-info cannot be read is no run to count
        out.push_back(summarize(repo_root, run::record_from(*info, folder)));
        changed = true;
        if (stamp && !out.back().active) lines += cache_line(*stamp, out.back());
    }
    // Kept for the next report; a cache that cannot be written costs time, nothing else.
    if (changed && !cache.empty()) {
        fs::create_directories(cache.parent_path(), ec);
        (void)write_file_atomic(cache, std::string(kCacheHeader) + "\n" + lines);
    }
    return out;
}

std::vector<RunFacts> run_facts(const fs::path& repo_root, const std::vector<RunSummary>& runs,
                                Clock::time_point since) {
    // The pairs' outcomes: read where there are some (one listing of the folder).
    std::map<std::string, PullOutcome> outcomes;
    std::error_code ec;
    std::set<std::string> recorded;
    for (const auto& entry : list_folder(repo_root / kOutcomesDir, ec))
        recorded.insert(entry.path.stem().string());
    for (const auto& pair : pairs_of(runs))
        if (recorded.count(pair.front()->run_id))
            if (auto o = latest_outcome(repo_root, pair.front()->run_id))
                outcomes[pair.front()->run_id] = std::move(*o);
    const auto kinds = kinds_of(runs, outcomes);
    std::vector<RunFacts> out;
    for (const auto& r : runs) {
        auto started = started_at(r.start_time, r.run_id);
        if (!started || *started < since) continue;
        RunFacts f;
        f.run_id = r.run_id;
        f.agent = r.agent;
        f.issue = r.issue;
        f.kind = kinds.at(r.issue);
        f.day = format_utc_timestamp(*started).substr(0, 10);
        f.active = r.active;
        f.pass = r.pass;
        f.apart = r.apart;
        f.model = r.model;
        f.tokens = r.tokens;
        f.cost_usd = r.cost_usd;
        f.unpriced = r.unpriced;
        f.ready_seconds = r.ready_seconds;
        if (auto o = outcomes.find(r.run_id); o != outcomes.end()) f.outcome = o->second;
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

std::string apart_note(const ReportRow& row) {
    std::vector<std::string> parts;
    if (row.interrupted) parts.push_back(std::to_string(row.interrupted) + " interrupted");
    if (row.never_started)
        parts.push_back(std::to_string(row.never_started) +
                        (row.never_started == 1 ? " whose agent" : " whose agents") +
                        " never started");
    if (parts.empty()) return {};
    std::string text = "runs counts " + parts.front();
    if (parts.size() > 1) text += " and " + parts[1];
    return text + ": not judged, not in the PASS rate";
}

}  // namespace cocode::check
