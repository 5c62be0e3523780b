// cocode-dispatch issues list|show as a user runs it: on the local store and on GitHub over
// loopback TLS, with the exit codes and one-line errors of the protocol.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "fake_github.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;

std::string dispatch() { return quote(tool_path("cocode-dispatch").string()); }

void write_issue(const fs::path& dir, long number, const std::string& title,
                 const std::vector<std::string>& labels, const std::string& state = "open") {
    nlohmann::json issue = {{"number", number},
                            {"title", title},
                            {"state", state},
                            {"body", "Body of " + title + "\n"},
                            {"user", {{"login", "octocat"}}},
                            {"labels", nlohmann::json::array()}};
    for (const auto& l : labels) issue["labels"].push_back({{"name", l}});
    write_text(dir / (std::to_string(number) + ".json"), issue.dump(2));
}

TEST(DispatchIssues, ListsAndShowsTheLocalStore) {
    TempDir dir;
    fs::create_directories(dir / "issues");
    write_issue(dir / "issues", 1, "Add a flag", {"cocode"});
    write_issue(dir / "issues", 2, "Fix the parser", {"cocode", "bug"});
    write_issue(dir / "issues", 3, "Old", {"cocode"}, "closed");

    Shell list = sh(dispatch() + " issues list --issues issues --label cocode", dir.path());
    ASSERT_EQ(list.exit_code, 0) << list.err;
    EXPECT_EQ(list.out,
              "#2\topen\tFix the parser\t[cocode, bug]\n#1\topen\tAdd a flag\t[cocode]\n");
    EXPECT_EQ(list.err, "2 issues from local folder issues\n");

    Shell closed =
        sh(dispatch() + " issues list --issues issues --state closed --json", dir.path());
    ASSERT_EQ(closed.exit_code, 0) << closed.err;
    auto json = nlohmann::json::parse(closed.out);
    ASSERT_EQ(json.size(), 1u);
    EXPECT_EQ(json[0]["title"], "Old");

    Shell show = sh(dispatch() + " issues show 2 --issues issues", dir.path());
    ASSERT_EQ(show.exit_code, 0) << show.err;
    EXPECT_EQ(show.out,
              "#2 Fix the parser\nstate:  open\nlabels: cocode, bug\n\nBody of Fix the parser\n");
}

TEST(DispatchIssues, TheRepositorysOwnStoreIsTheDefault) {
    TempDir dir;
    make_repo(dir / "repo");
    fs::create_directories(dir / "repo/.cocode/issues");
    write_issue(dir / "repo/.cocode/issues", 4, "Local by default", {});
    fs::create_directories(dir / "repo/src");
    Shell list = sh(dispatch() + " issues list", dir / "repo/src");
    ASSERT_EQ(list.exit_code, 0) << list.err;
    EXPECT_EQ(list.out, "#4\topen\tLocal by default\n");
}

