// `cocode-dispatch report`: which agent to trust for which work (docs/report.md). From the
// run folders — verdicts, usage, READY events, the outcomes of the pull requests — a row per
// agent, model, kind of work, issue or day, or any mix of them: runs, the PASS rate with its
// 95 % interval, merge and revert rates, lines kept, cost per PASS and per merged pull request,
// the median times to READY and to merge.
//
// Reading (run_facts) is apart from counting (scorecard): the counting is a pure function of
// the facts, tested as a table.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/outcome.h"
#include "check/report.h"
#include "core/result.h"
#include "git/repository.h"
#include "run/run_folder.h"
#include "run/usage.h"

namespace cocode::check {

enum class Dimension { agent, model, kind, issue, day };
const char* dimension_name(Dimension dimension);
// "agent,model,kind" (any of agent, model, kind, issue, day, each once): a usage error
// naming the word and the choices.
Result<std::vector<Dimension>> dimensions_of(std::string_view text);

// The kind of work: docs, tests, fix or feature, then the size of the accepted change — S (up
// to 30 lines added and removed), M (up to 300) or L — as "fix/M". The type comes from the
// issue's labels when one says it (docs/documentation, test(s)/testing, bug/fix/regression,
// enhancement/feature; "type: bug" and "kind/feature" alike), else from the change's paths:
// only documents → docs, only tests (and documents) → tests, a new file of code → feature,
// else fix. Without an accepted change the size is "?"; without labels or a change, "unknown".
std::string work_type_of_labels(const std::vector<std::string>& labels);
// A document: Markdown, reStructuredText, AsciiDoc or text, a README, CHANGELOG or LICENSE, or
// anything under doc(s)/. A test: in a test(s)/spec(s)/__tests__/testdata folder, or named as
// test runners find tests (test_*, *_test.*, *_spec.*, *test.*, *.test.*, *.spec.*).
bool is_document_path(const std::string& path);
bool is_test_path(const std::string& path);
std::string work_type_of_change(const std::vector<git::FileChange>& files);
char size_of_change(int lines_changed);
struct AcceptedChange {
    std::vector<git::FileChange> files;
    int lines = 0;  // added and removed
};
std::string work_kind(const std::vector<std::string>& labels,
                      const std::optional<AcceptedChange>& change);
// The same from the type the labels say ("" when none), the change's type ("" when none) and
// its lines (nullopt: no accepted change).
std::string kind_of(std::string type, const std::string& change_type, std::optional<int> lines);

// How sure a rate of `successes` in `trials` is: its 95 % Wilson score interval, which stays
// inside [0, 1] and is honest for few trials and for rates near 0 or 1 (10 PASS of 12 judged:
// 55 % to 95 %). nullopt without a trial.
struct RateInterval {
    double low = 0;
    double high = 0;
};
std::optional<RateInterval> wilson_interval(int successes, int trials);

// What one run brings to the scorecard.
struct RunFacts {
    std::string run_id;
    std::string agent;
    std::string model;  // the model that used most of its tokens; "" when not known
    std::string kind;   // its issue's (work_kind): every run on an issue has the same
    long issue = 0;
    std::string day;  // of its start, UTC
    bool active = false;
    std::optional<bool> pass;                   // its verdict, once judged
    run::NotJudged apart = run::NotJudged::no;  // counted apart, never judged
    run::Tokens tokens;
    std::optional<double> cost_usd;
    bool unpriced = false;  // tokens without a known cost
    std::optional<double> ready_seconds;
    // The pair's pull request: on the pair's first round only, so that it counts once.
    std::optional<PullOutcome> outcome;
};

// What a run's folder says that the scorecard counts, read once (summarize): a report reads
// an ended run's summary from a cache while its folder has not changed.
struct RunSummary {
    std::string run_id;
    std::string agent;
    long issue = 0;
    std::string branch;
    std::string start_time;
    int round = 1;
    bool active = false;
    run::NotJudged apart = run::NotJudged::no;  // interrupted or never started: no verdict
    bool sealed = false;                        // its seal was read: `labels` are its issue's then
    std::vector<std::string> labels;
    std::optional<bool> pass;  // its verdict, once judged
    bool plan_round = false;   // a plan round's verdict
    RankFacts rank;            // what the comparison's rule compares
    std::string change_type;   // work_type_of_change of its verdict's files
    int lines = 0;             // added and removed
    std::string model;
    run::Tokens tokens;
    std::optional<double> cost_usd;
    bool unpriced = false;
    std::optional<double> ready_seconds;
};
RunSummary summarize(const std::filesystem::path& repo_root, const run::RunRecord& run);
// What a verdict says of its run, into `s`: pass, plan round, what the comparison compares,
// the change's type and size; and what the run used: its main model, tokens and cost.
void take_verdict(RunSummary& s, const Verdict& v);
void take_usage(RunSummary& s, const run::RunUsage& usage);

// Where a repository keeps its runs' summaries.
inline constexpr char kScorecardCache[] = ".cocode/cache/scorecard.tsv";

// Every run of `runs_dir`, oldest first: an ended run from `cache` (a file of cocode's; none
// when empty) while its folder's modification and change times are those cached, the others
// read (an ended run's files change only by a file renamed in, which changes both times); the
// cache rewritten, atomically, when anything was read.
std::vector<RunSummary> run_summaries(const std::filesystem::path& repo_root,
                                      const std::filesystem::path& runs_dir,
                                      const std::filesystem::path& cache);

// The facts of the runs started at or after `since` (their start_time; a run not started yet,
// by its id's time). An issue's kind is read from all its runs, whenever they started.
std::vector<RunFacts> run_facts(const std::filesystem::path& repo_root,
                                const std::vector<RunSummary>& runs,
                                std::chrono::system_clock::time_point since);

struct ReportRow {
    std::vector<std::string> keys;  // one per dimension: "claude", "fix/M", "#12", "2026-11-25"
    int runs = 0;
    int judged = 0;  // with a verdict
    int passed = 0;
    int running = 0;  // not ended: counted, their usage not yet
    // Ended with nothing of the agent's doing to judge (run::NotJudged): counted in `runs`
    // (and their usage in the cost), never in `judged`.
    int interrupted = 0;
    int never_started = 0;
    run::Tokens tokens;
    double cost_usd = 0;  // of the runs whose cost is known
    int priced = 0;       // ended runs whose cost is known
    int unpriced = 0;     // ended runs with tokens but no known cost
    std::optional<double> median_ready_seconds;
    // Pull requests (one a pair), by what became of them.
    int pulls = 0;
    int merged = 0;
    int closed = 0;  // unmerged
    int reverted = 0;
    std::optional<double> median_merge_seconds;  // READY to merge
    int lines_agent = 0;                         // of merged pull requests git could read
    int lines_kept = 0;

