// HTTPS_PROXY and NO_PROXY against a real CONNECT proxy on 127.0.0.1 (httplib does not read
// them; cocode does).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "github_fixture.h"

namespace cocode::test {
namespace {

// A minimal CONNECT proxy: one tunnel at a time, counting the tunnels it opened.
class ConnectProxy {
  public:
    ConnectProxy() {
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof addr;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), size) != 0 ||
            ::listen(listener_, 8) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
            throw std::runtime_error("proxy: cannot listen");
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~ConnectProxy() {
        stop_ = true;
        ::shutdown(listener_, SHUT_RDWR);
        ::close(listener_);
        thread_.join();
    }
    int port() const { return port_; }
    int tunnels() const { return tunnels_; }
    std::string last_target() const { return last_target_; }

  private:
    void serve() {
        while (!stop_) {
            int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) return;
            tunnel(client);
            ::close(client);
        }
    }
    void tunnel(int client) {
        std::string head;
        char c;
        while (head.find("\r\n\r\n") == std::string::npos && ::read(client, &c, 1) == 1) head += c;
        if (head.rfind("CONNECT ", 0) != 0) return;
        std::string target = head.substr(8, head.find(' ', 8) - 8);
        last_target_ = target;
        int port = std::stoi(target.substr(target.rfind(':') + 1));
        int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            ::close(upstream);
            return;
        }
        ++tunnels_;
        const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        if (::write(client, ok, sizeof ok - 1) < 0) return;
        pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
        char buffer[16384];
        while (!stop_ && ::poll(fds, 2, 200) >= 0) {
            bool closed = false;
            for (int i = 0; i < 2; ++i) {
                if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
                ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
                if (n <= 0 || ::write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) != n)
                    closed = true;
            }
            if (closed) break;
        }
        ::close(upstream);
    }

    int listener_ = -1;
    int port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> tunnels_{0};
    std::string last_target_;
};

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
