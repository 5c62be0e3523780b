// What became of an agent's pull request after its verdict (docs/report.md, "Outcomes"):
// merged (and how long after READY), closed unmerged, still open, reverted later on the base,
// and how much of the agent's diff the merge kept. Learnt from GitHub and git by
// `report --refresh`, `watch` and `serve`; kept as records appended to
// `.cocode/outcomes/<first run id>.jsonl`, beside the seals: the pair's first round names it,
// and no agent can write there (its run folder it can) — never a rewrite of a run's files.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "git/history.h"
#include "github/api.h"
#include "run/run_folder.h"

namespace cocode::check {

// A revert counts within this long after the merge.
inline constexpr std::chrono::hours kRevertWindow{24 * 30};

// The agent's lines (added lines, blank ones left out) and how many of them the base held right
// after the merge.
struct LinesKept {
    int agent = 0;
    int kept = 0;
    friend bool operator==(const LinesKept&, const LinesKept&) = default;
};

struct PullOutcome {
    std::string time;  // when cocode learnt it (UTC, ISO 8601)
    long pull_request = 0;
    std::string url;
    std::string state;  // "open", "closed" (unmerged) or "merged"
    std::string base;   // the branch it merges into
    std::string created_at, closed_at, merged_at;
    std::string merge_commit;
    std::optional<double> ready_to_merge_seconds;  // from the pair's first READY to the merge
    std::string reverted_by;                       // the commit on the base that reverted it
    std::string reverted_at;
    std::optional<LinesKept> lines;  // once merged, when git could tell

    bool merged() const { return state == "merged"; }
    bool reverted() const { return !reverted_by.empty(); }
};

nlohmann::json outcome_json(const PullOutcome& outcome);
std::optional<PullOutcome> outcome_from_json(const nlohmann::json& value);

inline constexpr char kOutcomesDir[] = ".cocode/outcomes";
std::filesystem::path outcomes_path(const std::filesystem::path& repo_root,
                                    const std::string& first_run_id);
// The last whole record of the pair's outcomes; nullopt when there is none.
std::optional<PullOutcome> latest_outcome(const std::filesystem::path& repo_root,
                                          const std::string& first_run_id);
// Appends `outcome` under the file's lock when it says something the latest does not (its
// `time` aside): true when it did.
Result<bool> record_outcome(const std::filesystem::path& repo_root, const std::string& first_run_id,
                            const PullOutcome& outcome);

// Nothing more can happen to it: closed unmerged, or merged and reverted, or merged longer ago
// than the revert window. Such a pull request is not asked about again.
bool outcome_is_settled(const PullOutcome& outcome, std::chrono::system_clock::time_point now);

// One file of the agent's change: its text at the run's base, at the agent's commit and right
// after the merge (nullopt: no such file there).
struct FileTexts {
    std::string path;
    std::optional<std::string> base, agent, merged;
};
// For each path, the lines the agent added (a line's count at the agent's commit above its
// count at the base; lines of blanks left out, trailing blanks ignored), and of those how many
// the merge brought to the base (the same count at the merge, above the base's). Whatever way
// it was merged (a merge commit, a squash, a rebase), a line a person rewrote before merging
// is not kept.
LinesKept lines_kept(const std::vector<FileTexts>& files);

// The commits of the base after the merge (newest first, as git::commits_in gives them): the
// first (oldest) within the revert window that reverts it — "This reverts commit <merge commit>"
// (git revert, GitHub's revert button) or "Reverts <repo>#<pull>" (the pull request GitHub's button
// opens).
struct Revert {
    std::string commit;
    std::string at;  // its commit time, ISO 8601
};
std::optional<Revert> revert_in(const std::vector<git::HistoryCommit>& after,
                                const std::string& merge_commit, long pull,
                                const std::string& repo_full_name,
                                std::chrono::system_clock::time_point merged_at);

// What a refresh did: pairs it asked GitHub about, outcomes it recorded (new or changed),
// pairs left alone because their outcome is settled, and what it could not learn (one line
// each: a fetch that failed, a commit git does not have).
struct Refreshed {
    int asked = 0;
    int recorded = 0;
    int settled = 0;
    std::vector<std::string> unknown;
};
// Learns the outcome of every pair of `runs` with a branch whose outcome is not settled: its
// newest pull request for that branch (one conditional request a pair), the base fetched from
// origin once per branch for reverts and lines kept. `only_branch` (not empty): that pair only
// (serve, when a pull request closes).
Result<Refreshed> refresh_outcomes(const std::filesystem::path& repo_root,
                                   const std::vector<run::RunRecord>& runs, github::GitHub& github,
                                   std::chrono::system_clock::time_point now,
                                   const std::string& only_branch = "");

// The runs of each (issue, agent) pair that has a branch, oldest first (by round, then id); the
// first names the pair's outcome. `Run`: a run::RunRecord, or anything with its branch, round
// and run_id.
template <class Run>
std::vector<std::vector<const Run*>> pairs_of(const std::vector<Run>& runs) {
    std::map<std::string, std::vector<const Run*>> by_branch;
    for (const auto& r : runs)
        if (!r.branch.empty()) by_branch[r.branch].push_back(&r);
    std::vector<std::vector<const Run*>> out;
    for (auto& [branch, pair] : by_branch) {
        std::sort(pair.begin(), pair.end(), [](const Run* a, const Run* b) {
            return a->round != b->round ? a->round < b->round : a->run_id < b->run_id;
        });
        out.push_back(std::move(pair));
    }
    return out;
}

// When a run's agent first said READY (its first READY event), if it did.
std::optional<std::chrono::system_clock::time_point> ready_at(const run::RunRecord& run);

}  // namespace cocode::check
