// The live comment: one per issue, a row per agent — its state, time, commits, tokens and cost
// so far, where its logs are — edited in place while the runs go on and ending with the
// verdicts, the best agent and the pull requests (docs/check.md, "The live comment").
//
// GitHub has no compare-and-swap on comments, and in the action's fan-out every runner edits
// the one comment. Each row is kept in the comment as data. A writer finds the comment once
// (the oldest carrying the marker), then reads it by its id — a list of the issue's comments
// lags behind writes, one comment read by id does not — puts its own rows in and writes it
// whole. Rows only move forward: a writer keeps the furthest state of every other agent's row
// it has seen, so it never writes back an older one, and it puts back a row another writer
// dropped. A writer that lost a race finds its own row stale or gone at its next edit and
// writes it again; at its end it reads the comment again until its final rows are there. The
// comparison's job, which runs after every runner, writes the final table from the published
// verdicts: that one is exact.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "check/verdict.h"
#include "core/result.h"
#include "issues/source.h"

namespace cocode::check {

struct ProgressRow {
    std::string agent;
    // queued, running, READY, judging, PASS, FAIL (and failed: a run that ended without
    // being judged).
    std::string state;
    long seconds = -1;  // since the run started; -1 before
    int commits = 0;
    std::uint64_t tokens = 0;
    std::optional<double> cost_usd;
    std::string logs_url;  // the Actions run; empty on a machine of one's own
    std::string pr_url;
    friend bool operator==(const ProgressRow&, const ProgressRow&) = default;
};

// The comment's marker key: `progress/issue-N`.
std::string progress_key(long issue);

// A judged run's row: PASS or FAIL, its time, commits, tokens and cost.
ProgressRow row_of(const Verdict& verdict, const std::string& pr_url = {});

// Where this job's logs are, in GitHub Actions (the workflow run, its attempt); "" elsewhere.
std::string actions_logs_url();

// The rows a live comment holds (none when it is not one).
std::vector<ProgressRow> rows_in(const std::string& body);

// `theirs` with each of `mine` put in place of the row of its agent (or added), in agent order.
std::vector<ProgressRow> merged(std::vector<ProgressRow> theirs,
                                const std::vector<ProgressRow>& mine);

// Every agent's row of `a` and `b`, each at the further of its two states (queued, running,
// READY, judging, then a verdict); on a tie, `a`'s. In agent order.
std::vector<ProgressRow> furthest(std::vector<ProgressRow> a, const std::vector<ProgressRow>& b);

// Whether every row is judged (PASS or FAIL) or ended without a judgement.
bool all_settled(const std::vector<ProgressRow>& rows);

// The comment: the table, and once every row is settled the verdicts, the best agent (by the
// comparison's rule, given `ranked`, best first; empty when not known) and the pull requests;
// the rows as data at its end.
std::string render_progress(long issue, const std::vector<ProgressRow>& rows,
                            const std::vector<Verdict>& ranked = {});

// When the live comment may be edited: on a change of state at most every `min_gap`; without
// one, every `interval`. After the first ten minutes of the batch, `slow_min_gap` and
// `slow_interval` — so that a long race cannot spend GitHub's limits for content (80 a minute,
// 500 an hour, per account): at most 20 edits a minute, then 6.
struct ProgressPace {
    std::chrono::milliseconds interval{10'000};
    std::chrono::milliseconds min_gap{3'000};
    std::chrono::milliseconds slow_interval{120'000};
    std::chrono::milliseconds slow_min_gap{10'000};
    std::chrono::milliseconds fast_for{600'000};
};
bool progress_due(const ProgressPace& pace, std::chrono::milliseconds since_start,
                  std::optional<std::chrono::milliseconds> since_last_edit, bool state_changed);

// One writer of an issue's live comment: its own rows, edited in by a thread of its own so
// that GitHub's latency never holds the supervisor, at the pace above. Each edit reads the
// comment by its id, puts these rows in and writes it whole (two requests; the first edit
// also lists the issue's comments to find it, or makes it). A failed edit is reported
// through `notice` once and tried again at the next.
class LiveComment {
  public:
    LiveComment(issues::IssueSource& source, long issue, ProgressPace pace,
                std::function<void(const std::string&)> notice);
    ~LiveComment();
    LiveComment(const LiveComment&) = delete;
    LiveComment& operator=(const LiveComment&) = delete;

    // This writer's rows now; `changed`: a state changed since the last call.
    void set(std::vector<ProgressRow> rows, bool changed);
    // The last edit, now; then, when the comment has another agent's row (another writer,
    // which may still write), the comment read again — 0.5 s, 1 s, 1.5 s, 2 s, 2 s apart —
    // until it holds these rows and every row is settled (a runner that raced this one may
    // have written over them). With
    // `ranked`, the verdicts the final words name. The edits made (writes, not reads).
    Result<int> finish(std::vector<ProgressRow> rows, const std::vector<Verdict>& ranked = {});

  private:
    // One edit; `there`: whether the comment held these rows' states before it.
    Result<void> edit(const std::vector<ProgressRow>& rows, const std::vector<Verdict>& ranked,
                      bool* there = nullptr);
    void work();

    issues::IssueSource& source_;
    long issue_;
    ProgressPace pace_;
    std::function<void(const std::string&)> notice_;
    std::chrono::steady_clock::time_point started_;
    std::optional<std::chrono::steady_clock::time_point> last_edit_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<ProgressRow> pending_;
    bool has_pending_ = false, changed_ = false, stopping_ = false, told_ = false;
    int edits_ = 0;
    // Touched by one edit at a time (the thread's, then finish's after it is joined).
    std::optional<long long> comment_id_;
    std::vector<ProgressRow> seen_;  // every row read so far, at its furthest state
    std::thread thread_;
};

}  // namespace cocode::check
