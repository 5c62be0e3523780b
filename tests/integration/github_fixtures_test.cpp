// The GitHub client against recorded real GitHub traffic: @octokit/fixtures-server, whose
// scenarios replay what github.com answered, checking the requests' order, paths, headers and
// bodies. Plus our own scenario in the same format (tests/github-fixtures/).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "github/api.h"
#include "github/http.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;

// The token every recorded scenario was made with.
const std::string kFixturesToken = std::string(39, '0') + "1";

// node tests/peers/fixtures-server.mjs, bound to 127.0.0.1; it exits when its stdin closes.
class FixturesServer {
  public:
    FixturesServer() {
        std::string command = "exec node " +
                              quote(COCODE_SOURCE_DIR "/tests/peers/fixtures-server.mjs") + " " +
                              quote(COCODE_PEERS_DIR) + " > " + quote((dir_ / "out").string());
        stdin_ = ::popen(command.c_str(), "w");
        if (stdin_ == nullptr) throw std::runtime_error("cannot start node");
        for (int i = 0; i < 300 && port_ == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            std::sscanf(read_text(dir_ / "out").c_str(), "listening %d", &port_);
        }
        if (port_ == 0) throw std::runtime_error("fixtures server did not start");
    }
    ~FixturesServer() { ::pclose(stdin_); }

    // Loads `scenario`; returns a client whose base is the scenario's URL.
    std::unique_ptr<github::HttpClient> scenario(const std::string& name) {
        github::HttpOptions options;
        options.base = github::parse_base_url("http://127.0.0.1:" + std::to_string(port_), "t")
                           .value_or_throw();
        auto control =
            github::HttpClient::create(options, github::anonymous_auth()).value_or_throw();
        auto made = control->request("POST", "/fixtures", nlohmann::json{{"scenario", name}})
                        .value_or_throw();
        EXPECT_EQ(made.status, 201) << made.body;
        auto url = nlohmann::json::parse(made.body).at("url").get<std::string>();
        options.base = github::parse_base_url(url, "fixtures url").value_or_throw();
        options.max_attempts = 1;  // a replayed scenario has no second answer to give
        return github::HttpClient::create(options,
                                          github::token_auth(kFixturesToken, "GITHUB_TOKEN"))
            .value_or_throw();
    }

  private:
    TempDir dir_;
    FILE* stdin_ = nullptr;
    int port_ = 0;
};

class RecordedGitHub : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { server_ = new FixturesServer(); }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    static FixturesServer* server_;
};
FixturesServer* RecordedGitHub::server_ = nullptr;

TEST_F(RecordedGitHub, PaginateIssuesReadsEveryPage) {
    auto http = server_->scenario("paginate-issues");
    github::GitHub api(*http, {"octokit-fixture-org", "paginate-issues"});
    github::IssueQuery query;
    query.per_page = 3;
    auto issues = api.issues(query);
    ASSERT_TRUE(issues.ok()) << issues.error().message;
    EXPECT_EQ(issues->size(), 13u);  // 4 pages of 3 and one of 1: five requests, no cap
    EXPECT_EQ(http->stats().requests, 5u);
    for (const auto& issue : issues.value()) EXPECT_FALSE(issue.title.empty());
}

TEST_F(RecordedGitHub, AddLabelsToIssue) {
    auto http = server_->scenario("add-labels-to-issue");
    // The recording first creates the issue; we replay that with the plain client.
    auto created = http->request("POST", "/repos/octokit-fixture-org/add-labels-to-issue/issues",
                                 nlohmann::json{{"title", "Issue without a label"}});
    ASSERT_TRUE(created.ok()) << created.error().message;
    ASSERT_EQ(created->status, 201) << created->body;
    github::GitHub api(*http, {"octokit-fixture-org", "add-labels-to-issue"});
    auto labels = api.add_labels(1, {"Foo", "bAr", "baZ"});
    ASSERT_TRUE(labels.ok()) << labels.error().message;
    EXPECT_EQ(labels.value(), (std::vector<std::string>{"Foo", "bAr", "baZ"}));
}

TEST_F(RecordedGitHub, ErrorsCarryGitHubsMessageToTheUser) {
    auto http = server_->scenario("errors");
    github::GitHub api(*http, {"octokit-fixture-org", "errors"});
    auto made = api.create_label("foo", "invalid", "");
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().message,
              "GitHub: POST /repos/octokit-fixture-org/errors/labels: 422 Validation Failed "
              "(Label color: invalid)");
}

TEST_F(RecordedGitHub, OurScenarioGetsAnIssueAndCommentsOnIt) {
    auto http = server_->scenario("get-issue-and-create-comment");
    github::GitHub api(*http, {"octokit-fixture-org", "hello-world"});
    auto issue = api.issue(1);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(issue->title, "Found a bug");
    EXPECT_EQ(issue->body, "I'm having a problem with this.");
    auto comment = api.create_comment(
        1, github::comment_marker("issue-1/fixture") + "\ncocode fixture comment");
    ASSERT_TRUE(comment.ok()) << comment.error().message;
    EXPECT_GT(comment->id, 0);
    EXPECT_NE(comment->body.find("cocode fixture comment"), std::string::npos);
}

}  // namespace
}  // namespace cocode::test