TEST(DispatchIssues, BadInputIsOneLineNamingFileAndField) {
    TempDir dir;
    fs::create_directories(dir / "issues");
    write_text(dir / "issues/5.json", R"({"number": 5, "title": ["not", "a string"]})");
    write_issue(dir / "issues", 4, "Readable", {});
    // The others are listed all the same (before, one bad file listed nothing), the bad one
    // named, and the exit says something was wrong.
    Shell bad = sh(dispatch() + " issues list --issues issues", dir.path());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.out, "#4\topen\tReadable\n");
    EXPECT_EQ(bad.err,
              "1 issue from local folder issues\n"
              "cocode-dispatch: error: issues/5.json: field 'title': expected a string\n");
    // As JSON too: the readable ones, the bad one named.
    Shell json_list = sh(dispatch() + " issues list --issues issues --json", dir.path());
    EXPECT_EQ(json_list.exit_code, 2);
    EXPECT_EQ(nlohmann::json::parse(json_list.out).size(), 1u);
    fs::remove(dir / "issues/4.json");

    write_text(dir / "issues/5.json", "{\n  \"number\": 5,\n  \"title\": \"x\"\n  oops\n}");
    Shell broken = sh(dispatch() + " issues show 5 --issues issues", dir.path());
    EXPECT_EQ(broken.exit_code, 2);
    EXPECT_EQ(broken.err.rfind("cocode-dispatch: error: issues/5.json:4: not valid JSON", 0), 0u)
        << broken.err;

    write_text(dir / "issues/6.json", R"({"number": 7, "title": "misfiled"})");
    Shell misfiled = sh(dispatch() + " issues show 6 --issues issues", dir.path());
    EXPECT_EQ(misfiled.exit_code, 2);
    EXPECT_NE(misfiled.err.find("field 'number': expected 6"), std::string::npos) << misfiled.err;

    Shell missing = sh(dispatch() + " issues list --issues nowhere", dir.path());
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
    Shell both = sh(dispatch() + " issues list --issues issues --repo a/b", dir.path());
    EXPECT_EQ(both.exit_code, 2);
    Shell bad_repo = sh(dispatch() + " issues list --repo not-a-repo", dir.path());
    EXPECT_EQ(bad_repo.exit_code, 2);
    EXPECT_EQ(bad_repo.err, "cocode-dispatch: error: --repo: 'not-a-repo' is not OWNER/NAME\n");
    Shell bad_url = sh(dispatch() + " issues list --repo a/b --api-url ghe.example", dir.path());
    EXPECT_EQ(bad_url.exit_code, 2);
    Shell nothing = sh(dispatch() + " issues list", dir.path());
    EXPECT_EQ(nothing.exit_code, 2);
    EXPECT_NE(nothing.err.find("--repo OWNER/NAME or --issues DIR"), std::string::npos);
}

TEST(DispatchIssues, ReadsGitHubForTheOriginRemoteWithTheTokenKeptSecret) {
    TempDir dir;
    FakeGitHub server(loopback_options());
    server.add_issue(21, "Make it faster", "Profile first.", {"cocode", "perf"});
    server.add_issue(22, "Unrelated", "", {"docs"});
    server.add_issue(23, "A pull request", "", {"cocode"}, "open", true);
    server.add_comment(21, "a comment");

    make_repo(dir / "repo");
    sh_ok("git remote add origin git@github.com:octo-org/demo.git", dir / "repo");
    const std::string env =
        "GITHUB_TOKEN=" + std::string(kTestToken) + " GITHUB_API_URL=" + server.base_url() + " ";
    const std::string ca = " --ca-bundle " + quote(loopback_tls().files.certificate.string());

    Shell list = sh(env + dispatch() + " issues list --label cocode" + ca, dir / "repo");
    ASSERT_EQ(list.exit_code, 0) << list.err;
    EXPECT_EQ(list.out, "#21\topen\tMake it faster\t[cocode, perf]\n");
    EXPECT_NE(list.err.find("from github octo-org/demo (" + server.base_url() + ")"),
              std::string::npos)
        << list.err;

    Shell show = sh(env + dispatch() + " issues show 21 --comments --json" + ca, dir / "repo");
    ASSERT_EQ(show.exit_code, 0) << show.err;
    auto json = nlohmann::json::parse(show.out);
    EXPECT_EQ(json["body"], "Profile first.");
    EXPECT_EQ(json["labels"], (std::vector<std::string>{"cocode", "perf"}));
    EXPECT_EQ(json["comment_list"][0]["body"], "a comment");

    Shell pr = sh(env + dispatch() + " issues show 23" + ca, dir / "repo");
    EXPECT_EQ(pr.exit_code, 1);
    EXPECT_NE(pr.err.find("is a pull request"), std::string::npos);

    // The second poll is answered 304 from .cocode/cache/, which git does not see.
    long remaining = server.rate_remaining();
    Shell again = sh(env + dispatch() + " issues list --label cocode" + ca, dir / "repo");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, list.out);
    EXPECT_EQ(server.rate_remaining(), remaining);
    EXPECT_EQ(sh_ok("git status --porcelain", dir / "repo"), "");

    // Without the CA, TLS verification refuses; the error names the remedy, not the token.
    Shell untrusted = sh(env + dispatch() + " issues list --no-cache", dir / "repo");
    EXPECT_EQ(untrusted.exit_code, 1);
    EXPECT_NE(untrusted.err.find("--ca-bundle"), std::string::npos) << untrusted.err;
    // A wrong token: GitHub's message and where the token came from, never the token.
    Shell wrong =
        sh("GH_TOKEN=ghp_wrongwrongwrongwrongwrongwrongwrong0 GITHUB_API_URL=" + server.base_url() +
               " " + dispatch() + " issues show 21" + ca,
           dir / "repo");
    EXPECT_EQ(wrong.exit_code, 1);
    EXPECT_EQ(wrong.err,
              "cocode-dispatch: error: GitHub: GET /repos/octo-org/demo/issues/21: 401 Bad "
              "credentials (as GH_TOKEN)\n");
    for (const Shell* run : {&list, &show, &again, &untrusted, &wrong}) {
        EXPECT_EQ(run->out.find(kTestToken), std::string::npos);
        EXPECT_EQ(run->err.find(kTestToken), std::string::npos);
    }
}

