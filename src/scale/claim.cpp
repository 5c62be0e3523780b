#include "scale/claim.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>

namespace cocode::scale {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMetaPrefix = "<!-- cocode-claim ";
constexpr std::string_view kMetaSuffix = " -->";
// Looks at the list before giving up on seeing a comment just made (100 ms, doubling to 3.2 s:
// about 30 s in all, the same patience as publishing).
constexpr int kRounds = 12;

std::time_t parse_time(const std::string& text, const char* format) {
    std::tm tm{};
    if (text.empty() || strptime(text.c_str(), format, &tm) == nullptr) return 0;
    return timegm(&tm);
}

std::optional<ClaimState> state_named(std::string_view name) {
    for (auto s : {ClaimState::claimed, ClaimState::running, ClaimState::done, ClaimState::failed})
        if (claim_state_name(s) == name) return s;
    return std::nullopt;
}

// The claim a comment holds, when it holds one.
std::optional<Claim> claim_of(long issue, const github::Comment& comment) {
    if (comment.body.rfind(claim_marker(issue), 0) != 0) return std::nullopt;
    const auto at = comment.body.find(kMetaPrefix);
    if (at == std::string::npos) return std::nullopt;
    const auto start = at + kMetaPrefix.size();
    const auto end = comment.body.find(kMetaSuffix, start);
    if (end == std::string::npos) return std::nullopt;
    const json meta = json::parse(comment.body.substr(start, end - start), nullptr, false);
    if (!meta.is_object()) return std::nullopt;
    Claim claim;
    claim.issue = issue;
    claim.comment_id = comment.id;
    claim.updated_at = comment.updated_at;
    try {
        claim.request.id = meta.at("request").get<long long>();
        auto kind = request_kind_named(meta.value("kind", "label"));
        if (!kind) return std::nullopt;
        claim.request.kind = *kind;
        claim.watcher = meta.at("watcher").get<std::string>();
        // A watcher's id is a host name and a random part; anything else is not a claim (and
        // never reaches a terminal).
        if (claim.watcher.empty() || claim.watcher.size() > 80 ||
            !std::all_of(claim.watcher.begin(), claim.watcher.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
                       c == '_';
            }))
            return std::nullopt;
        claim.nonce = meta.at("nonce").get<std::string>();
        auto state = state_named(meta.at("state").get<std::string>());
        if (!state) return std::nullopt;
        claim.state = *state;
        claim.lease = std::chrono::seconds(meta.at("lease").get<long long>());
        claim.beat = meta.value("beat", 0LL);
    } catch (const json::exception&) {
        return std::nullopt;
    }
    return claim;
}

// Anyone can comment; only the repository's people and bots (a GitHub App's account, the
// Actions bot) can claim.
bool trusted(const github::Comment& comment) {
    const auto& a = comment.author_association;
    return comment.author_is_bot || a == "OWNER" || a == "MEMBER" || a == "COLLABORATOR";
}

std::string body_of(const Claim& claim, const std::string& text) {
    const json meta = {{"request", claim.request.id},
                       {"kind", request_kind_name(claim.request.kind)},
                       {"watcher", claim.watcher},
                       {"nonce", claim.nonce},
                       {"state", claim_state_name(claim.state)},
                       {"lease", claim.lease.count()},
                       {"beat", claim.beat}};
    return claim_marker(claim.issue) + "\n" + std::string(kMetaPrefix) + meta.dump() +
           std::string(kMetaSuffix) + "\n" + text;
}

std::string taken_text(const Claim& claim, const std::string& note) {
    return "🔒 cocode: taken by watcher `" + claim.watcher + "`" +
           (note.empty() ? std::string() : " — " + note) + ".";
}

}  // namespace

namespace {
constexpr std::string_view kKindNames[] = {"label", "command", "review", "review_comment",
                                           "check_suite"};
}  // namespace

std::string_view request_kind_name(Request::Kind kind) {
    return kKindNames[static_cast<int>(kind)];
}

