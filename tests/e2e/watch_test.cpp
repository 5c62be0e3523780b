// `cocode-dispatch watch` on self-hosted machines: watchers in separate clones, as separate
// processes, race for labelled issues on the loopback GitHub (whose comment lists lag behind
// its writes, as GitHub's can). Each issue must be run exactly once — also when a watcher is
// killed with SIGKILL in the middle of claiming and started again — and none may be lost.
#include <signal.h>

#include <thread>

#include "watch_fixture.h"

namespace cocode::test {
namespace {

TEST_F(Watch, TwoMachinesRaceAndEachIssueRunsExactlyOnce) {
    const fs::path a = machine("a"), b = machine("b");
    Shell on_a, on_b;
    std::thread ta([&] { on_a = watch(a); });
    std::thread tb([&] { on_b = watch(b); });
    ta.join();
    tb.join();
    EXPECT_EQ(on_a.exit_code, 0) << on_a.err;
    EXPECT_EQ(on_b.exit_code, 0) << on_b.err;
    expect_each_issue_answered_once({a, b});
}

TEST_F(Watch, AMachineKilledWhileClaimingLosesNothingAndRunsNothingTwice) {
    const fs::path a = machine("a"), b = machine("b");
    Shell killed, on_b;
    std::thread ta([&] { killed = watch(a); });
    // The moment a's first claim reaches GitHub, a is killed: its claim is made, its answer
    // may not have been read, nothing has run yet.
    std::string a_id;
    const bool claiming = wait_until(
        [&] {
            if (a_id.empty() && fs::exists(a / ".cocode/watch/state.json")) {
                const json state =
                    json::parse(read_text(a / ".cocode/watch/state.json"), nullptr, false);
                if (state.is_object()) a_id = state.value("watcher", "");
            }
            if (a_id.empty()) return false;
            for (const auto& r : github_->requests())
                if (r.method == "POST" && r.body.find(a_id) != std::string::npos) return true;
            return false;
        },
        30s);
    EXPECT_EQ(::kill(std::stoi(read_text(a / "watch.pid")), SIGKILL), 0);
    ta.join();
    ASSERT_TRUE(claiming) << killed.err;
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL);