// `plan`: the matrix a workflow fans out over, from GitHub's labelled issues and the
// configuration's agents; inside Actions also the step outputs; an empty plan is exit 0 with
// count 0 (GitHub refuses an empty matrix, so the workflow tests the count).
TEST(DispatchIssues, PlanIsTheMatrixOfIssuesAndAgents) {
    TempDir dir;
    FakeGitHub server(loopback_options());
    server.add_issue(31, "First", "x", {"cocode"});
    server.add_issue(32, "Second; `rm -rf /` ${{ github.token }}", "y", {"cocode"});
    server.add_issue(33, "Not labelled", "", {"docs"});
    make_repo(dir / "repo");
    sh_ok("git remote add origin git@github.com:octo-org/demo.git", dir / "repo");
    fs::create_directories(dir / "repo/.cocode");
    write_text(dir / "repo/.cocode/config.json",
               R"({"agents": {"claude": {"type": "claude"}, "fixer": {"command": "true"}}})");
    const std::string env =
        "GITHUB_TOKEN=" + std::string(kTestToken) + " GITHUB_API_URL=" + server.base_url() +
        " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) + " ";
    const fs::path output = dir / "github-output";
    const std::string actions = "GITHUB_ACTIONS=true GITHUB_OUTPUT=" + quote(output.string()) + " ";

    Shell plan = sh(env + actions + dispatch() + " plan --label cocode --json", dir / "repo");
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    // Numbers and agent names only: no issue text reaches the workflow.
    // In the order the source lists them (GitHub: newest first), as `run` takes them.
    const std::string matrix =
        R"({"include":[{"agent":"claude","issue":32},{"agent":"fixer","issue":32},)"
        R"({"agent":"claude","issue":31},{"agent":"fixer","issue":31}]})";
    EXPECT_EQ(plan.out, matrix + "\n");
    EXPECT_EQ(plan.err, "cocode-dispatch: 4 runs: 2 issues × 2 agents\n");
    EXPECT_EQ(read_text(output), "matrix=" + matrix + "\ncount=4\nissues=[32,31]\nplan=false\n");

    Shell one = sh(env + dispatch() + " plan 33 --agent fixer", dir / "repo");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(one.out, "#33\tfixer\n");

    fs::remove(output);
    Shell empty = sh(env + actions + dispatch() + " plan --label none --json", dir / "repo");
    EXPECT_EQ(empty.exit_code, 0) << empty.err;
    EXPECT_EQ(empty.out, "{\"include\":[]}\n");
    EXPECT_EQ(empty.err, "cocode-dispatch: nothing to plan: no open issues with those labels\n");
    EXPECT_EQ(read_text(output), "matrix={\"include\":[]}\ncount=0\nissues=[]\nplan=false\n");

    Shell typo = sh(env + dispatch() + " plan 31 --agent fixr", dir / "repo");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_EQ(typo.err,
              "cocode-dispatch: error: --agent: no agent 'fixr' in .cocode/config.json (did you "
              "mean 'fixer'?)\n");
    Shell nothing = sh(env + dispatch() + " plan", dir / "repo");
    EXPECT_EQ(nothing.exit_code, 2);
    EXPECT_EQ(nothing.err,
              "cocode-dispatch: error: plan: name at least one ISSUE or a --label (or --event)\n");
}

}  // namespace
}  // namespace cocode::test
