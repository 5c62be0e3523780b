// cocode-check as a user and CI run it: real repositories made with the git CLI, the tool as a
// process, its JSON checked against docs/check.schema.json, its Markdown against golden files,
// and publishing to the loopback TLS GitHub (with faults) and to the local store.
#include <signal.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

#include "fake_github.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kMarker = "cocode ready for check";

class Check : public ::testing::Test {
  protected:
    void SetUp() override {
        // Fixed dates: the same commits, so the same ids, on every run (golden files).
        ::setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z", 1);
        ::setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z", 1);
        repo_ = dir_ / "repo";
        make_repo(repo_);
        base_ = head();
    }
    void TearDown() override {
        ::unsetenv("GIT_AUTHOR_DATE");
        ::unsetenv("GIT_COMMITTER_DATE");
    }

    std::string head() { return sh_ok("git rev-parse HEAD", repo_).substr(0, 40); }

    // Writes `file` and commits it with `message` on the current branch.
    void commit(const std::string& file, const std::string& content, const std::string& message) {
        fs::create_directories((repo_ / file).parent_path());
        write_text(repo_ / file, content);
        sh_ok("git add -A && git commit -q -m " + quote(message), repo_);
    }

    // Commits the configuration in the base, as a project would: the rules come from there.
    void configure_base(const json& config) {
        fs::create_directories(repo_ / ".cocode");
        write_text(repo_ / ".cocode/config.json", config.dump(2));
        sh_ok("git add -A && git commit -q -m 'cocode config'", repo_);
        base_ = head();
    }

    Shell check(const std::string& args, const std::string& env = "") {
        return sh(env + quote(tool_path("cocode-check").string()) + " --worktree . --base " +
                      base_ + " " + args,
                  repo_);
    }

    json check_json(const std::string& args, int expected_exit, const std::string& env = "") {
        Shell r = check(args + " --json", env);
        EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
        last_json_ = dir_ / ("result-" + std::to_string(++results_) + ".json");
        write_text(last_json_, r.out);
        return json::parse(r.out);
    }

    // `id` is a C string, not a std::string: g++ 14 takes a reference returned from a call
    // with a temporary argument for a possibly dangling one.
    static const json& item(const json& result, const char* id) {
        for (const auto& c : result["checks"])
            if (c["id"] == id) return c;
        throw std::runtime_error(std::string("no check ") + id);
    }

    TempDir dir_;
    fs::path repo_;
    std::string base_;
    fs::path last_json_;
    int results_ = 0;
};

TEST_F(Check, EveryExitCodeRowOfTheProtocol) {
    commit("src/a.txt", "a\n", "Fix it\n\n" + kMarker);
    const std::vector<std::pair<int, std::string>> rows = {
        {0, "exit 0: the marker decides"},
        {1, "exit 1: general failure"},
        {2, "exit 2: invalid arguments (check the agent's configuration)"},
        {3, "exit 3: missing dependencies (run `cocode-dispatch doctor`)"},
        {124, "exit 124: timed out"},
        {130, "exit 130: interrupted"},
        {7, "exit 7: failed"}};
    for (const auto& [code, reason] : rows) {
        json r = check_json("--exit-code " + std::to_string(code), code == 0 ? 0 : 1);
        EXPECT_EQ(item(r, "exit_code")["result"], code == 0 ? "pass" : "fail") << code;
        EXPECT_EQ(item(r, "exit_code")["reason"], reason);
        EXPECT_EQ(r["verdict"], code == 0 ? "PASS" : "FAIL");
    }
    json unknown = check_json("", 0);  // CI without a run: skipped, the rest decides
    EXPECT_EQ(item(unknown, "exit_code")["result"], "skipped");
    // --quiet: nothing printed, the exit code says it.
    Shell quiet_pass = check("--exit-code 0 --quiet"), quiet_fail = check("--exit-code 1 --quiet");
    EXPECT_EQ(quiet_pass.exit_code, 0);
    EXPECT_EQ(quiet_fail.exit_code, 1);
    EXPECT_EQ(quiet_pass.out + quiet_pass.err + quiet_fail.out + quiet_fail.err, "");
}

