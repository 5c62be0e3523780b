// The GitHub client against GitHub on loopback TLS, with the faults GitHub really produces.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/files.h"
#include "github_fixture.h"

namespace cocode::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

int count_requests(const FakeGitHub& server, const std::string& method, const std::string& part) {
    int n = 0;
    for (const auto& r : server.requests())
        if (r.method == method && r.path.find(part) != std::string::npos) ++n;
    return n;
}

TEST_F(GitHubTest, ListsEveryPageAndLeavesPullRequestsOut) {
    for (long n = 1; n <= 250; ++n)
        server.add_issue(n, "issue " + std::to_string(n), "", {"cocode"});
    server.add_issue(251, "a pull request", "", {"cocode"}, "open", /*pull_request=*/true);
    auto http = client();
    github::GitHub api(*http, repo());
    auto issues = api.issues({});
    ASSERT_TRUE(issues.ok()) << issues.error().message;
    ASSERT_EQ(issues->size(), 250u);
    EXPECT_EQ(issues->front().number, 250);
    EXPECT_EQ(issues->back().number, 1);
    EXPECT_EQ(count_requests(server, "GET", "/issues"), 3);  // 100 + 100 + 51, no silent cap
}

// Who the token acts as (GET /user): the merge gate's requester at a terminal.
TEST_F(GitHubTest, TheTokensLoginIsTheUserItActsAs) {
    auto http = client();
    github::GitHub api(*http, repo());
    auto login = api.token_login();
    ASSERT_TRUE(login.ok()) << login.error().message;
    EXPECT_EQ(*login, "octocat");
}

// GitHub pages comments by offset: a comment of page 1 deleted between the reads of page 1 and
// page 2 moves page 2's first comment onto page 1, and a single reading never sees it. The list
// is read until two readings agree, so the comment is there; a list of one page is read once.
TEST_F(GitHubTest, ACommentListThatShiftsBetweenPagesStillHoldsEveryComment) {
    server.add_issue(1, "busy", "", {});
    for (int i = 1; i <= 100; ++i) server.add_comment(1, "comment " + std::to_string(i));
    const long long first_of_page_two = server.add_comment(1, "the 101st");
    for (int i = 102; i <= 121; ++i) server.add_comment(1, "comment " + std::to_string(i));
    server.delete_between_pages(1, 2);
    auto http = client();
    github::GitHub api(*http, repo());
    auto comments = api.comments(1);
    ASSERT_TRUE(comments.ok()) << comments.error().message;
    EXPECT_EQ(server.shifts_left(), 0);  // the first two readings were shifted under them
    ASSERT_EQ(comments->size(), 119u);   // two of page 1 deleted meanwhile, none missed
    EXPECT_EQ((*comments)[98].id, first_of_page_two);
    // Four readings of two pages: two shifted (each missing a comment), two that agree.
    EXPECT_EQ(count_requests(server, "GET", "/issues/1/comments"), 8);

    // One page is one view: read once.
    server.add_issue(2, "quiet", "", {});
    server.add_comment(2, "only");
    ASSERT_TRUE(api.comments(2).ok());
    EXPECT_EQ(count_requests(server, "GET", "/issues/2/comments"), 1);

    // --per-page reaches the list: pages of 40.
    api.set_page_size(40);
    ASSERT_EQ(api.comments(1).value().size(), 119u);
    int pages_of_40 = 0;
    for (const auto& r : server.requests())
        pages_of_40 += r.path.find("/issues/1/comments?") != std::string::npos &&
                       r.path.find("per_page=40") != std::string::npos;
    EXPECT_EQ(pages_of_40, 6);  // 40 + 40 + 39, read twice (several pages): they agree
}

TEST_F(GitHubTest, ANextPageLinkThatLoopsIsAnErrorNotAnEndlessList) {
    const std::string page = server.base_url() + "/repos/octo-org/demo/issues?page=1";
    server.inject({"GET",
                   "/issues",
                   Fault::Kind::respond,
                   200,
                   {{"Link", "<" + page + ">; rel=\"next\""}},
                   "[]",
                   10});
    auto http = client();
    auto issues = github::GitHub(*http, repo()).issues({});
    ASSERT_FALSE(issues.ok());
    EXPECT_NE(issues.error().message.find("a page already read"), std::string::npos)
        << issues.error().message;
    EXPECT_EQ(count_requests(server, "GET", "/issues"), 2);
}

