#include "check/outcome.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "check/run_check.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "git/cli.h"
#include "git/repository.h"
#include "github/git_remote.h"

namespace cocode::check {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::system_clock;

namespace {

// Each non-blank line of `text` (trailing blanks cut) with how often it occurs.
std::map<std::string, int> line_counts(const std::optional<std::string>& text) {
    std::map<std::string, int> counts;
    if (!text) return counts;
    std::size_t start = 0;
    while (start < text->size()) {
        std::size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        std::size_t last = end;
        while (last > start && std::isspace(static_cast<unsigned char>((*text)[last - 1]))) --last;
        std::size_t first = start;
        while (first < last && std::isspace(static_cast<unsigned char>((*text)[first]))) ++first;
        if (first < last) ++counts[text->substr(start, last - start)];
        start = end + 1;
    }
    return counts;
}

int count_of(const std::map<std::string, int>& counts, const std::string& line) {
    auto it = counts.find(line);
    return it == counts.end() ? 0 : it->second;
}

json optional_text(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

// Two records say the same when all but the time of learning it agree.
bool same_outcome(const PullOutcome& a, const PullOutcome& b) {
    json x = outcome_json(a), y = outcome_json(b);
    x.erase("time");
    y.erase("time");
    return x == y;
}

// The agent's last judged commit of a pair: the newest verdict's head, else its READY commit.
std::string agent_head(const std::vector<const run::RunRecord*>& pair) {
    for (auto it = pair.rbegin(); it != pair.rend(); ++it) {
        if (auto verdict = recorded_verdict((*it)->folder); verdict && !verdict->head.empty())
            return verdict->head;
        if (!(*it)->ready_commit.empty()) return (*it)->ready_commit;
    }
    return "";
}

// The texts of every file the agent's change touched, at the base, the agent's commit and the
// merge; an error when git does not have one of the three commits.
Result<std::vector<FileTexts>> texts_of_change(const git::Repository& repo, const std::string& base,
                                               const std::string& head, const std::string& merged) {
    auto changes = repo.changed_files(base, head);
    if (!changes.ok()) return std::move(changes).error();
    std::vector<FileTexts> out;
    for (const auto& change : *changes) {
        if (change.binary || change.status == 'D') continue;
        FileTexts file{change.path, {}, {}, {}};
        for (auto [revision, text] : {std::pair{&base, &file.base}, std::pair{&head, &file.agent},
                                      std::pair{&merged, &file.merged}}) {
            auto content = repo.file_at(*revision, change.path);
            if (!content.ok()) return std::move(content).error();
            *text = std::move(*content);
        }
        out.push_back(std::move(file));
    }
    return out;
}

// The base branch as origin has it now, fetched once per refresh (a fetch that failed is not
// tried again for every pull request into that base).
class BaseFetcher {
  public:
    explicit BaseFetcher(fs::path root) : root_(std::move(root)) {}
    Result<std::string> ref_of(const std::string& base) {
        auto known = fetched_.find(base);
        if (known == fetched_.end()) {
            const std::string ref = "refs/remotes/origin/" + base;
            auto fetched = git::git_output(
                root_,
                {"fetch", "--quiet", "--no-tags", "origin", "+refs/heads/" + base + ":" + ref},
                github::origin_git_options(root_));
            known = fetched_
                        .emplace(base, fetched.ok() ? Result<std::string>(ref)
                                                    : Result<std::string>(fetched.error()))
                        .first;
        }
        return known->second;
    }

  private:
    fs::path root_;
    std::map<std::string, Result<std::string>> fetched_;
};

// The outcome of one pair, asked of GitHub (and git, once merged); nullopt when the branch has
// no pull request.
Result<std::optional<PullOutcome>> learn(const fs::path& root, const git::Repository& repo,
                                         github::GitHub& github, BaseFetcher& bases,
                                         const std::vector<const run::RunRecord*>& pair,
                                         Clock::time_point now, std::vector<std::string>& unknown) {
    const run::RunRecord& first = *pair.front();
    auto pulls = github.pull_requests_for(first.branch);
    if (!pulls.ok()) return std::move(pulls).error();
    if (pulls->empty()) return std::optional<PullOutcome>{};
    const github::PullRequest& pr = pulls->front();  // newest first
    PullOutcome out;
    out.time = format_utc_timestamp(now);
    out.pull_request = pr.number;
    out.url = pr.html_url;
    out.base = pr.base_ref;
    out.created_at = pr.created_at;
    out.closed_at = pr.closed_at;
    out.merged_at = pr.merged_at;
    out.merge_commit = pr.merge_commit_sha;
    out.state = !pr.merged_at.empty() ? "merged" : pr.state == "closed" ? "closed" : "open";
    if (!out.merged()) {
        out.merge_commit.clear();  // an open pull request's test merge is no merge
        return std::optional<PullOutcome>(out);
    }
    const auto merged_at = parse_utc_timestamp(out.merged_at);
    std::optional<Clock::time_point> ready;
    for (const auto* run : pair)
        if ((ready = ready_at(*run))) break;
    if (merged_at && ready)
        out.ready_to_merge_seconds = std::chrono::duration<double>(*merged_at - *ready).count();
    const std::string what = "#" + std::to_string(first.issue) + " " + first.agent +
                             " (pull request #" + std::to_string(pr.number) + ")";
    auto ref = bases.ref_of(out.base.empty() ? "main" : out.base);
    if (!ref.ok()) {
        unknown.push_back(what + ": " + ref.error().message);
        return std::optional<PullOutcome>(out);
    }
    if (merged_at) {
        auto after = git::commits_in(root, out.merge_commit + ".." + *ref);
        if (!after.ok())
            unknown.push_back(what + ": " + after.error().message);
        else if (auto revert = revert_in(*after, out.merge_commit, pr.number, github.repo().full(),
                                         *merged_at)) {
            out.reverted_by = revert->commit;
            out.reverted_at = revert->at;
        }
    }
    const std::string head = agent_head(pair);
    auto texts = texts_of_change(repo, first.base_commit, head, out.merge_commit);
    if (!texts.ok())
        unknown.push_back(what + ": lines kept: " + texts.error().message);
    else
        out.lines = lines_kept(*texts);
    return std::optional<PullOutcome>(out);
}

}  // namespace

json outcome_json(const PullOutcome& o) {
    json lines = nullptr;
    if (o.lines) lines = {{"agent", o.lines->agent}, {"kept", o.lines->kept}};
    return {{"time", o.time},
            {"pull_request", o.pull_request},
            {"url", o.url},
            {"state", o.state},
            {"base", o.base},
            {"created_at", optional_text(o.created_at)},
            {"closed_at", optional_text(o.closed_at)},
            {"merged_at", optional_text(o.merged_at)},
            {"merge_commit", optional_text(o.merge_commit)},
            {"ready_to_merge_seconds",
             o.ready_to_merge_seconds ? json(*o.ready_to_merge_seconds) : json(nullptr)},
            {"reverted_by", optional_text(o.reverted_by)},
            {"reverted_at", optional_text(o.reverted_at)},
            {"lines", lines}};
}

std::optional<PullOutcome> outcome_from_json(const json& value) {
    if (!value.is_object() || json_value(value, "pull_request", 0L) <= 0) return std::nullopt;
    PullOutcome o;
    o.time = json_value(value, "time", "");
    o.pull_request = json_value(value, "pull_request", 0L);
    o.url = json_value(value, "url", "");
    o.state = json_value(value, "state", "");
    if (o.state != "open" && o.state != "closed" && o.state != "merged") return std::nullopt;
    o.base = json_value(value, "base", "");
    o.created_at = json_value(value, "created_at", "");
    o.closed_at = json_value(value, "closed_at", "");
    o.merged_at = json_value(value, "merged_at", "");
    o.merge_commit = json_value(value, "merge_commit", "");
    if (value.contains("ready_to_merge_seconds") && value["ready_to_merge_seconds"].is_number())
        o.ready_to_merge_seconds = value["ready_to_merge_seconds"].get<double>();
    o.reverted_by = json_value(value, "reverted_by", "");
    o.reverted_at = json_value(value, "reverted_at", "");
    if (value.contains("lines") && value["lines"].is_object())
        o.lines = LinesKept{json_value(value["lines"], "agent", 0),
                            json_value(value["lines"], "kept", 0)};
    return o;
}

fs::path outcomes_path(const fs::path& repo_root, const std::string& first_run_id) {
    return repo_root / kOutcomesDir / (first_run_id + ".jsonl");
}

std::optional<PullOutcome> latest_outcome(const fs::path& repo_root,
                                          const std::string& first_run_id) {
    auto text = read_file(outcomes_path(repo_root, first_run_id), std::size_t{4} << 20);
    if (!text) return std::nullopt;
    std::optional<PullOutcome> latest;
    std::size_t start = 0;
    while (start < text->size()) {
        std::size_t end = text->find('\n', start);
        if (end == std::string::npos) break;  // a torn last line is not a record
        json value = json::parse(text->begin() + static_cast<std::ptrdiff_t>(start),
                                 text->begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
        if (auto outcome = outcome_from_json(value)) latest = std::move(outcome);
        start = end + 1;
    }
    return latest;
}

Result<bool> record_outcome(const fs::path& repo_root, const std::string& first_run_id,
                            const PullOutcome& outcome) {
    if (auto latest = latest_outcome(repo_root, first_run_id);
        latest && same_outcome(*latest, outcome))
        return false;
    const fs::path path = outcomes_path(repo_root, first_run_id);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
        return Error::general("cannot create " + path.parent_path().string() + ": " + ec.message());
    if (auto ok = append_line_locked(path, json_dump(outcome_json(outcome))); !ok)
        return std::move(ok).error();
    return true;
}

bool outcome_is_settled(const PullOutcome& o, Clock::time_point now) {
    if (o.state == "closed") return true;
    if (!o.merged()) return false;
    if (o.reverted()) return true;
    const auto merged_at = parse_utc_timestamp(o.merged_at);
    return merged_at && now - *merged_at > kRevertWindow && o.lines.has_value();
}

LinesKept lines_kept(const std::vector<FileTexts>& files) {
    LinesKept out;
    for (const auto& file : files) {
        const auto base = line_counts(file.base);
        const auto agent = line_counts(file.agent);
        const auto merged = line_counts(file.merged);
        for (const auto& [line, count] : agent) {
            const int before = count_of(base, line);
            const int added = count - before;
            if (added <= 0) continue;
            out.agent += added;
            out.kept += std::clamp(count_of(merged, line) - before, 0, added);
        }
    }
    return out;
}

std::optional<Revert> revert_in(const std::vector<git::HistoryCommit>& after,
                                const std::string& merge_commit, long pull,
                                const std::string& repo_full_name, Clock::time_point merged_at) {
    std::optional<Revert> oldest;
    for (const auto& c : after) {
        if (c.time > merged_at + kRevertWindow) continue;
        const bool reverts =
            (!merge_commit.empty() &&
             c.message.find("This reverts commit " + merge_commit) != std::string::npos) ||
            c.message.find("Reverts " + repo_full_name + "#" + std::to_string(pull)) !=
                std::string::npos;
        if (reverts) oldest = Revert{c.id, format_utc_timestamp(c.time)};  // newest first
    }
    return oldest;
}

std::optional<Clock::time_point> ready_at(const run::RunRecord& r) {
    if (r.ready_commit.empty()) return std::nullopt;
    // As cocode saw it, beside the seal; the events (the agent's to have written) only for a
    // run from before that was kept.
    if (!r.ready_time.empty()) return parse_utc_timestamp(r.ready_time);
    auto events = read_file_no_follow(run::RunFiles{r.folder}.events(), std::size_t{16} << 20);
    if (!events) return std::nullopt;
    const auto ready = first_json_line(*events, "\"READY\"", [](const json& e) {
        return json_value(e, "type", "") == "READY" &&
               parse_utc_timestamp(json_value(e, "time", "")).has_value();
    });
    if (!ready) return std::nullopt;
    return parse_utc_timestamp(json_value(*ready, "time", ""));
}

Result<Refreshed> refresh_outcomes(const fs::path& repo_root,
                                   const std::vector<run::RunRecord>& runs, github::GitHub& github,
                                   Clock::time_point now, const std::string& only_branch) {
    auto repo = git::Repository::open(repo_root);
    if (!repo.ok()) return std::move(repo).error();
    BaseFetcher bases(repo_root);
    Refreshed out;
    for (const auto& pair : pairs_of(runs)) {
        const run::RunRecord& first = *pair.front();
        if (!only_branch.empty() && first.branch != only_branch) continue;
        if (std::all_of(pair.begin(), pair.end(), [](const auto* r) { return r->plan_round; }))
            continue;  // a plan pushes nothing
        if (auto known = latest_outcome(repo_root, first.run_id);
            known && outcome_is_settled(*known, now)) {
            ++out.settled;
            continue;
        }
        ++out.asked;
        auto outcome = learn(repo_root, *repo, github, bases, pair, now, out.unknown);
        if (!outcome.ok()) return std::move(outcome).error();
        if (!*outcome) continue;
        auto recorded = record_outcome(repo_root, first.run_id, **outcome);
        if (!recorded.ok()) return std::move(recorded).error();
        out.recorded += *recorded;
    }
    return out;
}

}  // namespace cocode::check
