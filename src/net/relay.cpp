#include "net/relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace cocode::net {

namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

// sockaddr_un for `path`: its folder opened, and the path given as /proc/self/fd/N/name,
// which fits sun_path however deep the folder is.
struct UnixAddress {
    UniqueFd folder;
    sockaddr_un address{};
};

Result<UnixAddress> unix_address(const fs::path& path) {
    UnixAddress out;
    out.address.sun_family = AF_UNIX;
    std::string name = path.string();
    if (name.size() >= sizeof out.address.sun_path) {
        const fs::path folder = path.parent_path().empty() ? "." : path.parent_path();
        out.folder = UniqueFd(::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!out.folder.valid()) return Error::general(folder.string() + ": " + errno_text());
        name = "/proc/self/fd/" + std::to_string(out.folder.get()) + "/" + path.filename().string();
        if (name.size() >= sizeof out.address.sun_path)
            return Error::general(path.string() + ": the socket's name is too long");
    }
    std::memcpy(out.address.sun_path, name.c_str(), name.size() + 1);
    return out;
}

}  // namespace

Result<UniqueFd> listen_unix(const fs::path& path) {
    auto address = unix_address(path);
    if (!address) return std::move(address).error();
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return Error::general("socket: " + errno_text());
    std::error_code ec;
    fs::remove(path, ec);  // a socket a run killed before left behind
    const mode_t old = ::umask(0077);
    const int bound = ::bind(s.get(), reinterpret_cast<const sockaddr*>(&address->address),
                             sizeof address->address);
    ::umask(old);
    if (bound != 0) return Error::general(path.string() + ": bind: " + errno_text());
    if (::listen(s.get(), 128) != 0) return Error::general(path.string() + ": " + errno_text());
    return s;
}

Result<UniqueFd> connect_unix(const fs::path& path) {
    auto address = unix_address(path);
    if (!address) return std::move(address).error();
    UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return Error::general("socket: " + errno_text());
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&address->address),
                  sizeof address->address) != 0)
        return Error::general(path.string() + ": " + errno_text());
    return s;
}

Result<UniqueFd> listen_tcp(const std::string& address, int port) {
    sockaddr_storage storage{};
    socklen_t length = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<std::uint16_t>(port));
        length = sizeof *v6;
    } else {
        return Error::general("not an address: " + address);
    }
    UniqueFd s(::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return Error::general("socket: " + errno_text());
    const int one = 1;
    ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (storage.ss_family == AF_INET6)
        ::setsockopt(s.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(s.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
        ::listen(s.get(), 128) != 0)
        return Error::general(address + ":" + std::to_string(port) + ": " + errno_text());
    return s;
}

Result<UniqueFd> connect_tcp(const std::string& host, int port, std::chrono::milliseconds limit) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
        return Error::general("cannot resolve " + host + ": " + gai_strerror(rc));
    std::string failure = "no address";
    for (addrinfo* a = found; a; a = a->ai_next) {
        UniqueFd s(
            ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
        if (!s.valid()) continue;
        if (::connect(s.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
            failure = errno_text();
            continue;
        }
        pollfd p{s.get(), POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(limit.count())) != 1) {
            failure = "timed out";
            continue;
        }
        int error = 0;
        socklen_t size = sizeof error;
        ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &size);
        if (error != 0) {
            failure = std::strerror(error);
            continue;
        }
        ::fcntl(s.get(), F_SETFL, ::fcntl(s.get(), F_GETFL) & ~O_NONBLOCK);
        const int one = 1;
        ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ::freeaddrinfo(found);
        return s;
    }
    ::freeaddrinfo(found);
    return Error::general(host + ":" + service + ": " + failure);
}

std::optional<std::string> read_head(int fd, std::string& rest, std::chrono::milliseconds limit) {
    std::string data;
    const auto end = std::chrono::steady_clock::now() + limit;
    char buffer[4096];
    while (data.size() < 16384) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            end - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) != 1) return std::nullopt;
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) return std::nullopt;
        data.append(buffer, static_cast<std::size_t>(n));
        if (const auto at = data.find("\r\n\r\n"); at != std::string::npos) {
            rest = data.substr(at + 4);
            data.resize(at + 4);
            return data;
        }
    }
    return std::nullopt;
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

Relayed relay(int client, int server, int stop_fd) {
    Relayed moved;
    std::vector<char> buffer(256 * 1024);
    bool client_open = true, server_open = true;  // still sending to us
    while (client_open || server_open) {
        pollfd p[3] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0},
                       {server, static_cast<short>(server_open ? POLLIN : 0), 0},
                       {stop_fd, POLLIN, 0}};
        if (::poll(p, 3, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[2].revents) break;
        auto pass = [&](int from, int to, bool& open, std::uint64_t& count) {
            const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
            if (n <= 0) {
                open = false;
                ::shutdown(to, SHUT_WR);  // the half close, passed on
                return n == 0;
            }
            count += static_cast<std::uint64_t>(n);
            return send_all(to, std::string_view(buffer.data(), static_cast<std::size_t>(n)));
        };
        if (client_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            if (!pass(client, server, client_open, moved.up)) break;
        if (server_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            if (!pass(server, client, server_open, moved.down)) break;
    }
    return moved;
}

}  // namespace cocode::net
