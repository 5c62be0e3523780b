#include "check/progress.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "check/report.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/markdown.h"
#include "run/usage.h"

namespace cocode::check {

namespace {

using json = nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

std::int64_t wall_ms() {
    return duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

constexpr char kRecordStart[] = "<!-- cocode:progress ";

json row_json(const ProgressRow& r) {
    return {{"agent", r.agent},       {"state", r.state},
            {"seconds", r.seconds},   {"commits", r.commits},
            {"tokens", r.tokens},     {"cost_usd", r.cost_usd ? json(*r.cost_usd) : json(nullptr)},
            {"logs_url", r.logs_url}, {"pr_url", r.pr_url}};
}

std::string elapsed(long seconds) {
    if (seconds < 0) return "–";
    if (seconds < 60) return std::to_string(seconds) + "s";
    if (seconds < 3600)
        return std::to_string(seconds / 60) + "m " + std::to_string(seconds % 60) + "s";
    return std::to_string(seconds / 3600) + "h " + std::to_string(seconds / 60 % 60) + "m";
}

bool settled(const std::string& state) {
    return state == "PASS" || state == "FAIL" || state == "failed" || state == "PLAN";
}

// How far along a row is; a state not known here counts as the start.
int stage(const ProgressRow& row) {
    if (settled(row.state)) return 4;
    if (row.state == "judging") return 3;
    if (row.state == "READY") return 2;
    if (row.state == "running") return 1;
    return 0;
}

bool before(const ProgressRow& a, const ProgressRow& b) {
    if (stage(a) != stage(b)) return stage(a) < stage(b);
    return a.seconds < b.seconds;
}

bool holds(const std::vector<ProgressRow>& there, const std::vector<ProgressRow>& rows) {
    return std::all_of(rows.begin(), rows.end(), [&](const ProgressRow& r) {
        return std::any_of(there.begin(), there.end(), [&](const ProgressRow& t) {
            return t.agent == r.agent && t.state == r.state;
        });
    });
}

// Whether one of `rows` is settled and `there` does not show it so: a final row, which no
// pace holds back.
bool final_missing(const std::vector<ProgressRow>& there, const std::vector<ProgressRow>& rows) {
    return std::any_of(rows.begin(), rows.end(), [&](const ProgressRow& r) {
        return settled(r.state) && !holds(there, {r});
    });
}

void by_agent(std::vector<ProgressRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ProgressRow& a, const ProgressRow& b) { return a.agent < b.agent; });
}

const char* icon(const std::string& state) {
    if (state == "PASS") return "✅";
    if (state == "PLAN") return "📝";
    if (state == "FAIL" || state == "failed") return "❌";
    if (state == "READY" || state == "judging") return "🏁";
    if (state == "running") return "⏳";
    return "⏸️";
}

}  // namespace

std::string progress_key(long issue) { return "progress/issue-" + std::to_string(issue); }

ProgressRow row_of(const Verdict& v, const std::string& pr_url) {
    ProgressRow row;
    row.agent = v.agent;
    // A plan round that planned has a plan to approve, not code that passed.
    row.state = v.pass ? (v.plan_round ? "PLAN" : "PASS") : "FAIL";
    row.seconds = v.run_seconds ? static_cast<long>(*v.run_seconds + 0.5) : -1;
    row.commits = static_cast<int>(v.commits.size());
    if (v.usage) {
        row.tokens = v.usage->tokens.total();
        row.cost_usd = v.usage->cost_usd;
    }
    row.logs_url = actions_logs_url();
    row.pr_url = pr_url;
    return row;
}

std::string actions_logs_url() {
    auto env = [](const char* name) {
        const char* value = std::getenv(name);
        return std::string(value ? value : "");
    };
    if (env("GITHUB_ACTIONS") != "true") return {};
    const std::string server = env("GITHUB_SERVER_URL"), repo = env("GITHUB_REPOSITORY"),
                      run = env("GITHUB_RUN_ID"), attempt = env("GITHUB_RUN_ATTEMPT");
    if (server.empty() || repo.empty() || run.empty()) return {};
    return server + "/" + repo + "/actions/runs/" + run +
           (attempt.empty() ? "" : "/attempts/" + attempt);
}

