#include "github/reach.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base64.h"
#include "core/files.h"
#include "net/relay.h"

namespace cocode::github {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

std::string timed_out(std::chrono::milliseconds timeout) {
    return "timed out after " + std::to_string(timeout.count()) + " ms";
}

// A connected socket to host:port, or why not (net/relay.h: every address tried in turn).
Result<UniqueFd> connect_to(const std::string& host, int port, Clock::time_point deadline,
                            std::chrono::milliseconds timeout) {
    auto socket = net::connect_tcp(host, port, std::chrono::milliseconds(remaining_ms(deadline)));
    if (!socket) {
        std::string why = socket.error().message;
        if (const auto at = why.rfind(": timed out"); at != std::string::npos)
            why = why.substr(0, at) + ": " + timed_out(timeout);
        return Error::general(why);
    }
    return UniqueFd(socket->release());
}

// Asks the proxy for a tunnel to host:port and reads its status line.
Result<void> connect_through(int fd, const Proxy& proxy, const BaseUrl& target,
                             Clock::time_point deadline, std::chrono::milliseconds timeout) {
    const std::string authority = target.host + ":" + std::to_string(target.port);
    std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
    if (!proxy.user.empty())
        request +=
            "Proxy-Authorization: Basic " + base64(proxy.user + ":" + proxy.password) + "\r\n";
    request += "\r\n";
    for (std::size_t sent = 0; sent < request.size();) {
        ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, remaining_ms(deadline)) <= 0)
                return Error::general("proxy: " + timed_out(timeout));
            continue;
        }
        if (n <= 0) return Error::from_errno("proxy: cannot send CONNECT", errno);
        sent += static_cast<std::size_t>(n);
    }
    std::string answer;
    char buf[512];
    while (answer.find("\r\n") == std::string::npos && answer.size() < 4096) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, remaining_ms(deadline)) <= 0)
            return Error::general("proxy: " + timed_out(timeout));
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return Error::general("proxy closed the connection without answering");
        answer.append(buf, static_cast<std::size_t>(n));
    }
    std::string status = answer.substr(0, answer.find("\r\n"));
    // "HTTP/1.1 200 Connection established"
    std::size_t space = status.find(' ');
    if (space == std::string::npos || status.compare(space + 1, 3, "200") != 0)
        return Error::general("proxy " + proxy.host + ":" + std::to_string(proxy.port) +
                              " refused the tunnel to " + authority + " (" + status.substr(0, 80) +
                              ")");
    return {};
}

}  // namespace

Result<Connection> open_connection(std::string_view url, std::chrono::milliseconds timeout,
                                   EnvLookup env) {
    auto target = parse_base_url(url, "endpoint");
    if (!target) return std::move(target).error();
    auto proxy = proxy_for(*target, env);
    if (!proxy) return std::move(proxy).error();
    const auto deadline = Clock::now() + timeout;
    const std::string authority = target->host + ":" + std::to_string(target->port);
    if (!*proxy) {
        auto fd = connect_to(target->host, target->port, deadline, timeout);
        if (!fd) return std::move(fd).error();
        return Connection{std::move(fd).value(), authority};
    }
    const Proxy& p = **proxy;
    const std::string via = p.host + ":" + std::to_string(p.port);
    auto fd = connect_to(p.host, p.port, deadline, timeout);
    if (!fd) return Error::general("proxy " + via + ": " + fd.error().message);
    if (auto ok = connect_through(fd->get(), p, *target, deadline, timeout); !ok)
        return std::move(ok).error();
    return Connection{std::move(fd).value(), authority + " through proxy " + via};
}

Result<std::string> probe_endpoint(std::string_view url, std::chrono::milliseconds timeout,
                                   EnvLookup env) {
    auto opened = open_connection(url, timeout, env);
    if (!opened) return std::move(opened).error();
    return opened->how;
}

}  // namespace cocode::github
