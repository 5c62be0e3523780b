// The watcher's decisions as tables of cases, without GitHub or processes: what the claims
// listed on an issue decide for one attempt (decide_claim), what holds a request before a
// watcher contends (holder_of), and what stopping does with each entry (hand_back_step).
#include "scale/claim.h"

#include <gtest/gtest.h>

#include "scale/watch.h"

namespace cocode::scale {
namespace {

using Kind = ClaimDecision::Kind;

constexpr std::time_t kNow = 1'800'000'000;  // GitHub's clock in every case
const Request kLabel{Request::Kind::label, 50};
const Request kNewer{Request::Kind::label, 60};

// A claim as listed: comment id, watcher, nonce, state, request; updated a minute ago with a
// lease of an hour (alive), unless `stale` (updated two hours ago: lapsed).
Claim claim(long long id, const std::string& watcher, const std::string& nonce,
            ClaimState state = ClaimState::claimed, Request request = kLabel, bool stale = false) {
    Claim c;
    c.issue = 7;
    c.comment_id = id;
    c.watcher = watcher;
    c.nonce = nonce;
    c.state = state;
    c.request = request;
    c.lease = std::chrono::seconds(3600);
    const std::time_t at = kNow - (stale ? 7200 : 60);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
    c.updated_at = text;
    return c;
}

struct DecideCase {
    const char* name;
    std::vector<Claim> claims;
    bool awaiting_own;
    Kind kind;
    long long claim_id;  // the decision's claim (won: ours; taken: the holder); 0: none
    std::vector<long long> remove;
};

TEST(Claims, WhatTheListedClaimsDecideForOneAttempt) {
    // We are watcher "me", attempt "n1".
    const DecideCase cases[] = {
        {"nothing listed: make ours", {}, false, Kind::make, 0, {}},
        {"ours made, not listed yet: wait", {}, true, Kind::wait, 0, {}},
        {"ours made, not listed, another's is: still wait for ours",
         {claim(10, "other", "x")},
         true,
         Kind::wait,
         0,
         {}},
        {"ours is the only one: won", {claim(11, "me", "n1")}, true, Kind::won, 11, {}},
        {"an older live claim of another: ours goes, taken",
         {claim(10, "other", "x"), claim(11, "me", "n1")},
         false,
         Kind::taken,
         10,
         {11}},
        {"ours older than another's: won",
         {claim(9, "me", "n1"), claim(10, "other", "x")},
         false,
         Kind::won,
         9,
         {}},
        {"another's live claim and ours not made: taken, nothing made",
         {claim(10, "other", "x")},
         false,
         Kind::taken,
         10,
         {}},
        {"another's final claim answers the request",
         {claim(10, "other", "x", ClaimState::done)},
         false,
         Kind::taken,
         10,
         {}},
        {"another's lapsed claim is deleted and ours made",
         {claim(10, "other", "x", ClaimState::running, kLabel, true)},
         false,
         Kind::make,
         0,
         {10}},
        {"our own orphan (our id, a nonce not this attempt's) is deleted and ours made",
         {claim(10, "me", "lost")},
         false,
         Kind::make,
         0,
         {10}},
        {"our orphan older than ours: deleted, ours wins",
         {claim(10, "me", "lost"), claim(11, "me", "n1")},
         false,
         Kind::won,
         11,
         {10}},
        {"our orphan older than another's: deleted, the other's holds",
         {claim(10, "me", "lost"), claim(12, "other", "x")},
         false,
         Kind::taken,
         12,
         {10}},
        {"our own final claim of an earlier attempt answered the request",
         {claim(10, "me", "old", ClaimState::done)},
         false,
         Kind::taken,
         10,
         {}},
        {"ours listed twice (the first showed late): the younger goes",
         {claim(11, "me", "n1"), claim(13, "me", "n1")},
         false,
         Kind::won,
         11,
         {13}},
        {"a newer labelling supersedes: ours goes",
         {claim(11, "me", "n1"), claim(12, "other", "y", ClaimState::claimed, kNewer)},
         false,
         Kind::superseded,
         0,
         {11}},
        {"claims on another request are not ours to judge",
         {claim(8, "other", "z", ClaimState::claimed, {Request::Kind::command, 99})},
         false,
         Kind::make,
         0,
         {}},
        {"another watcher with our nonce is not us",
         {claim(10, "other", "n1")},
         false,
         Kind::taken,
         10,
         {}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const ClaimDecision d = decide_claim(c.claims, kLabel, "me", "n1", c.awaiting_own, kNow);
        EXPECT_EQ(d.kind, c.kind);
        if (c.claim_id != 0) {
            EXPECT_EQ(d.claim.comment_id, c.claim_id);
        }
        EXPECT_EQ(d.remove, c.remove);
    }
}

TEST(Claims, WhatHoldsARequestBeforeAWatcherContends) {
    struct Case {
        const char* name;
        std::vector<Claim> claims;
        std::vector<std::string> known;
        long long holder;  // 0: nothing holds it
    };
    const Case cases[] = {
        {"nothing", {}, {}, 0},
        {"another's live claim", {claim(10, "other", "x")}, {}, 10},
        {"another's final claim", {claim(10, "other", "x", ClaimState::failed)}, {}, 10},
        {"another's lapsed claim",
         {claim(10, "other", "x", ClaimState::claimed, kLabel, true)},
         {},
         0},
        {"a newer labelling's claim",
         {claim(10, "other", "x", ClaimState::claimed, kNewer)},
         {},
         10},
        {"our live claim whose nonce the state file lost: an orphan, holds nothing",
         {claim(10, "me", "lost")},
         {"n1"},
         0},
        {"our live claim the state file knows", {claim(10, "me", "n1")}, {"n1"}, 10},
        {"our final claim answered it", {claim(10, "me", "old", ClaimState::done)}, {}, 10},
        {"an orphan before another's live claim: the other's holds",
         {claim(10, "me", "lost"), claim(11, "other", "x")},
         {},
         11},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        auto held = holder_of(c.claims, kLabel, "me", c.known, kNow);
        EXPECT_EQ(held ? held->comment_id : 0, c.holder);
    }
}

TEST(Claims, WhatStoppingDoesWithEachEntry) {
    struct Case {
        const char* name;
        WatchPhase phase;
        bool sent;
        long long comment_id;
        HandBack step;
    };
    const Case cases[] = {
        {"claiming, nothing sent", WatchPhase::claiming, false, 0, HandBack::forget},
        {"claiming, sent, the answer lost", WatchPhase::claiming, true, 0,
         HandBack::find_then_delete},
        {"claiming, the 201's id kept", WatchPhase::claiming, true, 42, HandBack::delete_claim},
        {"claimed", WatchPhase::claimed, true, 42, HandBack::delete_claim},
        {"dispatching", WatchPhase::dispatching, true, 42, HandBack::keep_running},
        {"running", WatchPhase::running, true, 42, HandBack::keep_running},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        WatchEntry e;
        e.phase = c.phase;
        e.sent = c.sent;
        e.claim.comment_id = c.comment_id;
        EXPECT_EQ(hand_back_step(e), c.step);
    }
}

// What a watcher does beside its polls, and when.
TEST(WatchChores, EachIsDueAtItsFirstPassThenEveryPeriodOrWhenAsked) {
    using namespace std::chrono_literals;
    const std::chrono::steady_clock::time_point t0{};
    EXPECT_TRUE(scale::due(std::nullopt, t0, scale::kOutcomesEvery));
    EXPECT_FALSE(scale::due(t0, t0 + 9min, scale::kOutcomesEvery));
    EXPECT_TRUE(scale::due(t0, t0 + 9min, scale::kOutcomesEvery, /*asked=*/true));
    EXPECT_TRUE(scale::due(t0, t0 + 10min, scale::kOutcomesEvery));
    EXPECT_FALSE(scale::due(t0, t0 + 59s, scale::kAheadEvery));
    EXPECT_TRUE(scale::due(t0, t0 + 60s, scale::kAheadEvery));
    // An issue that ran here before is cleaned before it runs again; another's runs do not
    // count.
    run::RunRecord other, earlier;
    other.issue = 2;
    earlier.issue = 1;
    EXPECT_FALSE(scale::cleaned_before_it_runs({}, 1));
    EXPECT_FALSE(scale::cleaned_before_it_runs({other}, 1));
    EXPECT_TRUE(scale::cleaned_before_it_runs({other, earlier}, 1));
}

}  // namespace
}  // namespace cocode::scale
