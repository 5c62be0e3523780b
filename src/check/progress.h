// The live comment: one per issue, a row per agent — its state, time, commits, tokens and cost
// so far, where its logs are — edited in place while the runs go on and ending with the
// verdicts, the best agent and the pull requests (docs/check.md, "The live comment").
//
// GitHub has no compare-and-swap on comments, and in the action's fan-out every runner edits
// the one comment. Each row is kept in the comment as data, with the time of its last edit. A
// writer finds the comment once (the oldest carrying the marker), then reads it by its id — a
// list of the issue's comments lags behind writes, one comment read by id does not — puts its
// own rows in and writes it whole. Rows only move forward: a writer keeps the furthest state
// of every other agent's row it has seen, so it never writes back an older one, and it puts
// back a row another writer dropped. The comment is edited at most every `interval` whoever
// writes (a writer that finds it edited sooner leaves its change to its next look), except
// for a final row; and every writer on a machine draws its edits from one ledger, the
// account's ceiling. A writer that lost a race finds its own row stale or gone at its next
// edit and writes it again; at its end it reads the comment again until its final rows are
// there and nobody wrote in between. The comparison's job, which runs after every runner,
// writes the final table from the published verdicts: that one is exact.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
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
// When a live comment was last edited (milliseconds since the epoch, by its writer's clock);
// nullopt when it does not say.
std::optional<std::int64_t> edited_at_in(const std::string& body);

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
// the rows as data at its end, with `edited_at` (milliseconds since the epoch; 0: not said).
// `note`: why these agents, when routing by evidence chose them (check/route.h), said under the
// title and kept in the data.
std::string render_progress(long issue, const std::vector<ProgressRow>& rows,
                            const std::vector<Verdict>& ranked = {}, std::int64_t edited_at = 0,
                            const std::string& note = "");
// The note a live comment carries ("" when none).
std::string note_in(const std::string& body);

// The ledger every writer of this machine's user shares: `$XDG_STATE_HOME/cocode/
// content-writes`, else `~/.local/state/cocode/content-writes`.
std::filesystem::path default_content_ledger();

// When the live comment may be edited. One writer: on a change of state at most every
// `min_gap`; without one, every `interval`. The comment, whoever writes it: at most every
// `interval`, a final row excepted. After the first ten minutes of the batch, `slow_min_gap`
// and `slow_interval`. And every writer of the machine's user together, on every issue: at
// most `per_minute` and `per_hour` edits, counted in `ledger` (no ceiling when empty), final rows
// counted but never held — so that no number of races spends GitHub's limits for content (80
// a minute, 500 an hour, per account; docs/github.md has the arithmetic).
struct ProgressPace {
    std::chrono::milliseconds interval{10'000};
    std::chrono::milliseconds min_gap{3'000};
    std::chrono::milliseconds slow_interval{120'000};
    std::chrono::milliseconds slow_min_gap{10'000};
    std::chrono::milliseconds fast_for{600'000};
    std::filesystem::path ledger = default_content_ledger();
    int per_minute = 40;
    int per_hour = 300;
};
// One content write taken from `ledger` at `now_ms`: false when `per_minute` or `per_hour`
// were spent (nothing counted then), unless `must` (a final row: counted, never held).
Result<bool> take_content_write(const std::filesystem::path& ledger, std::int64_t now_ms,
                                int per_minute, int per_hour, bool must);
bool progress_due(const ProgressPace& pace, std::chrono::milliseconds since_start,
                  std::optional<std::chrono::milliseconds> since_last_edit, bool state_changed);

// One writer of an issue's live comment: its own rows, edited in by a thread of its own so
// that GitHub's latency never holds the supervisor, at the pace above. Each edit reads the
// comment by its id, puts these rows in and writes it whole (two requests; the first edit
// also lists the issue's comments to find it, or makes it). A failed edit is reported
// through `notice` once and tried again at the next.
class LiveComment {
  public:
    // `note`: said under the title (render_progress); without one, the comment's own is kept.
    LiveComment(issues::IssueSource& source, long issue, ProgressPace pace,
                std::function<void(const std::string&)> notice, std::string note = "");
    ~LiveComment();
    LiveComment(const LiveComment&) = delete;
    LiveComment& operator=(const LiveComment&) = delete;

    // This writer's rows now; `changed`: a state changed since the last call.
    void set(std::vector<ProgressRow> rows, bool changed);
    // The last edit, `min_gap` after this writer's previous one; then, when the comment has
    // another agent's row (another writer, which may still write), the comment read again —
    // 0.5 s, 1 s, 1.5 s, 2 s … apart, and never sooner than three times this writer's slowest
    // edit — until it holds these rows and nobody wrote it since the look before (a writer
    // that read it before this one's edit and wrote after would have written over them). With
    // `ranked`, the verdicts the final words name. The edits made (writes, not reads).
    Result<int> finish(std::vector<ProgressRow> rows, const std::vector<Verdict>& ranked = {});

  private:
    struct Look {
        bool there = false;  // the comment held these rows' states when read
        bool quiet = false;  // nobody wrote it since this writer's previous look
        // Not written: the comment was edited less than `interval` ago, or the ledger is
        // spent; look again after this.
        std::optional<std::chrono::milliseconds> wait;
    };
    // One look: read the comment, and write it when these rows change it and the pace allows.
    Result<Look> look(const std::vector<ProgressRow>& rows, const std::vector<Verdict>& ranked,
                      bool final_rows);
    // Whether this writer may write now (the comment's pace, the ledger); else how long to wait.
    std::optional<std::chrono::milliseconds> held(const std::string& text,
                                                  const std::vector<ProgressRow>& rows,
                                                  bool final_rows);
    bool fast() const;
    void work();

    issues::IssueSource& source_;
    long issue_;
    ProgressPace pace_;
    std::function<void(const std::string&)> notice_;
    std::string note_;  // before the thread: it reads it
    std::chrono::steady_clock::time_point started_;
    std::optional<std::chrono::steady_clock::time_point> last_edit_;  // this writer's last write
    std::chrono::steady_clock::time_point not_before_;                // the next look, not sooner
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<ProgressRow> pending_;
    bool has_pending_ = false, changed_ = false, stopping_ = false, told_ = false;
    int edits_ = 0;
    // Touched by one edit at a time (the thread's, then finish's after it is joined).
    std::optional<long long> comment_id_;
    std::vector<ProgressRow> seen_;         // every row read so far, at its furthest state
    std::string left_;                      // the comment's text as this writer's last look left it
    std::chrono::milliseconds slowest_{0};  // this writer's slowest look (a read and a write)
    std::minstd_rand random_{std::random_device{}()};
    std::thread thread_;
};

}  // namespace cocode::check