std::optional<Request::Kind> request_kind_named(std::string_view name) {
    for (int i = 0; i < 5; ++i)
        if (kKindNames[i] == name) return static_cast<Request::Kind>(i);
    return std::nullopt;
}

std::string_view claim_state_name(ClaimState state) {
    switch (state) {
        case ClaimState::claimed:
            return "claimed";
        case ClaimState::running:
            return "running";
        case ClaimState::done:
            return "done";
        case ClaimState::failed:
            return "failed";
    }
    return "claimed";
}

std::string claim_marker(long issue) {
    return github::comment_marker("claim/issue-" + std::to_string(issue));
}

std::vector<Claim> claims_in(long issue, const std::vector<github::Comment>& comments) {
    std::vector<Claim> claims;
    for (const auto& comment : comments)
        if (trusted(comment))
            if (auto claim = claim_of(issue, comment)) claims.push_back(std::move(*claim));
    std::sort(claims.begin(), claims.end(),
              [](const Claim& a, const Claim& b) { return a.comment_id < b.comment_id; });
    return claims;
}

LabelRequest latest_labelling(const std::vector<github::IssueEvent>& events,
                              const std::string& label) {
    LabelRequest latest;
    for (const auto& e : events)
        if (e.event == "labeled" && e.label == label && e.id > latest.id)
            latest = {e.id, e.actor.empty() ? std::string() : "@" + e.actor, e.actor,
                      github::bot_account(e.actor, e.actor_is_bot), e.created_at};
    return latest;
}

Result<LabelRequest> latest_request(github::GitHub& github, long issue, const std::string& label) {
    auto events = github.issue_events(issue);
    if (!events) return std::move(events).error();
    return latest_labelling(*events, label);
}

std::time_t server_now(const github::GitHub& github) {
    const std::time_t date =
        parse_time(github.http().stats().server_date, "%a, %d %b %Y %H:%M:%S GMT");
    return date != 0 ? date : std::time(nullptr);
}

std::string github_time(std::time_t time) {
    char stamp[32];
    std::tm tm{};
    gmtime_r(&time, &tm);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return stamp;
}

std::time_t time_of_github(const std::string& text) {
    return parse_time(text, "%Y-%m-%dT%H:%M:%SZ");
}

bool lapsed(const Claim& claim, std::time_t now) {
    if (claim.final()) return false;
    const std::time_t stamped = parse_time(claim.updated_at, "%Y-%m-%dT%H:%M:%SZ");
    // A claim whose time cannot be read is never taken as dead: never sooner than the lease.
    return stamped != 0 && now > stamped + claim.lease.count();
}

std::string new_nonce() {
    std::random_device random;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%08x%08x", random(), random());
    return buf;
}

ClaimDecision decide_claim(const std::vector<Claim>& claims, const Request& request,
                           const std::string& watcher, const std::string& nonce, bool awaiting_own,
                           std::time_t now) {
    using Kind = ClaimDecision::Kind;
    ClaimDecision d;
    auto is_mine = [&](const Claim& c) { return c.nonce == nonce && c.watcher == watcher; };
    const auto own = std::find_if(claims.begin(), claims.end(), is_mine);
    // Ours may have been made but the list does not show it: a list behind the write is given
    // time (the caller stops waiting when it never shows, and the claim is made again).
    if (awaiting_own && own == claims.end()) return d;
    // Made twice (the first one showed late): the younger goes.
    if (own != claims.end())
        for (auto c = std::next(own); c != claims.end(); ++c)
            if (is_mine(*c)) d.remove.push_back(c->comment_id);
    // A newer request than ours: this one is over; the next poll takes the newer one.
    if (std::any_of(claims.begin(), claims.end(),
                    [&](const Claim& c) { return c.request.supersedes(request); })) {
        if (own != claims.end()) d.remove.push_back(own->comment_id);
        d.kind = Kind::superseded;
        return d;
    }
    // Dead claims on this request are taken over, and this watcher's orphans let go: deleted,
    // so the contest starts afresh.
    std::vector<Claim> alive;
    for (auto c = claims.begin(); c != claims.end(); ++c) {
        if (c->request != request || (is_mine(*c) && c != own)) continue;
        const bool orphan = c->watcher == watcher && c->nonce != nonce && !c->final();
        if (orphan || (lapsed(*c, now) && c->nonce != nonce)) {
            d.remove.push_back(c->comment_id);
            continue;
        }
        alive.push_back(*c);
    }
    if (own == claims.end()) {
        d.kind = alive.empty() ? Kind::make : Kind::taken;
        if (!alive.empty()) d.claim = alive.front();
        return d;
    }
    // Ours shows, and with it every claim made before it: the oldest alive one wins.
    if (!alive.empty() && is_mine(alive.front())) {
        d.kind = Kind::won;
        d.claim = alive.front();
        return d;
    }
    d.remove.push_back(own->comment_id);
    d.kind = Kind::taken;
    d.claim = alive.empty() ? *own : alive.front();
    return d;
}