TEST_F(GitHubTest, FiltersByLabelAndStateOnTheServer) {
    server.add_issue(1, "wanted", "body", {"cocode", "bug"});
    server.add_issue(2, "other label", "", {"bug"});
    server.add_issue(3, "closed", "", {"cocode"}, "closed");
    auto http = client();
    github::GitHub api(*http, repo());
    github::IssueQuery query;
    query.labels = {"cocode"};
    auto open = api.issues(query);
    ASSERT_TRUE(open.ok()) << open.error().message;
    ASSERT_EQ(open->size(), 1u);
    EXPECT_EQ(open->front().title, "wanted");
    EXPECT_EQ(open->front().labels, (std::vector<std::string>{"cocode", "bug"}));
    query.state = "all";
    EXPECT_EQ(api.issues(query)->size(), 2u);
}

TEST_F(GitHubTest, RetriesServerErrorsThenSucceeds) {
    server.add_issue(7, "flaky", "body", {});
    server.inject(
        {"GET", "/issues/7", Fault::Kind::respond, 502, {}, R"({"message":"Bad Gateway"})", 2});
    auto http = client();
    auto issue = github::GitHub(*http, repo()).issue(7);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(issue->title, "flaky");
    EXPECT_EQ(count_requests(server, "GET", "/issues/7"), 3);
    EXPECT_EQ(http->stats().retries, 2u);
    ASSERT_FALSE(notices.empty());
    EXPECT_NE(notices.front().find("502"), std::string::npos);
}

TEST_F(GitHubTest, GivesUpAfterTheAttemptsWithTheLastError) {
    server.add_issue(7, "down", "", {});
    server.inject(
        {"GET", "/issues/7", Fault::Kind::respond, 503, {}, R"({"message":"Unavailable"})", 100});
    auto options = client_options();
    options.max_attempts = 3;
    auto http = client(options);
    auto issue = github::GitHub(*http, repo()).issue(7);
    ASSERT_FALSE(issue.ok());
    EXPECT_NE(issue.error().message.find("503 Unavailable"), std::string::npos)
        << issue.error().message;
    EXPECT_EQ(count_requests(server, "GET", "/issues/7"), 3);
}

TEST_F(GitHubTest, RetriesAConnectionResetMidBody) {
    server.add_issue(8, "cut short", std::string(20000, 'x'), {});
    server.inject({"GET", "/issues/8", Fault::Kind::reset_mid_body, 200, {}, "{}", 1});
    auto http = client();
    auto issue = github::GitHub(*http, repo()).issue(8);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(issue->body.size(), 20000u);
    EXPECT_EQ(count_requests(server, "GET", "/issues/8"), 2);
}

TEST_F(GitHubTest, SecondaryRateLimitWaitsForRetryAfter) {
    server.add_issue(9, "busy", "", {});
    server.inject(
        {"GET",
         "/issues/9",
         Fault::Kind::respond,
         403,
         {{"retry-after", "2"}},
         R"({"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest"})",
         1});
    auto http = waiting_client(client_options());
    auto issue = github::GitHub(*http, repo()).issue(9);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    // Retry-After counts from the answer: what is left of it is waited, never more — on a
    // busy machine a few milliseconds pass between the answer and the wait.
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_LE(waits[0], 2s);
    EXPECT_GE(waits[0], 1500ms);
    EXPECT_EQ(count_requests(server, "GET", "/issues/9"), 2);
    ASSERT_EQ(notices.size(), 1u);
    EXPECT_NE(notices[0].find("retry-after 2"), std::string::npos) << notices[0];
}