TEST_F(Check, TheMarkerCountsOnlyInTheMessageOfACommitAfterTheBase) {
    // cocode-py's false positive: the marker already in the base.
    commit("docs/old.md", "x\n", "Earlier work\n\n" + kMarker);
    base_ = head();
    commit("src/a.txt", "a\n", "Start on the issue");
    json in_base = check_json("--exit-code 0", 1);
    EXPECT_EQ(item(in_base, "marker")["result"], "fail");
    EXPECT_NE(item(in_base, "marker")["reason"].get<std::string>().find("the base commit"),
              std::string::npos);

    commit("src/b.txt", "// " + kMarker + "\n", "Add b");  // only in a file
    EXPECT_EQ(item(check_json("--exit-code 0", 1), "marker")["result"], "fail");

    commit("src/c.txt", "c\n", "Finish\n\n" + kMarker);
    const std::string ready = head();
    commit("src/d.txt", "d\n", "A later touch");  // a later commit keeps it ready
    json r = check_json("--exit-code 0", 0);
    EXPECT_EQ(item(r, "marker")["result"], "pass");
    EXPECT_EQ(r["ready_commit"], ready);
    EXPECT_EQ(r["commits"].size(), 4u);
}

TEST_F(Check, NoCommitSinceTheBaseFails) {
    json r = check_json("--exit-code 0", 1);
    EXPECT_EQ(item(r, "commits")["result"], "fail");
    EXPECT_EQ(item(r, "commits")["reason"], "no commit since the base " + base_.substr(0, 7));
}

