// Decisions of src/ as tables of cases (inputs -> decision), without processes: the exit code
// a batch earns and whether it is judged, what reconciliation does with a run after its
// dispatcher was killed, when a claim's lease has run out, and the verdict from its checks.
#include <gtest/gtest.h>

#include "agent/egress.h"
#include "agent/supervisor.h"
#include "check/judge.h"
#include "check/published.h"
#include "check/scorecard.h"
#include "config/config.h"
#include "run/rounds.h"
#include "run/run_folder.h"
#include "scale/claim.h"

namespace cocode {
namespace {

using run::RunStatus;
using run::StopReason;

agent::RunResult ended(RunStatus status, StopReason reason = StopReason::none) {
    agent::RunResult r;
    r.status = status;
    r.reason = reason;
    return r;
}

TEST(Batch, TheExitCodeABatchEarns) {
    struct Case {
        const char* name;
        std::vector<agent::RunResult> runs;
        bool interrupted;
        std::vector<std::string> unrecorded;
        int code;
    };
    const Case cases[] = {
        {"every run completed",
         {ended(RunStatus::completed), ended(RunStatus::completed)},
         false,
         {},
         0},
        {"no runs", {}, false, {}, 0},
        {"one failed", {ended(RunStatus::completed), ended(RunStatus::failed)}, false, {}, 1},
        {"one timed out", {ended(RunStatus::failed, StopReason::timeout)}, false, {}, 1},
        {"a program missing wins over a failure",
         {ended(RunStatus::failed), ended(RunStatus::failed, StopReason::missing_dependency)},
         false,
         {},
         3},
        {"interrupted wins over everything",
         {ended(RunStatus::failed, StopReason::missing_dependency)},
         true,
         {},
         130},
        {"all completed, an end that could not be written",
         {ended(RunStatus::completed)},
         false,
         {"disk full"},
         1},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        agent::BatchResult batch;
        batch.runs = c.runs;
        batch.interrupted = c.interrupted;
        batch.unrecorded = c.unrecorded;
        EXPECT_EQ(agent::batch_exit_code(batch), c.code);
    }
}

TEST(Batch, WhatAnInterruptedBatchJudges) {
    agent::BatchResult going, interrupted;
    interrupted.interrupted = true;
    EXPECT_TRUE(agent::judged_after(going, true));
    EXPECT_FALSE(agent::judged_after(going, false));       // --no-check
    EXPECT_FALSE(agent::judged_after(interrupted, true));  // left to cocode-check --run
    EXPECT_FALSE(agent::judged_after(interrupted, false));
}

TEST(Reconcile, WhatAfterKill9) {
    using run::Reconciliation;
    struct Case {
        const char* name;
        RunStatus status;
        bool dispatcher_alive, end_kept;
        Reconciliation what;
    };
    const Case cases[] = {
        {"ended: never touched", RunStatus::completed, false, false, Reconciliation::leave},
        {"failed: never touched", RunStatus::failed, false, true, Reconciliation::leave},
        {"running, its dispatcher alive", RunStatus::running, true, false, Reconciliation::leave},
        {"queued, its dispatcher alive", RunStatus::queued, true, false, Reconciliation::leave},
        {"running, dispatcher gone", RunStatus::running, false, false,
         Reconciliation::mark_crashed},
        {"queued, dispatcher gone (never started)", RunStatus::queued, false, false,
         Reconciliation::mark_crashed},
        {"running, dispatcher gone, its end kept while the disk was full", RunStatus::running,
         false, true, Reconciliation::record_kept_end},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(run::reconciliation_of(c.status, c.dispatcher_alive, c.end_kept), c.what);
    }
}

TEST(Leases, AClaimIsDeadOnlyAfterItsLeaseByGitHubsClock) {
    const std::time_t now = 1'800'000'000;  // 2027-01-15T08:00:00Z
    struct Case {
        const char* name;
        scale::ClaimState state;
        const char* updated_at;
        long long lease;
        bool lapsed;
    };
    const Case cases[] = {
        {"renewed a minute ago", scale::ClaimState::claimed, "2027-01-15T07:59:00Z", 3600, false},
        {"exactly at the lease", scale::ClaimState::running, "2027-01-15T07:00:00Z", 3600, false},
        {"a second past the lease", scale::ClaimState::running, "2027-01-15T06:59:59Z", 3600, true},
        {"a short lease run out", scale::ClaimState::claimed, "2027-01-15T07:49:59Z", 600, true},
        {"done is final, however old", scale::ClaimState::done, "2020-01-01T00:00:00Z", 60, false},
        {"failed is final", scale::ClaimState::failed, "2020-01-01T00:00:00Z", 60, false},
        {"a time that cannot be read is alive", scale::ClaimState::claimed, "yesterday", 60, false},
        {"no time at all is alive", scale::ClaimState::claimed, "", 60, false},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        scale::Claim claim;
        claim.state = c.state;
        claim.updated_at = c.updated_at;
        claim.lease = std::chrono::seconds(c.lease);
        EXPECT_EQ(scale::lapsed(claim, now), c.lapsed);
    }
}

git::FileChange change(std::string path, std::string old_path = "") {
    git::FileChange f;
    f.old_path = old_path.empty() ? path : old_path;
    f.path = std::move(path);
    return f;
}

TEST(Verdict, TheChecksThatAreFunctionsOfTheirInputs) {
    using check::Outcome;
    struct ExitCase {
        std::optional<int> code;
        Outcome outcome;
    };
    const ExitCase exits[] = {{std::nullopt, Outcome::skipped},
                              {0, Outcome::pass},
                              {1, Outcome::fail},
                              {2, Outcome::fail},
                              {3, Outcome::fail},
                              {124, Outcome::fail},
                              {130, Outcome::fail},
                              {137, Outcome::fail}};
    for (const auto& c : exits) {
        SCOPED_TRACE(c.code ? std::to_string(*c.code) : "unknown");
        EXPECT_EQ(check::exit_code_check(c.code, "").outcome, c.outcome);
    }
    EXPECT_NE(check::exit_code_check(124, "timed out after 30m").reason.find("timed out after 30m"),
              std::string::npos);

    EXPECT_EQ(check::commits_check({}, {}, "abcdef0123").outcome, Outcome::fail);
    EXPECT_EQ(
        check::commits_check({{"1234567", "fix", "fix"}}, {change("a.py")}, "abcdef0").outcome,
        Outcome::pass);

    config::CheckConfig rules;
    struct ScopeCase {
        const char* name;
        std::vector<std::string> allowed, read_only;
        std::vector<git::FileChange> files;
        Outcome outcome;
    };
    const ScopeCase scopes[] = {
        {"no rules: skipped", {}, {}, {change("anything")}, Outcome::skipped},
        {"inside", {"src/**"}, {}, {change("src/a.cpp")}, Outcome::pass},
        {"outside", {"src/**"}, {}, {change("src/a.cpp"), change("README.md")}, Outcome::fail},
        {"read-only touched", {}, {"tests/**"}, {change("tests/t.cpp")}, Outcome::fail},
        {"a rename out of a read-only folder touches it",
         {},
         {"tests/**"},
         {change("moved.cpp", "tests/t.cpp")},
         Outcome::fail},
        {"a rename into the allowed paths from outside",
         {"src/**"},
         {},
         {change("src/a.cpp", "lib/a.cpp")},
         Outcome::fail},
    };
    for (const auto& c : scopes) {
        SCOPED_TRACE(c.name);
        rules.allowed_paths = c.allowed;
        rules.read_only_paths = c.read_only;
        EXPECT_EQ(check::scope_check(rules, c.files).outcome, c.outcome);
    }
    // Nothing changed is said as such (before: "all 0 files within the allowed paths").
    rules.allowed_paths = {"src/**"};
    rules.read_only_paths = {};
    EXPECT_EQ(check::scope_check(rules, {}).reason, "no file changed");
    EXPECT_EQ(check::scope_check(rules, {change("src/a.cpp")}).reason,
              "the 1 file is within the allowed paths");

    auto item = [](Outcome outcome) {
        check::CheckItem c;
        c.name = "x";
        c.outcome = outcome;
        return c;
    };
    EXPECT_TRUE(check::passes({item(Outcome::pass), item(Outcome::skipped)}));
    EXPECT_TRUE(check::passes({}));
    EXPECT_FALSE(check::passes({item(Outcome::pass), item(Outcome::fail)}));
    EXPECT_EQ(check::verify_not_run_because({item(Outcome::pass)}, true), "");
    EXPECT_EQ(check::verify_not_run_because({item(Outcome::pass)}, false), "not run (--no-verify)");
    EXPECT_EQ(check::verify_not_run_because({item(Outcome::fail)}, true), "not run: x failed");

    // The network: what the run's proxy blocked, under on_blocked warn or fail.
    auto blocked = [](const char* host, int port, const char* command) {
        net::EgressEvent e;
        e.host = host;
        e.port = port;
        e.command = command;
        return e;
    };
    struct NetworkCase {
        const char* name;
        bool fail_on_blocked;
        std::vector<net::EgressEvent> blocked;
        Outcome outcome;
        std::string reason;
        std::size_t lines;
    };
    const NetworkCase networks[] = {
        {"nothing blocked", true, {}, Outcome::pass, "nothing blocked", 0},
        {"warn",
         false,
         {blocked("x.example", 443, "curl x")},
         Outcome::pass,
         "blocked: x.example:443 (on_blocked: warn)",
         1},
        {"fail",
         true,
         {blocked("x.example", 443, "curl x"), blocked("x.example", 443, "curl x")},
         Outcome::fail,
         "blocked: x.example:443 (network.on_blocked: fail)",
         1},
        {"two commands, one host",
         true,
         {blocked("x.example", 443, "curl x"), blocked("x.example", 443, "npm i")},
         Outcome::fail,
         "blocked: x.example:443 (network.on_blocked: fail)",
         2},
        {"many hosts",
         false,
         {blocked("a", 1, ""), blocked("b", 2, ""), blocked("c", 3, ""), blocked("d", 4, ""),
          blocked("e", 5, ""), blocked("f", 6, "")},
         Outcome::pass,
         "blocked: a:1, b:2, c:3, d:4, e:5 and 1 more (on_blocked: warn)",
         6},
    };
    for (const auto& c : networks) {
        SCOPED_TRACE(c.name);
        const auto checked = check::network_check({c.fail_on_blocked, c.blocked});
        EXPECT_EQ(checked.outcome, c.outcome);
        EXPECT_EQ(checked.reason, c.reason);
        EXPECT_EQ(checked.files.size(), c.lines);
    }
}

// How sure a PASS rate is: its 95 % Wilson score interval, against values worked out from
// Wilson's formula for each case (z = 1.96).
TEST(Decisions, APassRateComesWithItsWilsonInterval) {
    struct Case {
        int passed, judged;
        double low, high;
    };
    for (const Case& c : std::vector<Case>{{8, 10, 0.4902, 0.9433},
                                           {10, 12, 0.5520, 0.9530},
                                           {0, 5, 0.0, 0.4345},
                                           {5, 5, 0.5655, 1.0},
                                           {50, 100, 0.4038, 0.5962}}) {
        const auto interval = check::wilson_interval(c.passed, c.judged);
        ASSERT_TRUE(interval) << c.passed << "/" << c.judged;
        EXPECT_NEAR(interval->low, c.low, 5e-4) << c.passed << "/" << c.judged;
        EXPECT_NEAR(interval->high, c.high, 5e-4) << c.passed << "/" << c.judged;
    }
    EXPECT_FALSE(check::wilson_interval(0, 0)) << "nothing judged: no interval";
    EXPECT_FALSE(check::wilson_interval(3, 2)) << "more passes than trials is no rate";
}

}  // namespace
// What a run's network is: (what the configuration asks, the sandbox, a network namespace) →
// its mode, or the run refused (docs/security.md, "The agent's network").
TEST(Network, WhatARunsNetworkIs) {
    using config::NetworkMode;
    struct Case {
        std::optional<NetworkMode> asked;
        bool sandboxed, namespace_ok;
        NetworkMode mode;
        bool refused;
    };
    const Case cases[] = {
        {std::nullopt, true, true, NetworkMode::allowlist, false},  // the default, enclosed
        {std::nullopt, true, false, NetworkMode::open, false},      // nothing to enclose it with
        {std::nullopt, false, false, NetworkMode::open, false},
        {NetworkMode::allowlist, true, true, NetworkMode::allowlist, false},
        {NetworkMode::audit, true, true, NetworkMode::audit, false},
        {NetworkMode::open, true, true, NetworkMode::open, false},
        {NetworkMode::allowlist, false, false, NetworkMode::open, true},  // never run open
        {NetworkMode::audit, true, false, NetworkMode::open, true},
        {NetworkMode::open, false, false, NetworkMode::open, false},
    };
    for (const auto& c : cases) {
        const auto decided = agent::decide_network(c.asked, c.sandboxed, c.namespace_ok, "why");
        EXPECT_EQ(decided.mode, c.mode) << c.sandboxed << c.namespace_ok;
        EXPECT_EQ(!decided.refused.empty(), c.refused) << c.sandboxed << c.namespace_ok;
    }
    EXPECT_EQ(agent::decide_network(NetworkMode::allowlist, false, false, "sandbox: none").refused,
              "network.mode allowlist needs the sandbox's network namespace, but sandbox: none "
              "(allow user namespaces, or set network.mode to \"open\")");
}

// Which hosts an agent's network allows, by its preset and its configuration: its model's, its
// own service's when it has no base_url (copilot signs in to GitHub), and nothing else.
TEST(Network, WhatAnAgentsAllowlistHolds) {
    auto config = config::parse_config(R"({"agents": {
        "own": {"type": "copilot"},
        "byok": {"type": "copilot", "base_url": "http://127.0.0.1:8080/v1", "model": "m"},
        "oc": {"type": "opencode", "base_url": "https://gw.example/v1", "model": "m"}}})",
                                       ".cocode/config.json", "/repo");
    ASSERT_TRUE(config.ok()) << config.error().message;
    struct Case {
        std::size_t agent;
        std::string host;
        int port;
        bool allowed;
    };
    const Case cases[] = {
        {0, "api.githubcopilot.com", 443, true},
        {0, "api.github.com", 443, true},
        {0, "registry.npmjs.org", 443, false},
        {1, "127.0.0.1", 8080, true},
        {1, "api.githubcopilot.com", 443, false},
        {1, "api.github.com", 443, false},
        {2, "gw.example", 443, true},
        {2, "api.openai.com", 443, false},
    };
    for (const auto& c : cases) {
        const auto allow = agent::allowlist_of(*config, config->agents[c.agent]);
        EXPECT_EQ(allow.allows(c.host, c.port), c.allowed)
            << config->agents[c.agent].name << " " << c.host;
    }
}

