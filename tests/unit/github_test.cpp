// The pure parts of the GitHub client: URLs, Link headers, proxies, remotes, issue JSON, JWTs.
#include <gtest/gtest.h>

#include <map>

#include "fake_github.h"
#include "github/auth.h"
#include "github/http.h"
#include "github/types.h"
#include "github/url.h"
#include "tls.h"

namespace cocode::github {
namespace {

TEST(BaseUrl, SplitsSchemeHostPortAndPath) {
    auto plain = parse_base_url("https://api.github.com", "t").value_or_throw();
    EXPECT_EQ(plain.host, "api.github.com");
    EXPECT_EQ(plain.port, 443);
    EXPECT_EQ(plain.path_prefix, "");
    auto ghe = parse_base_url("https://GHE.example:8443/api/v3/", "t").value_or_throw();
    EXPECT_EQ(ghe.host, "ghe.example");
    EXPECT_EQ(ghe.port, 8443);
    EXPECT_EQ(ghe.path_prefix, "/api/v3");
    EXPECT_EQ(ghe.str(), "https://ghe.example:8443/api/v3");
    auto v6 = parse_base_url("http://[::1]:9000", "t").value_or_throw();
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.origin(), "http://[::1]:9000");
}

TEST(BaseUrl, RejectsWhatIsNotABaseUrlNamingTheSource) {
    for (const char* bad : {"api.github.com", "ftp://x", "https://", "https://h:99999",
                            "https://user:pw@host", "https://h/api?x=1"}) {
        auto parsed = parse_base_url(bad, "--api-url");
        ASSERT_FALSE(parsed.ok()) << bad;
        EXPECT_EQ(parsed.error().code, ExitCode::usage);
        EXPECT_EQ(parsed.error().message.rfind("--api-url: ", 0), 0u) << parsed.error().message;
    }
}

TEST(BaseUrl, FlagBeatsEnvironmentBeatsDefault) {
    ::unsetenv("GITHUB_API_URL");
    EXPECT_EQ(resolve_api_url(std::nullopt)->str(), "https://api.github.com");
    ::setenv("GITHUB_API_URL", "https://ghe.example/api/v3", 1);
    EXPECT_EQ(resolve_api_url(std::nullopt)->str(), "https://ghe.example/api/v3");
    EXPECT_EQ(resolve_api_url(std::string("https://other.example"))->str(),
              "https://other.example");
    ::unsetenv("GITHUB_API_URL");
}

TEST(LinkHeader, FindsNextAmongOtherRelations) {
    std::string link = R"(<https://api.github.com/repositories/1/issues?page=1>; rel="prev", )"
                       R"(<https://api.github.com/repositories/1/issues?page=3>; rel="next", )"
                       R"(<https://api.github.com/repositories/1/issues?page=5>; rel="last")";
    EXPECT_EQ(next_link(link), "https://api.github.com/repositories/1/issues?page=3");
    EXPECT_EQ(next_link(R"(<https://x/a?page=2>; rel="prev")"), std::nullopt);
    EXPECT_EQ(next_link(""), std::nullopt);
    EXPECT_EQ(next_link(R"(<https://x/b>; rel="next last")"), "https://x/b");
    EXPECT_EQ(next_link(R"(<>; rel="next")"), std::nullopt);  // no URL is no next page
}

TEST(LinkHeader, FollowsOnlyTheSameOrigin) {
    auto base = parse_base_url("https://ghe.example/api/v3", "t").value_or_throw();
    EXPECT_EQ(relative_to_origin(base, "https://ghe.example/api/v3/repos/a/b/issues?page=2"),
              "/api/v3/repos/a/b/issues?page=2");
    EXPECT_EQ(relative_to_origin(base, "https://evil.example/api/v3/x"), std::nullopt);
    EXPECT_EQ(relative_to_origin(base, "http://ghe.example/api/v3/x"), std::nullopt);
}

TEST(Query, PercentEncodesValues) {
    EXPECT_EQ(query_string({{"labels", "good first issue,cocode:ready"}, {"per_page", "100"}}),
              "labels=good%20first%20issue%2Ccocode%3Aready&per_page=100");
}

std::map<std::string, std::string>* fake_env = nullptr;
std::optional<std::string> lookup(const char* name) {
    auto it = fake_env->find(name);
    if (it == fake_env->end()) return std::nullopt;
    return it->second;
}

TEST(Proxy, ReadsHttpsProxyAndHonoursNoProxy) {
    std::map<std::string, std::string> env{{"HTTPS_PROXY", "http://user:secret@proxy.corp:3128"},
                                           {"NO_PROXY", "localhost, .internal.example,10.0.0.1"}};
    fake_env = &env;
    auto github = parse_base_url("https://api.github.com", "t").value_or_throw();
    auto proxy = proxy_for(github, lookup).value_or_throw();
    ASSERT_TRUE(proxy.has_value());
    EXPECT_EQ(proxy->host, "proxy.corp");
    EXPECT_EQ(proxy->port, 3128);
    EXPECT_EQ(proxy->user, "user");
    EXPECT_EQ(proxy->password, "secret");
    for (const char* direct : {"https://localhost:8443", "https://ghe.internal.example/api/v3",
                               "https://internal.example", "https://10.0.0.1"}) {
        auto base = parse_base_url(direct, "t").value_or_throw();
        EXPECT_FALSE(proxy_for(base, lookup).value_or_throw().has_value()) << direct;
    }
    env["https_proxy"] = "proxy2:8080";  // the lower-case spelling wins, as in curl
    EXPECT_EQ(proxy_for(github, lookup).value_or_throw()->host, "proxy2");
    env["https_proxy"] = "socks5://proxy:1080";
    auto bad = proxy_for(github, lookup);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("https_proxy"), std::string::npos);
    fake_env = nullptr;
}