TEST_F(Check, ScopeViolationsNameTheFilesAndTheBranchCannotLoosenTheRules) {
    configure_base({{"check",
                     {{"allowed_paths", {"src/", "tests/**/*_test.py"}},
                      {"read_only_paths", {".github/**", "*.lock"}}}}});
    commit("src/ok.txt", "ok\n", "Inside");
    commit("tests/unit/x_test.py", "ok\n", "A test");
    json fine = check_json("--exit-code 0", 1);  // no marker yet, but scope passes
    EXPECT_EQ(item(fine, "scope")["result"], "pass");

    commit("docs/guide.md", "no\n", "Outside");
    commit(".github/workflows/ci.yml", "no\n", "Read-only");
    commit("src/deps.lock", "no\n", "Read-only anywhere");
    // The branch rewrites the rules to allow everything: the base's rules still judge it.
    write_text(repo_ / ".cocode/config.json", R"({"check": {}})");
    sh_ok("git commit -q -am 'loosen the rules' -m " + quote(kMarker), repo_);
    json r = check_json("--exit-code 0", 1);
    const json& scope = item(r, "scope");
    EXPECT_EQ(scope["result"], "fail");
    EXPECT_EQ(scope["files"], json({".cocode/config.json", ".github/workflows/ci.yml",
                                    "docs/guide.md", ".github/workflows/ci.yml", "src/deps.lock"}));
    EXPECT_NE(
        scope["reason"].get<std::string>().find("outside the allowed paths: .cocode/config.json"),
        std::string::npos);

    // On a terminal (or --format text) the same verdict reads as aligned text, not Markdown.
    Shell text = check("--exit-code 0 --format text");
    EXPECT_EQ(text.exit_code, 1);
    EXPECT_EQ(text.out.rfind("FAIL  cocode check\n", 0), 0u) << text.out;
    EXPECT_NE(text.out.find("\n  FAIL  scope         " + scope["reason"].get<std::string>() + "\n"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("  +1     -0    docs/guide.md (new)\n"), std::string::npos) << text.out;
    for (const char* markdown : {"|", "<details>", "`", "###"})
        EXPECT_EQ(text.out.find(markdown), std::string::npos) << markdown << " in\n" << text.out;
    // Piped, as before: Markdown.
    EXPECT_EQ(check("--exit-code 0").out.rfind("### ❌ FAIL", 0), 0u);
}

TEST_F(Check, VerifyCommandsPassFailAndTimeOutWithTheirOutputKept) {
    configure_base({{"check",
                     {{"verify",
                       {"test -f src/a.txt",
                        {{"name", "unit tests"}, {"run", "echo running; echo boom >&2; exit 3"}},
                        {{"name", "no secrets"}, {"run", "test -z \"$GITHUB_TOKEN$SECRET_X\""}},
                        {{"name", "slow"}, {"run", "exec sleep 3600"}, {"timeout", "1s"}}}}}}});
    commit("src/a.txt", "a\n", "Done\n\n" + kMarker);
    // "slow" never ends by itself: this returns only because its timeout ended it.
    json r = check_json("--exit-code 0", 1, "GITHUB_TOKEN=ghp_x SECRET_X=y ");
    std::vector<json> verify;
    for (const auto& c : r["checks"])
        if (c["id"] == "verify") verify.push_back(c);
    ASSERT_EQ(verify.size(), 4u);
    EXPECT_EQ(verify[0]["result"], "pass");
    EXPECT_EQ(verify[1]["result"], "fail");
    EXPECT_EQ(verify[1]["exit_code"], 3);
    EXPECT_EQ(verify[1]["output_tail"], "running\nboom");
    EXPECT_EQ(read_text(verify[1]["output_path"].get<std::string>()), "running\nboom\n");
    EXPECT_EQ(verify[2]["result"], "pass");  // the agent's code never sees a token
    EXPECT_EQ(verify[3]["result"], "fail");
    EXPECT_EQ(verify[3]["timed_out"], true);
    EXPECT_EQ(verify[3]["reason"], "timed out after 1s");

    // A verdict already FAIL does not spend minutes on the tests.
    json early = check_json("--exit-code 1", 1);
    for (const auto& c : early["checks"]) {
        if (c["id"] != "verify") continue;
        EXPECT_EQ(c["reason"], "not run: exit code failed");
    }
}

TEST_F(Check, JsonConformsToItsSchema) {
    configure_base({{"check", {{"allowed_paths", {"src/"}}, {"verify", {"true", "false"}}}}});
    commit("src/a.txt", "a\nb\n", "Add a\n\n" + kMarker);
    sh_ok(
        "git mv src/a.txt src/b.txt && printf '\\0\\1' > src/bin.dat && git add -A && "
        "git commit -q -m 'rename, binary'",
        repo_);
    std::vector<std::string> files;
    check_json("--exit-code 0 --issue 7 --agent seed", 1);
    files.push_back(last_json_.string());
    check_json("--exit-code 124", 1);
    files.push_back(last_json_.string());
    std::string docs;
    for (const auto& f : files) docs += " " + quote(f);
    const std::string node = "COCODE_PEERS_DIR=" + quote(COCODE_PEERS_DIR) + " node ";
    Shell valid =
        sh(node + quote(std::string(COCODE_SOURCE_DIR) + "/tests/e2e/validate_json.mjs") + " " +
               quote(std::string(COCODE_SOURCE_DIR) + "/docs/check.schema.json") + docs,
           dir_.path());
    EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
    // And the schema is not a rubber stamp: a broken document is refused.
    json broken = json::parse(read_text(files[0]));
    broken["verdict"] = "MAYBE";
    write_text(dir_ / "broken.json", broken.dump());
    Shell refused =
        sh(node + quote(std::string(COCODE_SOURCE_DIR) + "/tests/e2e/validate_json.mjs") + " " +
               quote(std::string(COCODE_SOURCE_DIR) + "/docs/check.schema.json") + " broken.json",
           dir_.path());
    EXPECT_EQ(refused.exit_code, 1);
}

// The Markdown report, byte for byte (durations masked). UPDATE_GOLDEN=1 rewrites the files.
void expect_golden(const std::string& name, std::string markdown) {
    markdown = std::regex_replace(markdown, std::regex("[0-9]+\\.[0-9]s"), "<t>s");
    const fs::path golden = fs::path(COCODE_SOURCE_DIR) / "tests/golden" / name;
    if (std::getenv("UPDATE_GOLDEN")) write_text(golden, markdown);
    EXPECT_EQ(markdown, read_text(golden)) << "UPDATE_GOLDEN=1 rewrites " << golden;
}

TEST_F(Check, AFailingReportMatchesItsGoldenFile) {
    configure_base(
        {{"check",
          {{"allowed_paths", {"src/"}},
           {"verify",
            {json{{"name", "tests"}, {"run", "printf 'ok 1\\nnot ok 2 | `x`\\n'; exit 1"}}}}}}});
    commit("src/a.txt", "one\ntwo\n", "Add a");
    commit("src/b.md", "b\n", "Document | it\n\n" + kMarker);
    Shell fail = check("--exit-code 0 --issue 7 --agent seed --branch cocode/7-seed");
    EXPECT_EQ(fail.exit_code, 1) << fail.err;
    expect_golden("check-fail.md", fail.out);
}

TEST_F(Check, APassingReportMatchesItsGoldenFile) {
    configure_base({{"check", {{"verify", {"true"}}}}});
    commit("src/a.txt", "one\ntwo\n", "Add a");
    sh_ok("git mv README.md README.txt && git commit -q -m 'Rename the readme'", repo_);
    commit("src/c.txt", "c\n", "Finish\n\n" + kMarker);
    Shell pass = check("--exit-code 0 --issue 7 --agent seed --branch cocode/7-seed");
    EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;
    expect_golden("check-pass.md", pass.out);
}

// A run's branch, checked out, with a bare `origin` to push to.
class Publish : public Check {
  protected:
    void SetUp() override {
        Check::SetUp();
        sh_ok(
            "git init -q --bare ../origin.git && git remote add origin ../origin.git && "
            "git push -q origin main && git checkout -q -b cocode/1-a",
            repo_);
        commit("src/a.txt", "a\n", "Fix it\n\n" + kMarker);
        fs::create_directories(dir_ / "issues");
        write_text(dir_ / "issues/1.json", json{{"number", 1},
                                                {"title", "Fix it"},
                                                {"body", "b"},
                                                {"state", "open"},
                                                {"labels", json::array()}}
                                               .dump());
    }
};

// Publishing is a phase of the check that Ctrl-C ends too: waiting out GitHub's rate limit (two
// minutes here), cocode-check stops at once with 130, saying so, instead of sleeping it out.
TEST_F(Publish, CtrlCEndsAWaitForGitHubsRateLimit) {
    FakeGitHub server(loopback_options());
    server.add_issue(1, "Fix it", "b", {});
    server.exhaust_rate_limit(std::chrono::seconds(120));
    const std::string args =
        "--issue 1 --agent a --exit-code 0 --publish --repo octo-org/demo "
        "--api-url " +
        server.base_url() + " --ca-bundle " + quote(loopback_tls().files.certificate.string());
    Shell started = sh("(GITHUB_TOKEN=" + std::string(kTestToken) + " " +
                           quote(tool_path("cocode-check").string()) + " --worktree . --base " +
                           base_ + " " + args +
                           " > ../out.txt 2> ../err.txt & echo $! > ../pid.txt; wait $!; "
                           "echo $? > ../code.txt) > /dev/null 2>&1 & "
                           "until test -s ../pid.txt; do sleep 0.01; done; cat ../pid.txt",
                       repo_);
    const pid_t check = static_cast<pid_t>(std::stol(started.out));
    ASSERT_TRUE(wait_until([&] {
        return read_text(dir_ / "err.txt").find("retrying in") != std::string::npos;
    })) << read_text(dir_ / "err.txt");
    ASSERT_EQ(::kill(check, SIGINT), 0);
    // Ended before the limit would have lifted (a wait_until's 20 s against its 120 s).
    ASSERT_TRUE(wait_until([&] { return !read_text(dir_ / "code.txt").empty(); }));
    EXPECT_EQ(read_text(dir_ / "code.txt"), "130\n") << read_text(dir_ / "err.txt");
    EXPECT_NE(read_text(dir_ / "err.txt").find("(interrupted)"), std::string::npos)
        << read_text(dir_ / "err.txt");
}

TEST_F(Publish, ThreePublishesToGitHubLeaveOneCommentOneStatusOnePullRequest) {
    FakeGitHub server(loopback_options());
    server.add_issue(1, "Fix it", "b", {});
    // The first comment and the first pull request land, but their answers are lost.
    for (const char* path : {"/issues/1/comments", "/pulls"}) {
        Fault lost;
        lost.method = "POST";
        lost.path_contains = path;
        lost.kind = Fault::Kind::apply_then_respond;
        server.inject(lost);
    }
    const std::string env = "GITHUB_TOKEN=" + std::string(kTestToken) + " ";
    const std::string args =
        "--issue 1 --agent a --publish --open-pr --repo "
        "octo-org/demo --api-url " +
        server.base_url() + " --ca-bundle " + quote(loopback_tls().files.certificate.string());
    for (int i = 0; i < 3; ++i) {
        json r = check_json(args + " --exit-code 0", 0, env);
        EXPECT_EQ(r["published"]["error"], nullptr) << r["published"];
        EXPECT_EQ(r["published"]["pr_url"], "https://github.com/octo-org/demo/pull/100");
    }
    auto comments = server.comments_of(1);
    ASSERT_EQ(comments.size(), 1u);
    const std::string body = comments[0]["body"];
    EXPECT_EQ(body.find("<!-- cocode:check/issue-1/a -->"), 0u) << body;
    EXPECT_NE(body.find("✅ PASS"), std::string::npos);
    ASSERT_EQ(server.statuses().size(), 1u);
    EXPECT_EQ(server.statuses()[0]["state"], "success");
    EXPECT_EQ(server.statuses()[0]["context"], "cocode/a");
    EXPECT_EQ(server.statuses()[0]["sha"], head());
    ASSERT_EQ(server.pulls().size(), 1u);
    EXPECT_EQ(server.pulls()[0]["draft"], true);
    EXPECT_EQ(server.pulls()[0]["head"]["ref"], "cocode/1-a");
    EXPECT_EQ(server.pulls()[0]["base"]["ref"], "main");
    EXPECT_EQ(server.pulls()[0]["body"].get<std::string>().find("Closes #1\n\n### ✅ PASS"), 0u);
    EXPECT_EQ(server.labels_of(1), std::vector<std::string>{"cocode:ready"});
    // The branch really went to origin.
    EXPECT_EQ(sh_ok("git rev-parse refs/heads/cocode/1-a", dir_ / "origin.git"), head() + "\n");

    // The verdict turns: the same comment says so, a new status is set, the PR is updated.
    json failed = check_json(args + " --exit-code 1", 1, env);
    EXPECT_EQ(failed["published"]["error"], nullptr);
    ASSERT_EQ(server.comments_of(1).size(), 1u);
    EXPECT_NE(server.comments_of(1)[0]["body"].get<std::string>().find("❌ FAIL"),
              std::string::npos);
    ASSERT_EQ(server.statuses().size(), 2u);
    EXPECT_EQ(server.statuses()[1]["state"], "failure");
    ASSERT_EQ(server.pulls().size(), 1u);
    EXPECT_NE(server.pulls()[0]["body"].get<std::string>().find("❌ FAIL"), std::string::npos);
}

// A matrix across runners: two jobs, each on a runner of its own, judge and publish one agent's
// work; a third job on a fresh runner — a clone with no run folders — compares them from what
// they published and names the best. A copy of a verdict posted later by anyone else, under the
// same marker, is not what it reads.
TEST_F(Publish, TheComparisonIsMadeOnAFreshRunnerFromThePublishedVerdicts) {
    FakeGitHub server(loopback_options());
    server.add_issue(1, "Fix it", "b", {});
    const std::string env = "GITHUB_TOKEN=" + std::string(kTestToken) + " ";
    const std::string github = " --repo octo-org/demo --api-url " + server.base_url() +
                               " --ca-bundle " + quote(loopback_tls().files.certificate.string());
    // Job 1 (this runner): agent a passes with a small change.
    check_json("--issue 1 --agent a --publish --exit-code 0" + github, 0, env);
    // Job 2 (another runner, its own clone): agent b fails.
    sh_ok(
        "git clone -q ../origin.git ../runner-2 && cd ../runner-2 && git checkout -q -b "
        "cocode/1-b && echo b > b.txt && git add b.txt && git commit -q -m 'Try b'",
        repo_);
    Shell b = sh(env + quote(tool_path("cocode-check").string()) + " --worktree . --base " + base_ +
                     " --issue 1 --agent b --publish --exit-code 1" + github,
                 dir_ / "runner-2");
    EXPECT_EQ(b.exit_code, 1) << b.err;
    // Someone posts a forged verdict for b afterwards, with b's marker: not read.
    const std::string forged = server.comments_of(1).back()["body"].get<std::string>();
    std::string pass = forged;
    pass.replace(pass.find("\"verdict\":\"FAIL\""), 16, "\"verdict\":\"PASS\"");
    server.add_comment(1, pass, "mallory");

    // Job 3: a fresh runner, nothing but the repository.
    sh_ok("git clone -q ../origin.git ../runner-3", repo_);
    Shell summary = sh(env + "GITHUB_ACTIONS=true GITHUB_OUTPUT=../summary-outputs " +
                           quote(tool_path("cocode-check").string()) +
                           " --issue 1 --summary --publish --json" + github,
                       dir_ / "runner-3");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const json result = json::parse(summary.out);
    EXPECT_EQ(result["best"], "a");
    ASSERT_EQ(result["candidates"].size(), 2u);
    EXPECT_EQ(result["candidates"][1]["agent"], "b");
    EXPECT_EQ(result["candidates"][1]["verdict"], "FAIL");
    // The step's outputs: the best agent and every agent's verdict.
    const auto outputs = read_lines(dir_ / "summary-outputs");
    EXPECT_NE(std::find(outputs.begin(), outputs.end(), "best-agent=a"), outputs.end());
    EXPECT_NE(std::find(outputs.begin(), outputs.end(), R"(verdicts={"a":"PASS","b":"FAIL"})"),
              outputs.end());
    EXPECT_NE(std::find(outputs.begin(), outputs.end(), "verdict=PASS"), outputs.end());
    int summaries = 0;
    for (const auto& c : server.comments_of(1)) {
        const std::string body = c["body"];
        if (body.find("<!-- cocode:check/issue-1/summary -->") != 0) continue;
        ++summaries;
        // Its column of files beyond the allowed paths says so (it read "outside plan", with
        // no plan anywhere).
        EXPECT_NE(body.find("| out of scope |"), std::string::npos) << body;
        EXPECT_EQ(body.find("plan"), std::string::npos) << body;
    }
    EXPECT_EQ(summaries, 1);
    // Nothing to compare anywhere: a clear error.
    server.add_issue(2, "Untouched", "", {});
    Shell none =
        sh(env + quote(tool_path("cocode-check").string()) + " --issue 2 --summary" + github,
           dir_ / "runner-3");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("no verdict published on the issue"), std::string::npos) << none.err;
}