TEST_F(GitHubTest, SecondaryRateLimitWithoutHeaderWaitsAMinuteOrFails) {
    server.add_issue(9, "busy", "", {});
    server.inject({"POST",
                   "/issues/9/labels",
                   Fault::Kind::respond,
                   403,
                   {},
                   R"({"message":"You have exceeded a secondary rate limit."})",
                   1});
    auto options = client_options();
    options.max_wait = 30s;  // less than the minute GitHub asks for
    auto http = waiting_client(options);
    auto labels = github::GitHub(*http, repo()).add_labels(9, {"x"});
    ASSERT_FALSE(labels.ok());
    EXPECT_TRUE(waits.empty());  // it does not sleep a wait it cannot finish
    EXPECT_NE(labels.error().message.find("secondary rate limit"), std::string::npos);
    EXPECT_NE(labels.error().message.find("60 s"), std::string::npos) << labels.error().message;
    EXPECT_TRUE(server.labels_of(9).empty());
}

TEST_F(GitHubTest, PrimaryRateLimitResettingTooLateFailsClearly) {
    server.add_issue(1, "one", "", {});
    server.exhaust_rate_limit(3600s);
    auto options = client_options();
    options.max_wait = 60s;
    auto http = waiting_client(options);
    auto issue = github::GitHub(*http, repo()).issue(1);
    ASSERT_FALSE(issue.ok());
    EXPECT_TRUE(waits.empty());
    const std::string& message = issue.error().message;
    EXPECT_NE(message.find("rate limit exhausted for GITHUB_TOKEN"), std::string::npos) << message;
    EXPECT_NE(message.find("resets at"), std::string::npos) << message;
    EXPECT_NE(message.find("--max-wait"), std::string::npos) << message;
    EXPECT_EQ(count_requests(server, "GET", "/issues/1"), 1);
    // Asked again before the reset, the client does not ask GitHub: refused at once, the same
    // reason, and still one request.
    auto again = github::GitHub(*http, repo()).issue(1);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message.find("rate limit exhausted for GITHUB_TOKEN"),
              std::string::npos)
        << again.error().message;
    EXPECT_TRUE(waits.empty());
    EXPECT_EQ(count_requests(server, "GET", "/issues/1"), 1);
    EXPECT_TRUE(http->stats().quiet_until.has_value());
}

TEST_F(GitHubTest, PrimaryRateLimitWaitsForAShortReset) {
    server.add_issue(1, "one", "", {});
    server.exhaust_rate_limit(
        3s);  // long enough that a slow (sanitized) first request still hits it
    auto http = client();
    auto issue = github::GitHub(*http, repo()).issue(1);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(count_requests(server, "GET", "/issues/1"), 2);
}

TEST_F(GitHubTest, ARepeatedPollIsAnsweredFromTheCacheFor304) {
    for (long n = 1; n <= 150; ++n) server.add_issue(n, "issue " + std::to_string(n), "", {});
    auto first = client();
    auto before = github::GitHub(*first, repo()).issues({});
    ASSERT_TRUE(before.ok()) << before.error().message;
    EXPECT_EQ(first->stats().not_modified, 0u);
    long remaining = server.rate_remaining();

    auto second = client();  // a new process: only the disk cache carries over
    auto again = github::GitHub(*second, repo()).issues({});
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->size(), 150u);
    EXPECT_EQ(second->stats().requests, 2u);
    EXPECT_EQ(second->stats().not_modified, 2u);
    EXPECT_EQ(server.rate_remaining(), remaining);  // 304s cost no rate limit

    server.add_issue(151, "new", "", {});
    auto third = client();
    auto changed = github::GitHub(*third, repo()).issues({});
    ASSERT_TRUE(changed.ok());
    EXPECT_EQ(changed->size(), 151u);
    EXPECT_EQ(changed->front().title, "new");

    // The cache names files by a hash: neither the token nor the URL shows.
    for (const auto& entry : std::filesystem::directory_iterator(dir / "cache")) {
        EXPECT_EQ(read_text(entry.path()).find(kTestToken), std::string::npos);
        EXPECT_EQ(entry.path().filename().string().size(), 64u + 5u);
    }

    // Nothing in the cache is flushed: after a crash a page may be cut short. Such a page is a
    // miss, asked for anew, never a short answer.
    for (const auto& entry : std::filesystem::directory_iterator(dir / "cache")) {
        const std::string text = read_text(entry.path());
        write_text(entry.path(), text.substr(0, text.size() / 2));
    }
    auto fourth = client();
    auto whole = github::GitHub(*fourth, repo()).issues({});
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    EXPECT_EQ(whole->size(), 151u);
    EXPECT_EQ(fourth->stats().not_modified, 0u);
}

