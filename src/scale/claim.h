// Claims: how watchers on any number of machines take each labelled issue exactly once, with
// nothing between them but the issue's comments on GitHub (docs/self-hosted.md, "Taking an
// issue exactly once", gives the argument).
//
// A request is one application of the trigger label: the id of the issue's newest `labeled`
// event for it. Removing the label and adding it again is a new request; a stale listing that
// still shows the label after the issue was done is the same request, already answered.
//
// A claim is a comment carrying cocode's claim marker and a line of JSON: the request it
// answers, the watcher, the attempt's nonce, its state (claimed, running, done, failed), its
// lease and a heartbeat. Of the claims on a request, the oldest one still alive wins. A claim
// in state claimed or running whose lease has run out by GitHub's own clock (its `Date`
// against the comment's `updated_at`) is dead: the next watcher deletes it and contends anew.
// done and failed are final: the request was answered.
//
// Only claims GitHub attributes to the repository's people or to a bot count: anyone can
// comment on an issue, and a forged claim must not hold an issue back.
#pragma once

#include <chrono>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "github/api.h"

namespace cocode::scale {

enum class ClaimState { claimed, running, done, failed };

// What a claim answers: one labelling (the `labeled` event's id), or one `/cocode` command (the
// comment's id). A later labelling supersedes an earlier one; commands stand each on its own.
// On a pull request cocode opened (docs/review.md), a request for a round is a review asking
// for changes (the review's id), a command in a review comment (its id) or in a comment on the
// pull request (`command`), or a check suite that failed (the suite's id); the claim is on the
// pull request.
struct Request {
    enum class Kind { label, command, review, review_comment, check_suite };
    Kind kind = Kind::label;
    long long id = 0;
    bool operator==(const Request&) const = default;
    // A labelling after `other` (a labelling).
    bool supersedes(const Request& other) const {
        return kind == Kind::label && other.kind == Kind::label && id > other.id;
    }
};
std::string_view claim_state_name(ClaimState state);
// The kind as claims and the watcher's state file write it, and back (nullopt: not a kind).
std::string_view request_kind_name(Request::Kind kind);
std::optional<Request::Kind> request_kind_named(std::string_view name);

struct Claim {
    long issue = 0;
    Request request;
    long long comment_id = 0;  // the comment that holds it
    std::string watcher;
    std::string nonce;  // the attempt that made it
    ClaimState state = ClaimState::claimed;
    std::chrono::seconds lease{0};
    long long beat = 0;      // renewals so far
    std::string updated_at;  // the comment's, as GitHub stamped it
    bool final() const { return state == ClaimState::done || state == ClaimState::failed; }
};

// The hidden marker every claim on `issue` starts with.
std::string claim_marker(long issue);

// The claims among an issue's comments, oldest first; comments that are not claims, or that
// no one trusted wrote, are left out.
std::vector<Claim> claims_in(long issue, const std::vector<github::Comment>& comments);

// The newest request for `label` on the issue: the id of its last `labeled` event (0 when the
// label was never applied) and who applied it ("@login", the run's requester).
struct LabelRequest {
    long long id = 0;
    std::string by;
    std::string login;  // who applied it, and whether a bot did
    bool bot = false;
    std::string at;  // when (GitHub's time)
};
Result<LabelRequest> latest_request(github::GitHub& github, long issue, const std::string& label);
// The newest labelling with `label` among an issue's events (id 0: none).
LabelRequest latest_labelling(const std::vector<github::IssueEvent>& events,
                              const std::string& label);

// GitHub's clock: the `Date` of its last answer (this machine's when there was none).
std::time_t server_now(const github::GitHub& github);
// A time as GitHub writes it ("2026-11-25T21:00:00Z"), and back (0 when it is not one).
std::string github_time(std::time_t time);
std::time_t time_of_github(const std::string& text);

// A claim not final whose lease ran out before `now` (GitHub's clock).
bool lapsed(const Claim& claim, std::time_t now);

struct ClaimTerms {
    std::string watcher;
    std::chrono::seconds lease{3600};
    std::string note;  // shown on the claim: what the watcher will do
};

struct ClaimOutcome {
    enum class Kind {
        won,         // the claim is ours: `claim`
        taken,       // another's live or final claim holds the request: `claim` is that one
        superseded,  // the issue was labelled again since: the newer labelling is for next time
    };
    Kind kind = Kind::taken;
    Claim claim;
};

// One attempt at a claim, as the watcher's state file keeps it. The nonce names it; `sent`
// says the claim may have been made (its POST went out, whatever came back); `comment_id` is
// its comment once known — the 201's id, kept the moment it arrives, or found by the nonce.
struct ClaimAttempt {
    std::string nonce;
    bool sent = false;
    long long comment_id = 0;
};

// What the claims listed on an issue decide for one attempt at a request: a pure function of
// the claims, the attempt and GitHub's clock (docs/self-hosted.md gives the argument).
struct ClaimDecision {
    enum class Kind {
        wait,        // ours may have been made and the list does not show it yet: look again
        make,        // nothing holds the request: make ours
        won,         // ours is the oldest live claim: `claim`
        taken,       // an older live claim, or a final one, holds it: `claim`
        superseded,  // the issue was labelled again since
    };
    Kind kind = Kind::wait;
    // Deleted before anything else: lapsed claims of others; this watcher's orphans (live
    // claims with its id and a nonce not this attempt's: a claim its state file lost); a
    // second claim of this attempt; ours when it lost or was superseded.
    std::vector<long long> remove;
    Claim claim;
};
// `awaiting_own`: ours may have been made and the list is still given time to show it.
ClaimDecision decide_claim(const std::vector<Claim>& claims, const Request& request,
                           const std::string& watcher, const std::string& nonce, bool awaiting_own,
                           std::time_t now);

// The claim that holds `request` before this watcher contends for it: a live or final claim
// for it or for a newer request. A live claim with this watcher's id whose nonce is not among
// `known_nonces` (its state file's) is an orphan of this watcher, and holds nothing.
std::optional<Claim> holder_of(const std::vector<Claim>& claims, const Request& request,
                               const std::string& watcher,
                               const std::vector<std::string>& known_nonces, std::time_t now);

// Contends for `request` on `issue` with `attempt`, which the caller keeps: `record` is called
// whenever it changes — just before the claim is made, the moment the 201's id arrives, when
// the list shows it — so that an attempt cut short by a crash or a signal finds its own claim
// afterwards instead of making another, and can hand it back.
Result<ClaimOutcome> contend(github::GitHub& github, long issue, const Request& request,
                             const ClaimTerms& terms, ClaimAttempt& attempt,
                             const std::function<Result<void>()>& record);

// This watcher's claim made by the attempt with `nonce`, looked for while the list may lag
// behind the write (the patience contend gives it); nullopt when it never shows: not made.
Result<std::optional<Claim>> find_claim(github::GitHub& github, long issue,
                                        const std::string& watcher, const std::string& nonce);

// A new attempt's nonce.
std::string new_nonce();

// Renews the lease (one more beat) and records `state`; false when the claim is gone: another
// watcher took the issue over after the lease lapsed.
Result<bool> renew(github::GitHub& github, Claim& claim, ClaimState state);
// The request answered: the claim says so, and what came of it, for good.
Result<void> finish(github::GitHub& github, Claim& claim, ClaimState state,
                    const std::string& outcome);
// Hands the claim back (deleted): another watcher may take the request.
Result<void> release(github::GitHub& github, const Claim& claim);

}  // namespace cocode::scale