std::optional<Claim> holder_of(const std::vector<Claim>& claims, const Request& request,
                               const std::string& watcher,
                               const std::vector<std::string>& known_nonces, std::time_t now) {
    for (const auto& c : claims) {
        if (c.request != request && !c.request.supersedes(request)) continue;
        if (lapsed(c, now)) continue;
        const bool orphan =
            c.watcher == watcher && !c.final() &&
            std::find(known_nonces.begin(), known_nonces.end(), c.nonce) == known_nonces.end();
        if (!orphan) return c;
    }
    return std::nullopt;
}

Result<ClaimOutcome> contend(github::GitHub& github, long issue, const Request& request,
                             const ClaimTerms& terms, ClaimAttempt& attempt,
                             const std::function<Result<void>()>& record) {
    Claim mine;
    mine.issue = issue;
    mine.request = request;
    mine.watcher = terms.watcher;
    mine.nonce = attempt.nonce;
    mine.lease = terms.lease;
    int unseen = 0;  // looks since ours was (maybe) made that did not show it
    int reread = 0;  // claims read again by their id (a list showed them stale)
    std::string last_failure = "GitHub's list of comments never showed the claim just made";
    bool look_at_once = false;  // just after our claim is made: the list often shows it already
    for (int round = 0; round < kRounds; ++round) {
        if (round > 0 && !look_at_once) {
            const auto delay = std::chrono::milliseconds(100LL << std::min(round - 1, 5));
            if (auto paused = github.http().pause(delay, last_failure); !paused)
                return std::move(paused).error();
        }
        look_at_once = false;
        auto listed = github.comments(issue);
        if (!listed) return std::move(listed).error();
        auto claims = claims_in(issue, *listed);
        const bool awaiting = attempt.sent && unseen < kRounds / 2;
        auto d = decide_claim(claims, request, terms.watcher, attempt.nonce, awaiting,
                              server_now(github));
        // A list may show a claim as it was before its last edits (GitHub's replicas lag): one
        // this would delete — an orphan of this watcher's, one past its lease — may have been
        // answered or renewed since. Each is read again by its id, which is as it is now, and
        // the contest decided on what is there now.
        for (bool fresh = false; !fresh && reread < kRounds * 4;) {
            fresh = true;
            for (long long id : d.remove) {
                auto was = std::find_if(claims.begin(), claims.end(),
                                        [&](const Claim& c) { return c.comment_id == id; });
                if (was == claims.end() ||
                    (was->watcher == terms.watcher && was->nonce == attempt.nonce))
                    continue;  // our own, made twice: the younger goes
                ++reread;
                auto now = github.comment(id);
                if (!now) return std::move(now).error();
                std::optional<Claim> current;
                if (*now && trusted(**now)) current = claim_of(issue, **now);
                if (current && current->updated_at == was->updated_at &&
                    current->state == was->state)
                    continue;  // as listed
                if (current)
                    *was = std::move(*current);
                else
                    claims.erase(was);
                fresh = false;
                break;
            }
            if (!fresh)
                d = decide_claim(claims, request, terms.watcher, attempt.nonce, awaiting,
                                 server_now(github));
        }
        for (long long id : d.remove) {
            if (auto gone = github.delete_comment(id); !gone) return std::move(gone).error();
            if (id != attempt.comment_id) continue;
            // Ours went: what is left to hand back is another of ours still listed, if any.
            attempt.comment_id = 0;
            attempt.sent = false;
            for (const auto& c : claims)
                if (c.watcher == terms.watcher && c.nonce == attempt.nonce &&
                    std::find(d.remove.begin(), d.remove.end(), c.comment_id) == d.remove.end())
                    attempt = ClaimAttempt{attempt.nonce, true, c.comment_id};
            if (auto kept = record(); !kept) return std::move(kept).error();
        }
        switch (d.kind) {
            case ClaimDecision::Kind::wait:
                ++unseen;
                continue;
            case ClaimDecision::Kind::make: {
                // Ours never showed (or was never made): made now, the nonce on disk first.
                attempt.sent = true;
                attempt.comment_id = 0;
                if (auto kept = record(); !kept) return std::move(kept).error();
                auto made = github.create_comment_or_unknown(
                    issue, body_of(mine, taken_text(mine, terms.note)), last_failure);
                if (!made) return std::move(made).error();
                if (*made) {  // the 201: its id is ours to hand back from now on
                    attempt.comment_id = (*made)->id;
                    if (auto kept = record(); !kept) return std::move(kept).error();
                }
                unseen = 0;
                look_at_once = true;
                continue;
            }
            case ClaimDecision::Kind::won:
                if (attempt.comment_id != d.claim.comment_id) {
                    attempt.comment_id = d.claim.comment_id;
                    if (auto kept = record(); !kept) return std::move(kept).error();
                }
                return ClaimOutcome{ClaimOutcome::Kind::won, d.claim};
            case ClaimDecision::Kind::taken:
                return ClaimOutcome{ClaimOutcome::Kind::taken, d.claim};
            case ClaimDecision::Kind::superseded:
                return ClaimOutcome{ClaimOutcome::Kind::superseded, mine};
        }
    }
    return Error::general(last_failure + " (gave up after " + std::to_string(kRounds) +
                          " looks; the claim, if it was made, lapses after its lease)");
}