TEST_F(GitHubTest, UpsertUnderFaultsLeavesExactlyOneComment) {
    server.add_issue(12, "fix it", "", {});
    server.add_comment(12, "a human's comment");
    const std::string marker = github::comment_marker("issue-12/claude");
    // The create lands but its answer is lost, twice; the list fails once on the way.
    server.inject({"POST",
                   "/issues/12/comments",
                   Fault::Kind::apply_then_respond,
                   502,
                   {},
                   R"({"message":"Bad Gateway"})",
                   1});
    server.inject({"GET",
                   "/issues/12/comments",
                   Fault::Kind::respond,
                   500,
                   {},
                   R"({"message":"Server Error"})",
                   1});
    auto http = client();
    github::GitHub api(*http, repo());
    auto first = api.upsert_comment(12, marker, "verdict: FAIL");
    ASSERT_TRUE(first.ok()) << first.error().message;
    server.inject({"PATCH", "/issues/comments/", Fault::Kind::reset_mid_body, 200, {}, "{}", 1});
    auto second = api.upsert_comment(12, marker, "verdict: PASS");
    ASSERT_TRUE(second.ok()) << second.error().message;
    // A create whose reply is cut mid-body, on a fresh issue.
    server.add_issue(13, "another", "", {});
    server.inject({"POST", "/issues/13/comments", Fault::Kind::reset_mid_body, 201, {}, "{}", 1});
    ASSERT_TRUE(api.upsert_comment(13, marker, "verdict: PASS").ok());

    auto comments = server.comments_of(12);
    ASSERT_EQ(comments.size(), 2u);  // the human's and ours
    // What a reader sees, and the writer's mark no reader sees.
    EXPECT_EQ(comments[1]["body"].get<std::string>().rfind(
                  marker + "\nverdict: PASS\n<!-- cocode-writer: ", 0),
              0u)
        << comments[1]["body"];
    EXPECT_EQ(server.comments_of(13).size(), 1u);
    EXPECT_EQ(count_requests(server, "POST", "/issues/12/comments"), 1);

    // Re-running with the same body changes nothing and sends no mutation.
    int before = count_requests(server, "PATCH", "/issues/comments/");
    ASSERT_TRUE(api.upsert_comment(12, marker, "verdict: PASS").ok());
    EXPECT_EQ(count_requests(server, "PATCH", "/issues/comments/"), before);
}

// Writers on different machines publish the same verdict at once, with no lock between them:
// the list of comments lags behind their writes and some creates lose their answer. They
// converge on exactly one comment.
TEST_F(GitHubTest, ConcurrentPublishesLeaveExactlyOneComment) {
    server.add_issue(21, "raced", "", {});
    server.add_comment(21, "a human's comment");
    server.lag_comment_lists(3);
    server.inject({"POST",
                   "/issues/21/comments",
                   Fault::Kind::apply_then_respond,
                   502,
                   {},
                   R"({"message":"Bad Gateway"})",
                   at_scale(2, 20)});
    const std::string marker = github::comment_marker("issue-21/claude");
    const int kWriters = at_scale(10, 100);  // ci/reliability: 100
    std::vector<std::thread> writers;
    std::vector<std::string> errors(static_cast<std::size_t>(kWriters));
    for (int i = 0; i < kWriters; ++i)
        writers.emplace_back([&, i] {
            auto options = client_options();
            options.cache_dir.reset();  // each its own machine
            options.notice = nullptr;
            auto http = client(options);
            github::GitHub api(*http, repo());
            if (auto done = api.upsert_comment(21, marker, "verdict: PASS"); !done)
                errors[static_cast<std::size_t>(i)] = done.error().message;
        });
    for (auto& w : writers) w.join();
    for (const auto& e : errors) EXPECT_EQ(e, "");
    int marked = 0;
    for (const auto& c : server.comments_of(21))
        marked += c["body"].get<std::string>().find(marker) != std::string::npos;
    EXPECT_EQ(marked, 1);
    EXPECT_EQ(server.comments_of(21).size(), 2u);  // the human's stays
}