TEST(Proxy, NoProxyMatching) {
    EXPECT_TRUE(no_proxy_matches("*", "anything", 443));
    EXPECT_TRUE(no_proxy_matches("example.com", "api.example.com", 443));
    EXPECT_FALSE(no_proxy_matches("example.com", "notexample.com", 443));
    EXPECT_TRUE(no_proxy_matches("ghe.example:8443", "ghe.example", 8443));
    EXPECT_FALSE(no_proxy_matches("ghe.example:8443", "ghe.example", 443));
    EXPECT_FALSE(no_proxy_matches("", "api.github.com", 443));
}

TEST(Remote, ParsesTheSpellingsGitAccepts) {
    for (const char* url :
         {"https://github.com/octo-org/demo.git", "https://github.com/octo-org/demo",
          "git@github.com:octo-org/demo.git", "ssh://git@github.com:22/octo-org/demo.git",
          "https://x-access-token:abc@github.com/octo-org/demo"}) {
        auto remote = parse_remote_url(url);
        ASSERT_TRUE(remote.has_value()) << url;
        EXPECT_EQ(remote->host, "github.com") << url;
        EXPECT_EQ(remote->repo.full(), "octo-org/demo") << url;
    }
    EXPECT_EQ(parse_remote_url("git@ghe.corp:team/app.git")->host, "ghe.corp");
    EXPECT_FALSE(parse_remote_url("/srv/git/repo.git").has_value());
    EXPECT_FALSE(parse_repo_ref("a/b/c", "--repo").ok());
    EXPECT_FALSE(parse_repo_ref("noslash", "--repo").ok());
}

TEST(IssueJson, ReadsGitHubsShapeAndNamesTheBadField) {
    auto issue = issue_from_json(nlohmann::json::parse(R"({
        "number": 12, "title": "Fix it", "body": null, "state": "open",
        "labels": [{"name": "bug"}, "cocode"], "assignees": [{"login": "octocat"}],
        "user": {"login": "hubot"}, "pull_request": {"url": "x"}})"),
                                 "12.json");
    ASSERT_TRUE(issue.ok()) << issue.error().message;
    EXPECT_EQ(issue->body, "");
    EXPECT_EQ(issue->labels, (std::vector<std::string>{"bug", "cocode"}));
    EXPECT_EQ(issue->assignees, (std::vector<std::string>{"octocat"}));
    EXPECT_EQ(issue->author, "hubot");
    EXPECT_TRUE(issue->is_pull_request);

    auto bad = issue_from_json(nlohmann::json::parse(R"({"number": 3, "title": "x",
        "labels": [{"color": "red"}]})"),
                               "issues/3.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message,
              "issues/3.json: field 'labels': expected label objects with a name, or strings");
    // Bad data from GitHub is nothing the user typed: a general error (the local store, which
    // a person writes, makes it a usage error itself).
    EXPECT_EQ(bad.error().code, ExitCode::general);
}