TEST_F(Publish, TheLocalStoreGetsTheSameResult) {
    const std::string args = "--exit-code 0 --issue 1 --agent a --publish --issues ../issues";
    for (int i = 0; i < 3; ++i) check_json(args, 0);
    json comments = json::parse(read_text(dir_ / "issues/1.comments.json"));
    ASSERT_EQ(comments.size(), 1u);
    EXPECT_EQ(comments[0]["body"].get<std::string>().find("<!-- cocode:check/issue-1/a -->"), 0u);
    json statuses = json::parse(read_text(dir_ / "issues/statuses.json"));
    ASSERT_EQ(statuses.size(), 1u);
    EXPECT_EQ(statuses[0]["sha"], head());
    EXPECT_EQ(statuses[0]["state"], "success");
    json issue = json::parse(read_text(dir_ / "issues/1.json"));
    ASSERT_EQ(issue["labels"].size(), 1u);
    EXPECT_EQ(issue["labels"][0]["name"], "cocode:ready");

    // Another agent fails on the same issue: its own comment, and the PASS label stands.
    sh_ok("git checkout -q -b cocode/1-b main", repo_);
    commit("src/b.txt", "b\n", "No marker");
    check_json("--exit-code 0 --issue 1 --agent b --publish --issues ../issues", 1);
    comments = json::parse(read_text(dir_ / "issues/1.comments.json"));
    EXPECT_EQ(comments.size(), 2u);
    issue = json::parse(read_text(dir_ / "issues/1.json"));
    ASSERT_EQ(issue["labels"].size(), 1u);
    EXPECT_EQ(issue["labels"][0]["name"], "cocode:ready");
}