std::vector<ProgressRow> rows_in(const std::string& body) {
    std::vector<ProgressRow> rows;
    auto record = record_in(body, kRecordStart);
    if (!record) return rows;
    for (const auto& r : json_value(*record, "rows", json::array())) {
        if (!r.is_object()) continue;
        ProgressRow row;
        row.agent = json_value(r, "agent", "");
        if (row.agent.empty()) continue;
        row.state = json_value(r, "state", "");
        row.seconds = json_value(r, "seconds", -1L);
        row.commits = json_value(r, "commits", 0);
        row.tokens = json_value<std::uint64_t>(r, "tokens", 0);
        if (r.contains("cost_usd") && r["cost_usd"].is_number())
            row.cost_usd = r["cost_usd"].get<double>();
        row.logs_url = json_value(r, "logs_url", "");
        row.pr_url = json_value(r, "pr_url", "");
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string note_in(const std::string& body) {
    auto record = record_in(body, kRecordStart);
    return record ? json_value(*record, "note", "") : "";
}

std::optional<std::int64_t> edited_at_in(const std::string& body) {
    auto record = record_in(body, kRecordStart);
    if (!record) return std::nullopt;
    const auto at = json_value<std::int64_t>(*record, "edited_at", 0);
    if (at <= 0) return std::nullopt;
    return at;
}

std::vector<ProgressRow> merged(std::vector<ProgressRow> theirs,
                                const std::vector<ProgressRow>& mine) {
    for (const auto& row : mine) {
        auto at = std::find_if(theirs.begin(), theirs.end(),
                               [&](const ProgressRow& r) { return r.agent == row.agent; });
        if (at == theirs.end()) {
            theirs.push_back(row);
            continue;
        }
        // What this writer does not know (a pull request another step opened) is kept.
        ProgressRow kept = row;
        if (kept.pr_url.empty()) kept.pr_url = at->pr_url;
        if (kept.logs_url.empty()) kept.logs_url = at->logs_url;
        // A verdict read back from its comment carries no commits.
        if (kept.commits == 0) kept.commits = at->commits;
        *at = kept;
    }
    by_agent(theirs);
    return theirs;
}

std::vector<ProgressRow> furthest(std::vector<ProgressRow> a, const std::vector<ProgressRow>& b) {
    for (const auto& row : b) {
        auto at = std::find_if(a.begin(), a.end(),
                               [&](const ProgressRow& r) { return r.agent == row.agent; });
        if (at == a.end())
            a.push_back(row);
        else if (before(*at, row))
            *at = row;
    }
    by_agent(a);
    return a;
}

bool all_settled(const std::vector<ProgressRow>& rows) {
    return !rows.empty() && std::all_of(rows.begin(), rows.end(),
                                        [](const ProgressRow& r) { return settled(r.state); });
}

std::string render_progress(long issue, const std::vector<ProgressRow>& rows,
                            const std::vector<Verdict>& ranked, std::int64_t edited_at,
                            const std::string& note) {
    const bool done = all_settled(rows);
    std::string out = "### cocode · " + std::to_string(rows.size()) +
                      (rows.size() == 1 ? " agent" : " agents") + " on #" + std::to_string(issue) +
                      (done ? " · done" : " · running") + "\n\n";
    if (!note.empty()) out += "Chosen by evidence: " + markdown_text(note) + "\n\n";
    out += "| agent | state | time | commits | tokens | cost | logs |\n";
    out += "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& r : rows) {
        out += "| " + markdown_code(r.agent, true) + " | " + icon(r.state) + " " +
               markdown_text(r.state) + " | " + elapsed(r.seconds) + " | " +
               std::to_string(r.commits) + " | " + (r.tokens ? run::format_count(r.tokens) : "–") +
               " | " + (r.cost_usd ? run::format_cost(r.cost_usd) : "–") + " | " +
               (r.logs_url.empty() ? "" : markdown_link("logs", r.logs_url)) + " |\n";
    }
    const bool plans = std::any_of(rows.begin(), rows.end(),
                                   [](const ProgressRow& r) { return r.state == "PLAN"; });
    if (done && plans) {
        out +=
            "\nEach agent's plan is in its own comment: a person with write access approves "
            "one by its hash (docs/review.md).\n";
    } else if (done) {
        out += "\n";
        if (!ranked.empty() && ranked.front().pass)
            out += "Best: " + markdown_code(ranked.front().agent) + ".";
        else if (!ranked.empty())
            out += "No agent passed.";
        int passes = 0;
        for (const auto& r : rows) passes += r.state == "PASS";
        if (ranked.empty())
            out += std::to_string(passes) + " of " + std::to_string(rows.size()) + " passed.";
        std::string prs;
        for (const auto& r : rows)
            if (!r.pr_url.empty())
                prs += " " + markdown_code(r.agent) + ": " +
                       markdown_link(markdown_text(r.pr_url), r.pr_url);
        if (!prs.empty()) out += " Pull requests:" + prs + ".";
        out += " Each agent's verdict is in its own comment.\n";
    }
    json record = {{"issue", issue}, {"rows", json::array()}};
    for (const auto& r : rows) record["rows"].push_back(row_json(r));
    if (edited_at > 0) record["edited_at"] = edited_at;
    if (!note.empty()) record["note"] = note;
    return out + "\n" + hidden_record(kRecordStart, record.dump()) + "\n";
}

bool progress_due(const ProgressPace& pace, milliseconds since_start,
                  std::optional<milliseconds> since_last_edit, bool state_changed) {
    if (!since_last_edit) return true;  // the first: at once
    const bool fast = since_start < pace.fast_for;
    if (*since_last_edit < (fast ? pace.min_gap : std::max(pace.min_gap, pace.slow_min_gap)))
        return false;
    if (state_changed) return true;
    return *since_last_edit >= (fast ? pace.interval : std::max(pace.interval, pace.slow_interval));
}

std::filesystem::path default_content_ledger() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state == '/')
        return std::filesystem::path(state) / "cocode" / "content-writes";
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home && *home ? home : "/tmp") / ".local" / "state" / "cocode" /
           "content-writes";
}