    // The keys joined by " " ("claude fix/M"); "total" for the total.
    std::string key() const;
    // PASS of those judged; nullopt when none was. With its 95 % interval.
    std::optional<double> pass_rate() const;
    std::optional<RateInterval> pass_interval() const { return wilson_interval(passed, judged); }
    // The cost of the runs whose cost is known; nullopt when no run's is (a script agent's
    // runs cost nothing cocode can see: unknown, not free).
    std::optional<double> known_cost() const {
        return priced ? std::optional<double>(cost_usd) : std::nullopt;
    }
    // What each PASS cost: every run's cost over the PASSes; nullopt without a PASS or when an
    // ended run's cost is not known.
    std::optional<double> cost_per_pass() const;
    // Merged of those decided (merged or closed); reverted of those merged; kept of the
    // agent's lines; every run's cost over the merged pull requests.
    std::optional<double> merge_rate() const;
    std::optional<double> revert_rate() const;
    std::optional<double> kept_rate() const;
    std::optional<double> cost_per_merge() const;
};

struct Scorecard {
    std::vector<Dimension> by;
    std::vector<ReportRow> rows;  // by key: issues by number, the rest in text order
    ReportRow total;
};

Scorecard scorecard(const std::vector<RunFacts>& facts, const std::vector<Dimension>& by);

// "runs counts 2 interrupted and 1 whose agent never started: not judged, not in the PASS
// rate"; "" when the row has none.
std::string apart_note(const ReportRow& row);

}  // namespace cocode::check