TEST_F(Publish, InGitHubActionsTheOutputsSummaryAndAnnotationsAreWritten) {
    const std::string env =
        "GITHUB_ACTIONS=true GITHUB_OUTPUT=../out.txt "
        "GITHUB_STEP_SUMMARY=../summary.md ";
    Shell r = check("--exit-code 1 --issue 1 --agent a --publish --issues ../issues", env);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.out.find("::error title=cocode check%3A exit code (a)::exit 1: general failure\n"),
              std::string::npos)
        << r.out;
    auto outputs = read_lines(dir_ / "out.txt");
    ASSERT_EQ(outputs.size(), 8u);
    EXPECT_EQ(outputs[0], "verdict=FAIL");
    ASSERT_EQ(outputs[1].rfind("report-path=", 0), 0u);
    const fs::path report = outputs[1].substr(12);
    EXPECT_EQ(read_text(report),
              read_text(dir_ / "summary.md").substr(0, read_text(report).size()));
    EXPECT_EQ(outputs[2].rfind("comment-url=file://", 0), 0u) << outputs[2];
    EXPECT_EQ(outputs[3], "pr-url=");
    EXPECT_EQ(outputs[4], "branch=cocode/1-a");
    EXPECT_EQ(outputs[5], "run-id=");  // --worktree: no run
    // Nor, then, what it used.
    EXPECT_EQ(outputs[6], "cost-usd=");
    EXPECT_EQ(outputs[7], R"(tokens={"cached":0,"input":0,"output":0})");
    EXPECT_NE(read_text(dir_ / "summary.md").find("❌ FAIL · cocode check · `a` on #1"),
              std::string::npos);
}

