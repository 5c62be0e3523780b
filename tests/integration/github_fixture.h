// A loopback GitHub and a client pointed at it, for the GitHub tests.
#pragma once

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fake_github.h"
#include "github/api.h"
#include "github/http.h"
#include "test_support.h"

namespace cocode::test {

class GitHubTest : public ::testing::Test {
  protected:
    TempDir dir;
    FakeGitHub server{loopback_options()};
    std::vector<std::string> notices;
    std::vector<std::chrono::milliseconds> waits;  // what a client made by waiting_client slept

    github::HttpOptions client_options() {
        github::HttpOptions options;
        options.base = github::parse_base_url(server.base_url(), "test").value_or_throw();
        options.ca_bundle = loopback_tls().files.certificate;
        options.backoff = std::chrono::milliseconds(20);
        options.max_backoff = std::chrono::milliseconds(200);
        options.cache_dir = dir / "cache";
        options.notice = [this](std::string_view text) { notices.emplace_back(text); };
        return options;
    }
    std::unique_ptr<github::HttpClient> client(github::HttpOptions options,
                                               std::string token = kTestToken) {
        return github::HttpClient::create(std::move(options),
                                          github::token_auth(std::move(token), "GITHUB_TOKEN"))
            .value_or_throw();
    }
    std::unique_ptr<github::HttpClient> client() { return client(client_options()); }
    // A client that records its waits instead of spending them: a test asserts what was
    // waited, not how long the wall clock says it took.
    std::unique_ptr<github::HttpClient> waiting_client(github::HttpOptions options) {
        options.sleep = [this](std::chrono::milliseconds delay) { waits.push_back(delay); };
        return client(std::move(options));
    }
    github::RepoRef repo() const { return {"octo-org", "demo"}; }
};

}  // namespace cocode::test
