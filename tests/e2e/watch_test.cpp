// `cocode-dispatch watch` on self-hosted machines: watchers in separate clones, as separate
// processes, race for labelled issues on the loopback GitHub (whose comment lists lag behind
// its writes, as GitHub's can). Each issue must be run exactly once — also when a watcher is
// killed with SIGKILL in the middle of claiming and started again — and none may be lost.
#include <signal.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fake_github.h"
#include "run/run_folder.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kIssues = 5;

class Watch : public ::testing::Test {
  protected:
    void SetUp() override {
        github_ = std::make_unique<FakeGitHub>(loopback_options());
        github_->lag_comment_lists(2);
        for (int n = 1; n <= kIssues; ++n)
            github_->add_issue(n, "Issue " + std::to_string(n), "Fix it.", {"cocode"});

        const fs::path work = dir_ / "project";
        make_repo(work);
        fs::create_directories(work / ".cocode");
        write_text(work / ".cocode/fast.sh",
                   "#!/bin/sh\necho \"fixed $COCODE_ISSUE_NUMBER\" > fixed.txt\ngit add fixed.txt\n"
                   "git commit -q -m \"Fix #$COCODE_ISSUE_NUMBER\" -m \"$COCODE_READY_MARKER\"\n");
        fs::permissions(work / ".cocode/fast.sh", fs::perms::owner_all);
        write_text(work / ".cocode/config.json",
                   json{{"agents", {{"fast", {{"command", ".cocode/fast.sh"}}}}},
                        {"check", {{"allowed_paths", {"fixed.txt"}}}}}
                       .dump(2));
        sh_ok(
            "git add -A && git commit -q -m 'cocode' && git init -q --bare ../origin.git && "
            "git push -q ../origin.git main:main && git -C ../origin.git symbolic-ref HEAD "
            "refs/heads/main",
            work);
    }

    // A machine of its own: a clone of the project.
    fs::path machine(const std::string& name) {
        const fs::path clone = dir_ / name;
        sh_ok("git clone -q origin.git " + name + " && cd " + name +
                  " && git config user.name 'cocode agent' && git config user.email "
                  "agent@cocode.invalid",
              dir_.path());
        return clone;
    }

    // `cocode-dispatch watch --once …` in `clone`; its pid goes to <clone>/watch.pid first.
    Shell watch(const fs::path& clone, const std::string& flags = "") {
        return sh("echo $$ > watch.pid; exec env GITHUB_TOKEN=" + std::string(kTestToken) +
                      " GITHUB_API_URL=" + github_->base_url() +
                      " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) + " " +
                      quote(tool_path("cocode-dispatch").string()) +
                      " watch --once --max-parallel 5 --repo octo-org/demo " + flags,
                  clone);
    }

    // The runs every machine made, per issue.
    std::map<long, int> runs_per_issue(const std::vector<fs::path>& clones) {
        std::map<long, int> count;
        for (const auto& clone : clones)
            for (const auto& r : run::list_runs(clone / ".cocode/runs").runs) ++count[r.issue];
        return count;
    }

    std::vector<json> claims_on(long issue) {
        std::vector<json> out;
        for (const auto& c : github_->comments_of(issue))
            if (c["body"].get<std::string>().rfind(
                    "<!-- cocode:claim/issue-" + std::to_string(issue) + " -->", 0) == 0)
                out.push_back(c);
        return out;
    }

    // Every issue run once, answered once: done, one claim saying so, one verdict comment.
    void expect_each_issue_answered_once(const std::vector<fs::path>& clones) {
        const auto runs = runs_per_issue(clones);
        for (long n = 1; n <= kIssues; ++n) {
            SCOPED_TRACE("issue " + std::to_string(n));
            EXPECT_EQ(runs.count(n) ? runs.at(n) : 0, 1);
            const auto labels = github_->labels_of(n);
            EXPECT_NE(std::find(labels.begin(), labels.end(), "cocode:done"), labels.end());
            EXPECT_EQ(std::find(labels.begin(), labels.end(), "cocode:running"), labels.end());
            const auto claims = claims_on(n);
            ASSERT_EQ(claims.size(), 1u);
            EXPECT_NE(claims[0]["body"].get<std::string>().find("\"state\":\"done\""),
                      std::string::npos)
                << claims[0]["body"];
            int verdicts = 0;
            for (const auto& c : github_->comments_of(n))
                verdicts +=
                    c["body"].get<std::string>().rfind(
                        "<!-- cocode:check/issue-" + std::to_string(n) + "/fast -->", 0) == 0;
            EXPECT_EQ(verdicts, 1);
        }
    }

    TempDir dir_;
    std::unique_ptr<FakeGitHub> github_;
};

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

TEST_F(Watch, SigtermEndsAWatcherBetweenStepsWithExitZero) {
    for (int n = 1; n <= kIssues; ++n) github_->set_label(n, "cocode", false);
    const fs::path a = machine("a");
    Shell stopped;
    std::thread watcher([&] {
        stopped = sh("echo $$ > watch.pid; exec env GITHUB_TOKEN=" + std::string(kTestToken) +
                         " GITHUB_API_URL=" + github_->base_url() +
                         " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) +
                         " " + quote(tool_path("cocode-dispatch").string()) +
                         " watch --interval 1h --repo octo-org/demo",
                     a);
    });
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