    std::thread tb([&] { on_b = watch(b); });
    Shell restarted = watch(a);
    tb.join();
    EXPECT_EQ(restarted.exit_code, 0) << restarted.err;
    EXPECT_EQ(on_b.exit_code, 0) << on_b.err;
    // The restarted watcher is the same watcher: it found its own claim again.
    EXPECT_NE(restarted.err.find("as watcher " + a_id), std::string::npos) << restarted.err;
    expect_each_issue_answered_once({a, b});
}

TEST_F(Watch, AClaimIsTakenOverOnlyAfterItsLeaseAndAForgedOneNotAtAll) {
    for (int n = 3; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    // A watcher that died holding #1 (its lease: 10 minutes), and a claim on #2 written by
    // someone who may only comment.
    auto claim_body = [&](long issue, const std::string& watcher) {
        const long long request = github_->events_of(issue).back()["id"];  // labelled `cocode`
        return "<!-- cocode:claim/issue-" + std::to_string(issue) +
               " -->\n<!-- cocode-claim {\"request\":" + std::to_string(request) +
               ",\"watcher\":\"" + watcher +
               "\",\"nonce\":\"0\",\"state\":\"claimed\",\"lease\":600,\"beat\":0} -->\n"
               "🔒 taken";
    };
    github_->add_comment(1, claim_body(1, "gone-host-1"));
    github_->add_comment(2, claim_body(2, "stranger"), "stranger", "NONE");

    const fs::path a = machine("a");
    Shell first = watch(a);
    EXPECT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.err.find("#1: taken by watcher gone-host-1"), std::string::npos) << first.err;
    auto runs = runs_per_issue({a});
    EXPECT_EQ(runs.count(1), 0u) << "taken before the lease ran out";
    EXPECT_EQ(runs[2], 1) << "held back by a claim anyone could write";

    github_->advance_clock(601s);
    Shell second = watch(a);
    EXPECT_EQ(second.exit_code, 0) << second.err;
    runs = runs_per_issue({a});
    EXPECT_EQ(runs[1], 1);
    const auto claims = claims_on(1);
    ASSERT_EQ(claims.size(), 1u) << "the dead claim is deleted";
    EXPECT_EQ(claims[0]["body"].get<std::string>().find("gone-host-1"), std::string::npos);
}

TEST_F(Watch, AnAnsweredIssueRunsAgainOnlyWhenLabelledAgain) {
    for (int n = 2; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    const fs::path a = machine("a");
    ASSERT_EQ(watch(a).exit_code, 0);
    ASSERT_EQ(watch(a).exit_code, 0);
    EXPECT_EQ(runs_per_issue({a})[1], 1) << "answered: not run again";

    github_->set_label(1, "cocode", false);
    github_->set_label(1, "cocode", true);
    Shell again = watch(a);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(runs_per_issue({a})[1], 2) << again.err;
    const auto labels = github_->labels_of(1);
    EXPECT_EQ(std::count(labels.begin(), labels.end(), "cocode:done"), 1);
    int final_claims = 0;
    for (const auto& c : claims_on(1))
        final_claims +=
            c["body"].get<std::string>().find("\"state\":\"done\"") != std::string::npos;
    EXPECT_EQ(final_claims, 2) << "one answer per labelling";
}

TEST_F(Watch, APollThatFindsNothingNewCostsNoRateLimit) {
    for (int n = 1; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    const fs::path a = machine("a");
    ASSERT_EQ(watch(a).exit_code, 0);
    const long before = github_->rate_remaining();
    Shell again = watch(a);
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(github_->rate_remaining(), before);
    EXPECT_TRUE(runs_per_issue({a}).empty());
}

// An exhausted rate limit whose reset is further off than the client waits by itself: after
// the one request GitHub refused, nothing is asked of it until the reset — not each interval —
// and then every issue is taken as usual.
TEST_F(Watch, AnExhaustedRateLimitIsWaitedOutWithoutAskingAgain) {
    github_->exhaust_rate_limit(5s);
    const fs::path a = machine("a");
    Shell stopped;
    std::thread watcher(
        [&] { stopped = dispatch(a, "watch --interval 1s --max-parallel 5 --max-wait 2"); });
    const bool all_answered = wait_until(
        [&] {
            for (long n = 1; n <= kIssues; ++n)
                if (!answered(n)) return false;
            return true;
        },
        90s);
    EXPECT_TRUE(wait_until([&] { return fs::exists(a / "watch.pid"); }));
    ::kill(std::stoi(read_text(a / "watch.pid")), SIGTERM);
    watcher.join();
    ASSERT_TRUE(all_answered) << stopped.err;
    int refused = 0;
    for (const auto& r : github_->requests()) refused += r.status == 403;
    EXPECT_EQ(refused, 1) << stopped.err;
    EXPECT_NE(stopped.err.find("GitHub asked for no requests for "), std::string::npos)
        << stopped.err;
    expect_each_issue_answered_once({a});
}

// The run's dispatcher judges and publishes; the watcher answers the issue only once that is
// over, and publishes itself what the dispatcher could not (here origin refuses its push).
TEST_F(Watch, AVerdictItsDispatcherCouldNotPublishIsPublishedBeforeTheAnswer) {
    for (int n = 2; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    const fs::path refuse = dir_ / "refuse-next-push";
    write_text(refuse, "");
    write_text(dir_ / "origin.git/hooks/pre-receive",
               "#!/bin/sh\nif [ -e " + quote(refuse.string()) + " ]; then rm -f " +
                   quote(refuse.string()) + "; echo 'refused for the test' >&2; exit 1; fi\n");
    fs::permissions(dir_ / "origin.git/hooks/pre-receive", fs::perms::owner_all);
    const fs::path a = machine("a");

    Shell watched = watch(a);
    EXPECT_EQ(watched.exit_code, 0) << watched.err;
    EXPECT_FALSE(fs::exists(refuse)) << "the dispatcher's push was never refused";
    const auto runs = run::list_runs(a / ".cocode/runs").runs;
    ASSERT_EQ(runs.size(), 1u);
    const std::string events = read_text(runs[0].folder / "events.jsonl");
    const auto check = events.rfind("\"type\":\"CHECK\"");
    ASSERT_NE(check, std::string::npos) << events;
    EXPECT_NE(events.find("\"type\":\"PUBLISH\"", check), std::string::npos) << events;

    EXPECT_TRUE(answered(1)) << watched.err;
    int verdicts = 0;
    for (const auto& c : github_->comments_of(1))
        verdicts +=
            c["body"].get<std::string>().rfind("<!-- cocode:check/issue-1/fast -->", 0) == 0;
    EXPECT_EQ(verdicts, 1) << watched.err;
    EXPECT_NE(sh_ok("git ls-remote origin.git", dir_.path()).find(runs[0].branch),
              std::string::npos)
        << "the branch is pushed";
}

TEST_F(Watch, SigtermEndsAWatcherBetweenStepsWithExitZero) {
    for (int n = 1; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    const fs::path a = machine("a");
    Shell stopped;
    std::thread watcher([&] { stopped = dispatch(a, "watch --interval 1h"); });
    // Its first poll done, it waits for the next one (an hour away).
    const bool polled = wait_until([&] {
        for (const auto& r : github_->requests())
            if (r.method == "GET" && r.path.find("/issues?") != std::string::npos) return true;
        return false;
    });
    EXPECT_TRUE(wait_until([&] { return fs::exists(a / "watch.pid"); }));
    ::kill(std::stoi(read_text(a / "watch.pid")), SIGTERM);
    watcher.join();
    ASSERT_TRUE(polled) << stopped.err;
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_NE(stopped.err.find("stopping"), std::string::npos) << stopped.err;
}

TEST_F(Watch, ALocalIssueStoreIsRefusedWithTheReason) {
    const fs::path a = machine("a");
    fs::create_directories(a / "store");
    Shell local =
        sh(quote(tool_path("cocode-dispatch").string()) + " watch --once --issues store", a);
    EXPECT_EQ(local.exit_code, 2);
    EXPECT_EQ(local.err,
              "cocode-dispatch: error: watch takes its issues from GitHub, where the claims that "
              "keep two machines from taking one issue live; the local issue store has none "
              "(name --repo OWNER/NAME)\n");
}

}  // namespace
}  // namespace cocode::test