Result<bool> take_content_write(const std::filesystem::path& ledger, std::int64_t now_ms,
                                int per_minute, int per_hour, bool must) {
    std::error_code ec;
    std::filesystem::create_directories(ledger.parent_path(), ec);
    if (ec)
        return Error::general("cannot make " + ledger.parent_path().string() + ": " + ec.message());
    bool taken = false;
    auto ok = update_file_locked(
        ledger,
        [&](const std::optional<std::string>& text) -> Result<std::string> {
            // One line per write: its time in milliseconds. The last hour's are kept.
            std::vector<std::int64_t> kept;
            std::istringstream in(text.value_or(""));
            for (std::int64_t at = 0; in >> at;)
                if (at > now_ms - 3'600'000 && at <= now_ms + 60'000) kept.push_back(at);
            const auto last_minute = std::count_if(
                kept.begin(), kept.end(), [&](std::int64_t at) { return at > now_ms - 60'000; });
            taken = must ||
                    (last_minute < per_minute && kept.size() < static_cast<std::size_t>(per_hour));
            if (taken) kept.push_back(now_ms);
            std::string out;
            for (auto at : kept) out += std::to_string(at) + "\n";
            return out;
        },
        0600, Durability::none);
    if (!ok) return std::move(ok).error();
    return taken;
}

LiveComment::LiveComment(issues::IssueSource& source, long issue, ProgressPace pace,
                         std::function<void(const std::string&)> notice, std::string note)
    : source_(source),
      issue_(issue),
      pace_(pace),
      notice_(std::move(notice)),
      note_(std::move(note)),
      started_(std::chrono::steady_clock::now()),
      thread_([this] { work(); }) {}

LiveComment::~LiveComment() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void LiveComment::set(std::vector<ProgressRow> rows, bool changed) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (has_pending_ && rows == pending_ && !changed) return;
        pending_ = std::move(rows);
        has_pending_ = true;
        changed_ = changed_ || changed;
    }
    wake_.notify_all();
}

bool LiveComment::fast() const { return Steady::now() - started_ < pace_.fast_for; }

std::optional<milliseconds> LiveComment::held(const std::string& text,
                                              const std::vector<ProgressRow>& rows,
                                              bool final_rows) {
    // This writer's last word (its finish), or a row that just settled: never held back.
    const bool must = final_rows || final_missing(rows_in(text), rows);
    if (!must) {
        // The comment's pace, whoever wrote it last. A time ahead of this clock by more than
        // the interval is no writer's (a clock that far off, or a hand): it holds nothing.
        const auto gap = fast() ? pace_.interval : std::max(pace_.interval, pace_.slow_interval);
        if (const auto at = edited_at_in(text)) {
            const auto age = milliseconds(wall_ms() - *at);
            if (age < gap && age > -gap) {
                // Each writer waits a little more than the rest, so that writers who saw the
                // same edit do not all read and write at the next moment it allows.
                const auto jitter = milliseconds(std::uniform_int_distribution<long>(
                    0, std::max<long>(1, static_cast<long>(gap.count() / 5)))(random_));
                return std::max(gap - age, milliseconds(100)) + jitter;
            }
        }
    }
    if (pace_.ledger.empty()) return std::nullopt;
    auto taken =
        take_content_write(pace_.ledger, wall_ms(), pace_.per_minute, pace_.per_hour, must);
    if (!taken) {
        // A ledger that cannot be kept holds nothing back; it is said once.
        if (!told_)
            notice_("live comment on #" + std::to_string(issue_) + ": " + taken.error().message);
        told_ = true;
        return std::nullopt;
    }
    if (!*taken) return milliseconds(10'000);
    return std::nullopt;
}

Result<LiveComment::Look> LiveComment::look(const std::vector<ProgressRow>& rows,
                                            const std::vector<Verdict>& ranked, bool final_rows) {
    const std::string marker = github::comment_marker(progress_key(issue_));
    const auto began = Steady::now();
    Look out;
    // The comment as it is now, with every row seen so far at its furthest and these rows in;
    // the text itself when that changes nothing or the pace holds the change back.
    auto text_for = [&](const std::string& text) {
        const auto now = rows_in(text);
        out.there = holds(now, rows);
        out.quiet = !left_.empty() && text == left_;
        seen_ = furthest(now, seen_);
        const auto next = merged(seen_, rows);
        const auto at = edited_at_in(text);
        const std::string note = note_.empty() ? note_in(text) : note_;
        const auto unchanged =
            marker + "\n" + render_progress(issue_, next, ranked, at.value_or(0), note);
        if (!text.empty() && unchanged == text) return left_ = text;
        if (!text.empty()) {
            out.wait = held(text, rows, final_rows);
            if (out.wait) return left_ = text;
        }
        return left_ = marker + "\n" + render_progress(issue_, next, ranked, wall_ms(), note);
    };
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!comment_id_) {
            auto comments = source_.comments(issue_);
            if (!comments) return std::move(comments).error();
            for (const auto& c : *comments)
                if (c.body.rfind(marker, 0) == 0) {
                    comment_id_ = c.id;  // the oldest: the one every writer keeps
                    break;
                }
        }
        if (!comment_id_) {
            // None yet: made by the one call that converges racing writers on one comment.
            if (!pace_.ledger.empty())
                (void)take_content_write(pace_.ledger, wall_ms(), pace_.per_minute, pace_.per_hour,
                                         true);
            // One there already (a writer that raced this one): these rows merged into it.
            auto made = source_.upsert_comment(issue_, marker, text_for(""), text_for);
            if (!made) return std::move(made).error();
            comment_id_ = made->id;
            ++edits_;
            last_edit_ = Steady::now();
            slowest_ = std::max(slowest_, duration_cast<milliseconds>(Steady::now() - began));
            return out;
        }
        std::string before;
        auto edited = source_.edit_comment(issue_, *comment_id_, [&](const std::string& text) {
            before = text;
            return text_for(text);
        });
        if (!edited) return std::move(edited).error();
        if (!*edited) {  // gone: a duplicate its writer removed, or deleted by a person
            comment_id_.reset();
            left_.clear();
            continue;
        }
        if (left_ != before) {
            ++edits_;
            last_edit_ = Steady::now();
        }
        slowest_ = std::max(slowest_, duration_cast<milliseconds>(Steady::now() - began));
        return out;
    }
    return Error::general("live comment on #" + std::to_string(issue_) +
                          ": the comment went away twice while being edited");
}