TEST_F(GitHubTest, LabelsReactionsStatusesAndPullRequests) {
    server.add_issue(5, "labels", "", {"bug"});
    auto http = client();
    github::GitHub api(*http, repo());
    auto labels = api.add_labels(5, {"cocode:running", "bug"});
    ASSERT_TRUE(labels.ok()) << labels.error().message;
    EXPECT_EQ(labels.value(), (std::vector<std::string>{"bug", "cocode:running"}));
    ASSERT_TRUE(api.remove_label(5, "cocode:running").ok());
    ASSERT_TRUE(api.remove_label(5, "never there").ok());
    EXPECT_EQ(server.labels_of(5), (std::vector<std::string>{"bug"}));

    ASSERT_TRUE(api.add_reaction(5, "eyes").ok());
    ASSERT_TRUE(api.add_reaction(5, "eyes").ok());
    EXPECT_EQ(server.reactions().size(), 1u);

    github::CommitStatus status{"success", "cocode/claude", "PASS: tests green", "", 0};
    auto created = api.create_status(std::string(40, 'a'), status);
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_GT(created->id, 0);
    ASSERT_EQ(server.statuses().size(), 1u);
    EXPECT_EQ(server.statuses()[0]["context"], "cocode/claude");

    server.inject({"POST",
                   "/pulls",
                   Fault::Kind::apply_then_respond,
                   502,
                   {},
                   R"({"message":"Bad Gateway"})",
                   1});
    github::PullRequestSpec spec{"Fix #5", "cocode/5-claude", "main", "body", true};
    auto pr = api.create_pull_request(spec);
    ASSERT_TRUE(pr.ok()) << pr.error().message;
    auto again = api.create_pull_request(spec);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(pr->number, again->number);
    EXPECT_EQ(server.pulls().size(), 1u);
    EXPECT_TRUE(server.pulls()[0]["draft"].get<bool>());

    auto repository = api.repository();
    ASSERT_TRUE(repository.ok()) << repository.error().message;
    EXPECT_EQ(repository->default_branch, "main");
}

TEST_F(GitHubTest, CreateLabelIsNotRepeatedAfterAnAmbiguousFailure) {
    server.inject({"POST",
                   "/labels",
                   Fault::Kind::apply_then_respond,
                   502,
                   {},
                   R"({"message":"Bad Gateway"})",
                   1});
    auto http = client();
    auto made = github::GitHub(*http, repo()).create_label("cocode", "0e8a16", "");
    ASSERT_FALSE(made.ok());
    EXPECT_NE(made.error().message.find("502"), std::string::npos);
    EXPECT_EQ(count_requests(server, "POST", "/labels"), 1);
}

TEST(GitHubEnterprise, ABaseUrlWithAPathPrefixesEveryRequest) {
    TempDir dir;
    FakeGitHub server(loopback_options("/api/v3"));
    server.add_issue(3, "on enterprise", "", {});
    github::HttpOptions options;
    options.base = github::parse_base_url(server.base_url() + "/", "test").value_or_throw();
    options.ca_bundle = loopback_tls().files.certificate;
    auto http = github::HttpClient::create(options, github::token_auth(kTestToken, "GH_TOKEN"))
                    .value_or_throw();
    auto issue = github::GitHub(*http, {"octo-org", "demo"}).issue(3);
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(issue->title, "on enterprise");
    for (const auto& r : server.requests()) EXPECT_EQ(r.path.rfind("/repos/", 0), 0u) << r.path;
}

TEST_F(GitHubTest, AnUntrustedCertificateIsRefusedWithoutRetrying) {
    auto options = client_options();
    options.ca_bundle.reset();
    auto http = client(options);
    auto issue = github::GitHub(*http, repo()).issue(1);
    ASSERT_FALSE(issue.ok());
    EXPECT_NE(issue.error().message.find("certificate not trusted"), std::string::npos)
        << issue.error().message;
    EXPECT_EQ(http->stats().requests, 1u);
    EXPECT_TRUE(server.requests().empty());
}