// A list page keeps only the keys the readers read, and of the objects below them (a user, a
// label) only the keys read there, as the listings ask: held against GitHub's full examples,
// what is read from the kept keys is what is read from the whole object, and the rest is
// dropped.
TEST(ListPage, KeepsEveryKeyItsReaderReads) {
    using nlohmann::json;
    json issue = test::github_example("issue");
    ASSERT_TRUE(issue.contains("pull_request") && issue.contains("milestone"));
    issue["body"] = "caf\u00e9 \"quoted\"\n\u2603";
    ASSERT_FALSE(issue["labels"].empty());
    ASSERT_FALSE(issue["assignees"].empty());
    auto page = parse_list_page(json::array({issue}).dump(), kIssueKeys, kInnerKeys);
    ASSERT_TRUE(page && page->size() == 1);
    auto whole = issue_from_json(issue, "whole"), kept = issue_from_json(page->at(0), "kept");
    ASSERT_TRUE(whole.ok() && kept.ok());
    EXPECT_EQ(to_json(*kept), to_json(*whole));
    EXPECT_TRUE(kept->is_pull_request);
    EXPECT_EQ(kept->body, issue["body"].get<std::string>());
    EXPECT_FALSE(page->at(0).contains("milestone"));
    EXPECT_EQ(page->at(0)["user"],
              (json{{"login", issue["user"]["login"]}, {"type", issue["user"]["type"]}}));
    EXPECT_EQ(page->at(0)["labels"][0], (json{{"name", issue["labels"][0]["name"]}}));
    // Without inner keys, a kept key keeps everything below it.
    EXPECT_EQ(parse_list_page(json::array({issue}).dump(), kIssueKeys)->at(0)["user"],
              issue["user"]);

    json comment = test::github_example("issue-comment");
    comment["user"]["type"] = "Bot";
    page = parse_list_page(json::array({comment}).dump(), kCommentKeys, kInnerKeys);
    ASSERT_TRUE(page && page->size() == 1);
    auto whole_comment = comment_from_json(comment, "whole");
    auto kept_comment = comment_from_json(page->at(0), "kept");
    ASSERT_TRUE(whole_comment.ok() && kept_comment.ok());
    EXPECT_EQ(to_json(*kept_comment), to_json(*whole_comment));
    EXPECT_EQ(kept_comment->author_association, whole_comment->author_association);
    EXPECT_TRUE(kept_comment->author_is_bot);

    json event = test::github_example("issue-event-for-issue-items");
    event["event"] = "labeled";
    event["label"] = {{"name", "cocode"}, {"color", "ededed"}};
    event["id"] = 9007199254740993LL;  // past a double's 53 bits: must stay exact
    event["actor"]["type"] = "Bot";
    page = parse_list_page(json::array({event}).dump(), kIssueEventKeys, kInnerKeys);
    ASSERT_TRUE(page && page->size() == 1);
    auto kept_event = issue_event_from_json(page->at(0), "kept");
    ASSERT_TRUE(kept_event.ok()) << kept_event.error().message;
    EXPECT_EQ(kept_event->id, 9007199254740993LL);
    EXPECT_EQ(kept_event->label, "cocode");
    EXPECT_TRUE(kept_event->actor_is_bot);
    EXPECT_EQ(kept_event->created_at, event["created_at"].get<std::string>());
}

TEST(ListPage, WithoutKeysKeepsAllAndRefusesWhatIsNotAnArray) {
    const std::string text = R"([{"a": 1, "b": [true, null, 2.5, -3, 18446744073709551615]}, 7])";
    auto page = parse_list_page(text, {});
    ASSERT_TRUE(page);
    EXPECT_EQ(*page, nlohmann::json::parse(text));
    for (const char* bad : {R"({"a": 1})", "[1, 2", "", "[\"\xff\"]", "[1] x"})
        EXPECT_FALSE(parse_list_page(bad, {})) << bad;
}

TEST(AppJwt, IsSignedRs256WithTheAppsKey) {
    auto key = test::make_rsa_key_pair();
    auto now = std::chrono::system_clock::from_time_t(1'800'000'000);
    auto jwt = make_app_jwt("4242", key.private_pem, now);
    ASSERT_TRUE(jwt.ok()) << jwt.error().message;
    auto claims = nlohmann::json::parse(test::verify_rs256_jwt(jwt.value(), key.public_pem));
    EXPECT_EQ(claims["iss"], "4242");
    EXPECT_EQ(claims["iat"], 1'800'000'000 - 60);
    EXPECT_EQ(claims["exp"], 1'800'000'000 + 540);
    auto other = test::make_rsa_key_pair();
    EXPECT_EQ(test::verify_rs256_jwt(jwt.value(), other.public_pem), "");
}

std::optional<std::string> no_server(const char*) { return std::nullopt; }
std::optional<std::string> ghe_server(const char* name) {
    if (std::string_view(name) == "GITHUB_SERVER_URL") return "https://code.corp.example";
    return std::nullopt;
}

TEST(Url, TheTokenGoesOnlyToTheGitHubItBelongsTo) {
    auto dotcom = *parse_base_url("https://api.github.com", "test");
    EXPECT_TRUE(token_goes_to("https://github.com/octo/demo.git", dotcom, no_server));
    EXPECT_FALSE(token_goes_to("https://gitlab.com/octo/demo.git", dotcom, no_server));
    EXPECT_FALSE(token_goes_to("https://github.com.evil.example/octo/demo", dotcom, no_server));
    EXPECT_FALSE(token_goes_to("http://github.com/octo/demo.git", dotcom, no_server));
    EXPECT_FALSE(token_goes_to("git@github.com:octo/demo.git", dotcom, no_server));
    auto ghe = *parse_base_url("https://ghe.example/api/v3", "test");
    EXPECT_TRUE(token_goes_to("https://ghe.example/octo/demo.git", ghe, no_server));
    EXPECT_FALSE(token_goes_to("https://github.com/octo/demo.git", ghe, no_server));
    // GITHUB_SERVER_URL names the web host when it differs from the API's.
    EXPECT_TRUE(token_goes_to("https://code.corp.example/octo/demo.git", ghe, ghe_server));
    EXPECT_FALSE(token_goes_to("https://ghe.example/octo/demo.git", ghe, ghe_server));
}

}  // namespace
}  // namespace cocode::github