// The decision alone, as a table: (rounds so far with their verdicts, cap) → may another start.
TEST(RoundDecision, CapAndTwoFailuresInARow) {
    auto seen = [](std::vector<std::optional<bool>> verdicts) {
        std::vector<run::RoundSeen> history;
        int n = 0;
        for (auto v : verdicts)
            history.push_back(
                {++n, {}, v ? std::optional<run::Judged>(run::Judged{*v, ""}) : std::nullopt});
        return history;
    };
    struct Case {
        std::vector<std::optional<bool>> verdicts;
        int cap;
        bool go;
        int number;
        std::string why_not;
    };
    const std::optional<bool> pass = true, fail = false, unjudged = std::nullopt;
    const std::vector<Case> cases = {
        {{}, 3, false, 0, "there is no run to continue"},
        {{fail}, 3, true, 2, ""},
        {{pass}, 3, true, 2, ""},
        {{unjudged}, 3, true, 2, ""},
        {{fail, pass}, 3, true, 3, ""},
        {{pass, fail}, 3, true, 3, ""},
        {{fail, fail}, 3, false, 3, "rounds 1 and 2 both failed their check"},
        {{fail, unjudged}, 5, true, 3, ""},
        {{pass, pass, pass}, 3, false, 4, "the round cap is reached (review.max_rounds = 3)"},
        {{fail}, 1, false, 2, "the round cap is reached (review.max_rounds = 1)"},
        {{pass, fail, pass, fail, fail}, 9, false, 6, "rounds 4 and 5 both failed their check"},
    };
    for (const auto& c : cases) {
        const auto d = run::decide_round(seen(c.verdicts), c.cap);
        EXPECT_EQ(d.go, c.go) << c.verdicts.size() << " rounds, cap " << c.cap;
        EXPECT_EQ(d.number, c.number);
        EXPECT_EQ(d.why_not, c.why_not);
    }
}

