#include "connect_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace cocode::test {

ConnectProxy::ConnectProxy() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), size) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
        throw std::runtime_error("proxy: cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
}

ConnectProxy::~ConnectProxy() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (int fd : clients_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& worker : workers_) worker.join();
}

std::string ConnectProxy::last_target() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return targets_.empty() ? std::string() : targets_.back();
}

std::vector<std::string> ConnectProxy::targets() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return targets_;
}

void ConnectProxy::serve() {
    while (!stop_) {
        int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        clients_.push_back(client);
        workers_.emplace_back([this, client] {
            tunnel(client);
            std::lock_guard<std::mutex> done(mutex_);
            clients_.erase(std::find(clients_.begin(), clients_.end(), client));
            ::close(client);
        });
    }
}

void ConnectProxy::tunnel(int client) {
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 8192 &&
           ::read(client, &c, 1) == 1)
        head += c;
    if (head.rfind("CONNECT ", 0) != 0) return;
    const std::string target = head.substr(8, head.find(' ', 8) - 8);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        targets_.push_back(target);
    }
    const std::size_t colon = target.rfind(':');
    if (colon == std::string::npos || target.substr(0, colon) != "127.0.0.1") {
        const char refused[] = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
        (void)!::write(client, refused, sizeof refused - 1);
        return;
    }
    int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(upstream);
        const char failed[] = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
        (void)!::write(client, failed, sizeof failed - 1);
        return;
    }
    ++tunnels_;
    const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (::write(client, ok, sizeof ok - 1) < 0) {
        ::close(upstream);
        return;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
    char buffer[16384];
    while (!stop_ && ::poll(fds, 2, 200) >= 0) {
        bool closed = false;
        for (int i = 0; i < 2; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0 || ::write(fds[1 - i].fd, buffer, static_cast<size_t>(n)) != n)
                closed = true;
        }
        if (closed) break;
    }
    ::close(upstream);
}

}  // namespace cocode::test
