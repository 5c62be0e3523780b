// What cocode-check decides about one run, and everything the report shows.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "git/repository.h"
#include "run/seal.h"
#include "run/usage.h"

namespace cocode::check {

enum class Outcome { pass, fail, skipped };
std::string_view outcome_name(Outcome outcome);  // "pass", "fail", "skipped"

// One check, in the order the report lists them.
struct CheckItem {
    std::string id;    // exit_code, marker, commits, scope, verify
    std::string name;  // "exit code", "ready marker", "commits", "scope", "verify: make test"
    Outcome outcome = Outcome::skipped;
    std::string reason;              // one line: why
    std::vector<std::string> files;  // scope: the offending files
    // verify only
    std::optional<int> exit_code;
    bool timed_out = false;
    double seconds = 0;
    std::filesystem::path output_path;  // the whole output
    std::string output_tail;            // its last lines, secrets masked
};

struct CommitLine {
    std::string id;
    std::string summary;
};

// One round on the pull request (docs/review.md), as the verdict comment lists it.
struct RoundLine {
    int number = 1;
    std::string trigger;       // "issue #12", "terminal", "review by @login", "check ci/test"
    std::optional<bool> pass;  // nullopt: not judged
    std::string from, to;      // the commits the round went from and to
    std::string run_id;        // the round's run (a fresh runner restores the rounds from it)
    bool plan = false;         // a plan round
};

// A plan of work as read from a plan round's answer (check/work_plan.h).
struct WorkPlan {
    std::vector<std::string> questions;
    std::vector<std::string> files;  // paths or globs
    std::vector<std::string> tests;  // verify commands proposed
    std::vector<std::string> steps;
    std::string hash;  // 12 hex digits
};

struct Verdict {
    bool pass = false;
    // Which run: the report's header.
    std::string run_id;  // empty for --worktree
    long issue = 0;      // 0 when not known
    std::string issue_url;
    std::string agent;
    std::string branch;
    std::string base;  // full commit ids
    std::string head;
    std::optional<int> agent_exit_code;
    std::optional<double> run_seconds;  // start to end of the run, when run-info says
    std::string marker;
    std::string ready_commit;         // the commit that carried the marker
    std::vector<CommitLine> commits;  // base..head, newest first
    std::vector<git::FileChange> files;
    std::size_t files_total = 0;  // when `files` was cut (a verdict read from a comment): all
    int insertions = 0;
    int deletions = 0;
    std::vector<CheckItem> checks;
    double check_seconds = 0;
    std::filesystem::path report_dir;  // where check.json, check.md and verify logs are
    // The run's round, and every round of its (issue, agent) pair so far, this one last;
    // empty for a pair's only round.
    int round = 1;
    std::vector<RoundLine> rounds;
    // What the run used and cost (its run-end.json), when it said (docs/cost.md).
    std::optional<run::RunUsage> usage;
    // A plan round (docs/review.md, "Plans"): the plan read from its answer (none when it
    // could not be, `plan_why_not` says why), and the answer as written (its last 64 KiB).
    bool plan_round = false;
    std::optional<WorkPlan> plan;
    std::string plan_why_not;
    std::string plan_text;
    std::string plan_rejected_by;  // "@login" or "terminal", once a person rejected it
    // A code round held to an approved plan: the rules that came from it.
    std::optional<run::SealedPlan> plan_rules;
    std::string requested_by;  // who asked for the pair on GitHub (sealed): the gate skips them

    const CheckItem* find(std::string_view id) const;
};

// The structured result (`--json`, check.json); schema in docs/check.schema.json.
nlohmann::json to_json(const Verdict& verdict);
// Why a FAIL failed, in one line: its first failing check, "verify: make test: exit 1 after
// 2s"; "" when none failed. The agent's text may be in it: shown terminal-safe.
std::string first_failure(const Verdict& verdict);
Verdict verdict_from_json(const nlohmann::json& json);

}  // namespace cocode::check