TEST_F(Publish, ThePrePushGateStopsAFailingBranchAndLetsTheRestThrough) {
    sh_ok(quote(tool_path("cocode-hook").string()) + " install --hook pre-push", repo_);
    // The rules live on main, where every branch starts.
    sh_ok("git checkout -q main", repo_);
    configure_base({{"check", {{"allowed_paths", {"src/"}}}}});
    sh_ok("git push -q origin main", repo_);

    sh_ok("git checkout -q -b good main", repo_);
    commit("src/good.txt", "g\n", "Good work\n\n" + kMarker);
    Shell good = sh("git push origin good", repo_);
    EXPECT_EQ(good.exit_code, 0) << good.err;
    EXPECT_NE(good.err.find("cocode-hook: good: PASS"), std::string::npos) << good.err;

    sh_ok("git checkout -q -b bad main", repo_);
    commit("docs/out.md", "x\n", "Out of scope\n\n" + kMarker);
    Shell bad = sh("git push origin bad", repo_);
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("| ❌ | scope | outside the allowed paths: docs/out.md |"),
              std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("cocode-hook: bad: FAIL; the push is stopped"), std::string::npos);
    EXPECT_EQ(sh("git rev-parse --verify -q refs/heads/bad", dir_ / "origin.git").exit_code, 1);

    // Work that is not cocode's goes through untouched: nothing checked.
    sh_ok("git checkout -q -b plain main", repo_);
    commit("docs/notes.md", "n\n", "Notes");
    Shell plain = sh("git push origin plain", repo_);
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.err.find("cocode-hook"), std::string::npos) << plain.err;

    // Fixed: what the branch changes, taken whole, is back in scope, and the push goes.
    sh_ok("git checkout -q bad && git rm -q docs/out.md && git commit -q -m 'Back in scope' -m " +
              quote(kMarker),
          repo_);
    Shell fixed = sh("git push origin bad", repo_);
    EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
}