// What a fresh runner restores of a pair from its published comment: each round that had a
// run, the last with the verdict whole, the agent's last words and the seal.
TEST(Decisions, AFreshRunnerRestoresEachRoundThatHadARunTheLastWhole) {
    check::Published published;
    check::Verdict& v = published.verdict;
    v.run_id = "r3";
    v.branch = "cocode/7-claude";
    v.base = std::string(40, 'a');
    v.pass = true;
    v.rounds = {
        {1, "issue #7", false, v.base, std::string(40, 'b'), "r1", false},
        {2, "review by @writer", std::nullopt, "", "", "", false},  // judged, no run
        {3, "review by @writer", true, std::string(40, 'b'), std::string(40, 'c'), "", false}};
    published.continuation.output = "done";
    published.continuation.seal.run_id = "r3";
    github::Issue issue;
    issue.number = 7;
    issue.title = "Fix";
    issue.body = "as approved";
    const auto rounds = check::rounds_to_restore(published, issue, "claude");
    ASSERT_EQ(rounds.size(), 2u);
    EXPECT_EQ(rounds[0].round.run_id, "r1");
    EXPECT_EQ(rounds[0].round.round, 1);
    EXPECT_EQ(rounds[0].round.output, "");
    EXPECT_TRUE(rounds[0].round.verdict_json.empty());
    EXPECT_FALSE(rounds[0].seal);
    EXPECT_EQ(rounds[1].round.run_id, "r3");  // the last round is the verdict's run
    EXPECT_EQ(rounds[1].round.round, 3);
    EXPECT_EQ(rounds[1].round.issue_body, "as approved");
    EXPECT_EQ(rounds[1].round.output, "done");
    EXPECT_FALSE(rounds[1].round.verdict_json.empty());
    ASSERT_TRUE(rounds[1].seal);
    EXPECT_EQ(rounds[1].seal->run_id, "r3");
    // A verdict that lists no rounds is its one round.
    v.rounds.clear();
    const auto one = check::rounds_to_restore(published, issue, "claude");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].round.round_trigger, "issue #7");
    EXPECT_EQ(one[0].round.run_id, "r3");
}

}  // namespace cocode