// The system's CAs read from a hashed folder (what update-ca-certificates makes), one issuer
// at a time: a CA found only there is trusted, with no bundle named anywhere; the same folder
// without it is not.
TEST_F(GitHubTest, TheSystemsHashedCertificateFolderIsTrusted) {
    auto options = client_options();
    options.ca_bundle.reset();
    const fs::path trusted = dir / "system-certs", other = dir / "other-certs";
    fs::create_directories(trusted);
    fs::create_directories(other);
    fs::create_directories(dir / "elsewhere");
    fs::copy_file(loopback_tls().files.certificate, trusted / "loopback.pem");
    fs::copy_file(make_self_signed_certificate(dir / "elsewhere").certificate,
                  other / "elsewhere.pem");  // another key under the same name
    for (const auto& folder : {trusted, other})
        sh_ok("openssl rehash " + quote(folder.string()), dir.path());
    auto attempt = [&](const fs::path& folder) {
        const std::optional<std::string> file = github::getenv_string("SSL_CERT_FILE"),
                                         dirs = github::getenv_string("SSL_CERT_DIR");
        ::unsetenv("SSL_CERT_FILE");
        ::setenv("SSL_CERT_DIR", folder.c_str(), 1);
        auto issue = github::GitHub(*client(options), repo()).issue(1);
        file ? ::setenv("SSL_CERT_FILE", file->c_str(), 1) : ::unsetenv("SSL_CERT_FILE");
        dirs ? ::setenv("SSL_CERT_DIR", dirs->c_str(), 1) : ::unsetenv("SSL_CERT_DIR");
        return issue;
    };
    server.add_issue(1, "one", "", {});
    auto found = attempt(trusted);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(found->title, "one");
    auto refused = attempt(other);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("certificate not trusted"), std::string::npos)
        << refused.error().message;
}

TEST_F(GitHubTest, BadCredentialsNameTheirSourceAndNeverTheToken) {
    const std::string wrong = "ghp_wrongwrongwrongwrongwrongwrong0123";
    auto http = client(client_options(), wrong);
    auto issue = github::GitHub(*http, repo()).issue(1);
    ASSERT_FALSE(issue.ok());
    const std::string& message = issue.error().message;
    EXPECT_NE(message.find("401 Bad credentials (as GITHUB_TOKEN)"), std::string::npos) << message;
    EXPECT_EQ(message.find(wrong), std::string::npos);
    EXPECT_EQ(message.find(kTestToken), std::string::npos);
}

TEST(GitHubApp, MintsAnInstallationTokenOnceAndUsesIt) {
    TempDir dir;
    RsaKeyPair key = make_rsa_key_pair();
    auto options = loopback_options();
    options.app_public_key = key.public_pem;
    options.app_id = "4242";
    FakeGitHub server(options);
    server.add_issue(1, "for the app", "", {});
    write_text(dir / "app.pem", key.private_pem);

    github::HttpOptions http_options;
    http_options.base = github::parse_base_url(server.base_url(), "test").value_or_throw();
    http_options.ca_bundle = loopback_tls().files.certificate;
    auto auth = github::app_auth({"4242", "77", dir / "app.pem"}).value_or_throw();
    auto http = github::HttpClient::create(http_options, std::move(auth)).value_or_throw();
    github::GitHub api(*http, {"octo-org", "demo"});
    ASSERT_TRUE(api.issue(1).ok());
    ASSERT_TRUE(api.issue(1).ok());
    EXPECT_EQ(server.tokens_minted(), 1);
    auto claims = nlohmann::json::parse(server.last_jwt_claims());
    EXPECT_EQ(claims["iss"], "4242");
    EXPECT_EQ(claims["exp"].get<long long>() - claims["iat"].get<long long>(), 600);
    EXPECT_EQ(http->auth().source(), "GitHub App 4242 (installation 77)");
}

TEST(GitHubApp, ABadKeyIsAUsageErrorNamingTheVariable) {
    TempDir dir;
    write_text(dir / "app.pem", "not a key");
    auto auth = github::app_auth({"1", "2", dir / "app.pem"});
    ASSERT_FALSE(auth.ok());
    EXPECT_EQ(auth.error().code, ExitCode::usage);
    EXPECT_NE(auth.error().message.find("COCODE_GITHUB_APP_PRIVATE_KEY_PATH"), std::string::npos);
}

}  // namespace
}  // namespace cocode::test