// The gate verifies exactly the commit pushed, whatever is checked out or left uncommitted
// where the push is made: a branch whose test fails is stopped from another branch's worktree
// whose files pass.
TEST_F(Publish, ThePrePushGateVerifiesThePushedCommitNotTheWorktree) {
    sh_ok(quote(tool_path("cocode-hook").string()) + " install --hook pre-push", repo_);
    sh_ok("git checkout -q main", repo_);
    commit("src/value.txt", "good\n", "A value");
    configure_base({{"check", {{"verify", {"grep -q good src/value.txt"}}}}});
    sh_ok("git push -q origin main", repo_);

    sh_ok("git checkout -q -b broken main", repo_);
    commit("src/value.txt", "bad\n", "Break it\n\n" + kMarker);
    sh_ok("git checkout -q main", repo_);  // main's src/value.txt, which passes, is checked out
    Shell pushed = sh("git push origin broken", repo_);
    EXPECT_NE(pushed.exit_code, 0) << pushed.err;
    EXPECT_NE(pushed.err.find("cocode-hook: broken: FAIL; the push is stopped"), std::string::npos)
        << pushed.err;

    // And an uncommitted fix in the worktree of the branch itself does not make it pass.
    sh_ok("git checkout -q broken && echo good > src/value.txt", repo_);
    Shell dirty = sh("git push origin broken", repo_);
    EXPECT_NE(dirty.exit_code, 0) << dirty.err;
    EXPECT_NE(dirty.err.find("src/value.txt (modified)"), std::string::npos) << dirty.err;
}