void LiveComment::work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        const auto now = Steady::now();
        std::optional<milliseconds> since_last;
        if (last_edit_) since_last = duration_cast<milliseconds>(now - *last_edit_);
        if (has_pending_ && now >= not_before_ &&
            progress_due(pace_, duration_cast<milliseconds>(now - started_), since_last,
                         changed_)) {
            const std::vector<ProgressRow> rows = pending_;
            const bool changed = changed_;
            has_pending_ = false;
            changed_ = false;
            lock.unlock();
            auto looked = look(rows, {}, false);
            lock.lock();
            if (!looked) {
                has_pending_ = true;  // again at the next turn
                last_edit_ = Steady::now();
                if (!told_)
                    notice_("live comment on #" + std::to_string(issue_) + ": " +
                            looked.error().message);
                told_ = true;
            } else if (looked->wait) {
                // Left to the next look, unless newer rows came meanwhile.
                not_before_ = Steady::now() + *looked->wait;
                if (!has_pending_) pending_ = rows;
                has_pending_ = true;
                changed_ = changed_ || changed;
            }
            continue;
        }
        auto nap = milliseconds(500);
        if (has_pending_ && not_before_ > now)
            nap = std::min(nap, duration_cast<milliseconds>(not_before_ - now) + milliseconds(1));
        wake_.wait_for(lock, nap);
    }
}

