#include "github/reach.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base64.h"
#include "core/files.h"

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

// A connected socket to host:port, or why not.
Result<UniqueFd> connect_to(const std::string& host, int port, Clock::time_point deadline,
                            std::chrono::milliseconds timeout) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
        return Error::general("cannot resolve " + host + ": " + ::gai_strerror(rc));
    std::string last_error = "no address";
    for (addrinfo* a = found; a; a = a->ai_next) {
        UniqueFd fd(
            ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
        if (!fd.valid()) continue;
        int rc = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno != EINPROGRESS) {
            last_error = std::strerror(errno);
            continue;
        }
        if (rc != 0) {
            pollfd p{fd.get(), POLLOUT, 0};
            if (::poll(&p, 1, remaining_ms(deadline)) <= 0) {
                last_error = timed_out(timeout);
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0) {
                last_error = std::strerror(err);
                continue;
            }
        }
        ::freeaddrinfo(found);
        return fd;
    }
    ::freeaddrinfo(found);
    return Error::general(host + ":" + service + ": " + last_error);
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

Result<std::string> probe_endpoint(std::string_view url, std::chrono::milliseconds timeout,
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
        return authority;
    }
    const Proxy& p = **proxy;
    const std::string via = p.host + ":" + std::to_string(p.port);
    auto fd = connect_to(p.host, p.port, deadline, timeout);
    if (!fd) return Error::general("proxy " + via + ": " + fd.error().message);
    if (auto ok = connect_through(fd->get(), p, *target, deadline, timeout); !ok)
        return std::move(ok).error();
    return authority + " through proxy " + via;
}

}  // namespace cocode::github