TEST_F(Check, BadArgumentsAreOneLineWithExitTwo) {
    Shell none = sh(quote(tool_path("cocode-check").string()), repo_);
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_EQ(none.err,
              "cocode-check: error: give --run RUN_ID, --issue N --agent NAME, or --worktree "
              "DIR --base SHA (or --issue N --summary)\n");
    Shell no_run =
        sh(quote(tool_path("cocode-check").string()) + " --issue 4 --agent nobody", repo_);
    EXPECT_EQ(no_run.exit_code, 2);
    EXPECT_EQ(no_run.err,
              "cocode-check: error: --issue 4 --agent nobody: no run of that agent "
              "on that issue in " +
                  (repo_ / ".cocode/runs").string() + "\n");
    Shell base = check("--exit-code 0", "");
    EXPECT_EQ(base.exit_code, 1);  // fine arguments; no commit
    Shell bad_base =
        sh(quote(tool_path("cocode-check").string()) + " --worktree . --base nope", repo_);
    EXPECT_EQ(bad_base.exit_code, 2);
    EXPECT_EQ(bad_base.err.find("cocode-check: error: --base nope: "), 0u) << bad_base.err;
    Shell push = check("--push");
    EXPECT_EQ(push.exit_code, 2);
    EXPECT_EQ(push.err, "cocode-check: error: --push and --open-pr go with --publish\n");
    configure_base({{"check", {{"verify", {{{"name", "x"}}}}}}});
    Shell config = check("");
    EXPECT_EQ(config.exit_code, 2);
    EXPECT_NE(config.err.find(":.cocode/config.json: field 'check.verify[0].run': expected the "
                              "command to run"),
              std::string::npos)
        << config.err;
}

}  // namespace
}  // namespace cocode::test