Result<int> LiveComment::finish(std::vector<ProgressRow> rows, const std::vector<Verdict>& ranked) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    // This writer's edits stay `min_gap` apart, its last one too.
    if (last_edit_) {
        const auto gap = fast() ? pace_.min_gap : std::max(pace_.min_gap, pace_.slow_min_gap);
        std::this_thread::sleep_until(*last_edit_ + gap);
    }
    auto first = look(rows, ranked, true);
    if (!first) return std::move(first).error();
    // Only another writer can write over these rows, and another agent's row is the only
    // sign of one (a writer that settled its own may still be reading back): alone on the
    // issue, the comment is final as written.
    const bool others_at_work = std::any_of(seen_.begin(), seen_.end(), [&](const ProgressRow& r) {
        return std::none_of(rows.begin(), rows.end(),
                            [&](const ProgressRow& m) { return m.agent == r.agent; });
    });
    if (!others_at_work) return edits_;
    // Read again: a writer that read the comment before this one's edit and wrote after it
    // has written over these rows; the next look puts them back. Done when these rows are
    // there and nobody wrote since the look before, a wait longer than a slow edit.
    for (int attempt = 1; attempt <= 8; ++attempt) {
        std::this_thread::sleep_for(
            std::max(milliseconds(500 * std::min(attempt, 4)), 3 * slowest_));
        auto again = look(rows, ranked, true);
        if (!again) return std::move(again).error();
        if (again->there && again->quiet) break;
    }
    return edits_;
}

}  // namespace cocode::check
