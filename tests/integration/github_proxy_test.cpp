// HTTPS_PROXY and NO_PROXY against a real CONNECT proxy on 127.0.0.1 (httplib does not read
// them; cocode does).
#include "connect_proxy.h"
#include "github_fixture.h"

namespace cocode::test {
namespace {

TEST_F(GitHubTest, RequestsGoThroughHttpsProxyUnlessNoProxyMatches) {
    server.add_issue(1, "through the proxy", "", {});
    ConnectProxy proxy;
    ::setenv("HTTPS_PROXY", ("http://127.0.0.1:" + std::to_string(proxy.port())).c_str(), 1);
    {
        auto http = client();
        auto issue = github::GitHub(*http, repo()).issue(1);
        ASSERT_TRUE(issue.ok()) << issue.error().message;
        EXPECT_EQ(issue->title, "through the proxy");
    }
    EXPECT_EQ(proxy.tunnels(), 1);
    EXPECT_EQ(proxy.last_target(), "127.0.0.1:" + std::to_string(server.port()));

    ::setenv("NO_PROXY", "localhost,127.0.0.1", 1);
    {
        auto http = client();
        ASSERT_TRUE(github::GitHub(*http, repo()).issue(1).ok());
    }
    EXPECT_EQ(proxy.tunnels(), 1);  // bypassed
    ::unsetenv("NO_PROXY");
    ::unsetenv("HTTPS_PROXY");
}

}  // namespace
}  // namespace cocode::test