Result<std::optional<Claim>> find_claim(github::GitHub& github, long issue,
                                        const std::string& watcher, const std::string& nonce) {
    std::string why = "GitHub's list of comments does not show the claim yet";
    for (int look = 0; look < kRounds / 2; ++look) {
        if (look > 0)
            if (auto paused =
                    github.http().pause(std::chrono::milliseconds(100LL << (look - 1)), why);
                !paused)
                return std::move(paused).error();
        auto listed = github.comments(issue);
        if (!listed) return std::move(listed).error();
        for (const auto& c : claims_in(issue, *listed))
            if (c.watcher == watcher && c.nonce == nonce) return std::optional<Claim>(c);
    }
    return std::optional<Claim>();
}

Result<bool> renew(github::GitHub& github, Claim& claim, ClaimState state) {
    Claim next = claim;
    next.state = state;
    ++next.beat;
    const std::string text =
        state == ClaimState::running
            ? "🔒 cocode: watcher `" + claim.watcher + "` is running the agents on this issue."
            : taken_text(claim, "");
    auto updated = github.update_comment_if_present(claim.comment_id, body_of(next, text));
    if (!updated) return std::move(updated).error();
    if (!*updated) return false;
    next.updated_at = (*updated)->updated_at;
    claim = next;
    return true;
}

Result<void> finish(github::GitHub& github, Claim& claim, ClaimState state,
                    const std::string& outcome) {
    Claim next = claim;
    next.state = state;
    ++next.beat;
    auto updated = github.update_comment(
        claim.comment_id,
        body_of(next, "cocode: watcher `" + claim.watcher + "` answered this issue — " + outcome));
    if (!updated) return std::move(updated).error();
    next.updated_at = updated->updated_at;
    claim = next;
    return {};
}

Result<void> release(github::GitHub& github, const Claim& claim) {
    return github.delete_comment(claim.comment_id);
}

}  // namespace cocode::scale
