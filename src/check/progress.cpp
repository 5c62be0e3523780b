#include "check/progress.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "check/report.h"
#include "core/json_text.h"
#include "run/usage.h"

namespace cocode::check {

namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr char kRecordStart[] = "<!-- cocode:progress ";

json row_json(const ProgressRow& r) {
    return {{"agent", r.agent},       {"state", r.state},
            {"seconds", r.seconds},   {"commits", r.commits},
            {"tokens", r.tokens},     {"cost_usd", r.cost_usd ? json(*r.cost_usd) : json(nullptr)},
            {"logs_url", r.logs_url}, {"pr_url", r.pr_url}};
}

// A table cell of text someone else wrote (an agent's name is the configuration's; a URL is
// GitHub's): no pipe, no newline, no HTML.
std::string cell(std::string text) {
    std::string out;
    for (char c : text) {
        if (c == '|' || c == '\n' || c == '\r' || c == '<' || c == '>' || c == '`') continue;
        out += c;
    }
    return out;
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
                            const std::vector<Verdict>& ranked) {
    const bool done = all_settled(rows);
    std::string out = "### cocode · " + std::to_string(rows.size()) +
                      (rows.size() == 1 ? " agent" : " agents") + " on #" + std::to_string(issue) +
                      (done ? " · done" : " · running") + "\n\n";
    out += "| agent | state | time | commits | tokens | cost | logs |\n";
    out += "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& r : rows) {
        out += "| `" + cell(r.agent) + "` | " + icon(r.state) + " " + cell(r.state) + " | " +
               elapsed(r.seconds) + " | " + std::to_string(r.commits) + " | " +
               (r.tokens ? run::format_count(r.tokens) : "–") + " | " +
               (r.cost_usd ? run::format_cost(r.cost_usd) : "–") + " | " +
               (r.logs_url.empty() ? "" : "[logs](" + cell(r.logs_url) + ")") + " |\n";
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
            out += "Best: `" + cell(ranked.front().agent) + "`.";
        else if (!ranked.empty())
            out += "No agent passed.";
        int passes = 0;
        for (const auto& r : rows) passes += r.state == "PASS";
        if (ranked.empty())
            out += std::to_string(passes) + " of " + std::to_string(rows.size()) + " passed.";
        std::string prs;
        for (const auto& r : rows)
            if (!r.pr_url.empty()) prs += " `" + cell(r.agent) + "`: " + cell(r.pr_url);
        if (!prs.empty()) out += " Pull requests:" + prs + ".";
        out += " Each agent's verdict is in its own comment.\n";
    }
    json record = {{"issue", issue}, {"rows", json::array()}};
    for (const auto& r : rows) record["rows"].push_back(row_json(r));
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

LiveComment::LiveComment(issues::IssueSource& source, long issue, ProgressPace pace,
                         std::function<void(const std::string&)> notice)
    : source_(source),
      issue_(issue),
      pace_(pace),
      notice_(std::move(notice)),
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

Result<void> LiveComment::edit(const std::vector<ProgressRow>& rows,
                               const std::vector<Verdict>& ranked, bool* there) {
    const std::string marker = github::comment_marker(progress_key(issue_));
    // The comment as it is now, with every row seen so far at its furthest and these rows in.
    auto text_for = [&](const std::string& text) {
        const auto now = rows_in(text);
        if (there) *there = holds(now, rows);
        seen_ = furthest(now, seen_);
        return marker + "\n" + render_progress(issue_, merged(seen_, rows), ranked);
    };
    for (int look = 0; look < 2; ++look) {
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
            auto made = source_.upsert_comment(issue_, marker, text_for(""));
            if (!made) return std::move(made).error();
            comment_id_ = made->id;
            ++edits_;
            last_edit_ = std::chrono::steady_clock::now();
            return {};
        }
        bool wrote = false;
        auto edited = source_.edit_comment(issue_, *comment_id_, [&](const std::string& text) {
            std::string next = text_for(text);
            wrote = next != text;
            return next;
        });
        if (!edited) return std::move(edited).error();
        if (!*edited) {  // gone: a duplicate its writer removed, or deleted by a person
            comment_id_.reset();
            continue;
        }
        if (wrote) ++edits_;
        last_edit_ = std::chrono::steady_clock::now();
        return {};
    }
    return Error::general("live comment on #" + std::to_string(issue_) +
                          ": the comment went away twice while being edited");
}

void LiveComment::work() {
    using std::chrono::duration_cast;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        const auto now = std::chrono::steady_clock::now();
        std::optional<milliseconds> since_last;
        if (last_edit_) since_last = duration_cast<milliseconds>(now - *last_edit_);
        if (has_pending_ && progress_due(pace_, duration_cast<milliseconds>(now - started_),
                                         since_last, changed_)) {
            const std::vector<ProgressRow> rows = pending_;
            has_pending_ = false;
            changed_ = false;
            lock.unlock();
            auto ok = edit(rows, {});
            lock.lock();
            if (!ok) {
                has_pending_ = true;  // again at the next turn
                last_edit_ = std::chrono::steady_clock::now();
                if (!told_)
                    notice_("live comment on #" + std::to_string(issue_) + ": " +
                            ok.error().message);
                told_ = true;
            }
            continue;
        }
        wake_.wait_for(lock, std::chrono::milliseconds(500));
    }
}

Result<int> LiveComment::finish(std::vector<ProgressRow> rows, const std::vector<Verdict>& ranked) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (auto ok = edit(rows, ranked); !ok) return std::move(ok).error();
    // Only another writer can write over these rows, and another agent's row is the only
    // sign of one (a writer that settled its own may still be reading back): alone on the
    // issue, the comment is final as written.
    const bool others_at_work = std::any_of(seen_.begin(), seen_.end(), [&](const ProgressRow& r) {
        return std::none_of(rows.begin(), rows.end(),
                            [&](const ProgressRow& m) { return m.agent == r.agent; });
    });
    if (!others_at_work) return edits_;
    // Read again: a writer that read the comment before that edit and wrote after it has
    // written over these rows; the next look puts them back.
    // Until these rows are there and every row is settled (a writer still at work may still
    // write what it read before this one's edit), at most five looks over about 7 s.
    for (int attempt = 1; attempt <= 5; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500 * std::min(attempt, 4)));
        bool there = false;
        if (auto ok = edit(rows, ranked, &there); !ok) return std::move(ok).error();
        if (there && all_settled(seen_)) break;
    }
    return edits_;
}

}  // namespace cocode::check
