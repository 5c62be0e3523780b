#include "bridge.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/proxy.h"
#include "net/relay.h"

namespace cocode::bridge {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The inode of the socket at the other end of `fd`, a TCP connection accepted here: asked
// of the kernel for exactly that connection (sock_diag), which costs microseconds where
// reading /proc/net/tcp walks every bucket of the host's table.
unsigned long socket_inode_of_peer(int fd) {
    sockaddr_storage peer{}, self{};
    socklen_t peer_size = sizeof peer, self_size = sizeof self;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &self_size) != 0)
        return 0;
    struct {
        nlmsghdr header;
        inet_diag_req_v2 request;
    } message{};
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    inet_diag_req_v2& r = message.request;
    r.sdiag_family = static_cast<std::uint8_t>(peer.ss_family);
    r.sdiag_protocol = IPPROTO_TCP;
    r.idiag_states = ~0U;
    r.id.idiag_cookie[0] = r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    // The peer's socket: its local end is our peer, its remote end is us.
    if (peer.ss_family == AF_INET) {
        const auto& p = reinterpret_cast<const sockaddr_in&>(peer);
        const auto& s = reinterpret_cast<const sockaddr_in&>(self);
        r.id.idiag_sport = p.sin_port;
        r.id.idiag_dport = s.sin_port;
        std::memcpy(r.id.idiag_src, &p.sin_addr, sizeof p.sin_addr);
        std::memcpy(r.id.idiag_dst, &s.sin_addr, sizeof s.sin_addr);
    } else {
        const auto& p = reinterpret_cast<const sockaddr_in6&>(peer);
        const auto& s = reinterpret_cast<const sockaddr_in6&>(self);
        r.id.idiag_sport = p.sin6_port;
        r.id.idiag_dport = s.sin6_port;
        std::memcpy(r.id.idiag_src, &p.sin6_addr, sizeof p.sin6_addr);
        std::memcpy(r.id.idiag_dst, &s.sin6_addr, sizeof s.sin6_addr);
    }
    UniqueFd diag(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (!diag.valid() || ::send(diag.get(), &message, sizeof message, 0) < 0) return 0;
    alignas(nlmsghdr) char buffer[8192];
    const ssize_t n = ::recv(diag.get(), buffer, sizeof buffer, 0);
    if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) return 0;
    const auto* header = reinterpret_cast<const nlmsghdr*>(buffer);
    if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
        header->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg)))
        return 0;
    return static_cast<const inet_diag_msg*>(NLMSG_DATA(header))->idiag_inode;
}

// The process that holds the other end of `fd` (a connection accepted inside the namespace),
// by its socket's inode among the namespace's processes: `{"pid": …, "command": "…"}`.
nlohmann::json peer_of(int fd) {
    const unsigned long inode_number = socket_inode_of_peer(fd);
    if (!inode_number) return nlohmann::json::object();
    const std::string inode = "socket:[" + std::to_string(inode_number) + "]";
    std::error_code ec;
    for (const auto& process : fs::directory_iterator("/proc", ec)) {
        const std::string name = process.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code fd_ec;
        for (const auto& entry : fs::directory_iterator(process.path() / "fd", fd_ec)) {
            std::error_code link_ec;
            if (fs::read_symlink(entry.path(), link_ec).string() != inode) continue;
            auto cmdline = read_file(process.path() / "cmdline", 4096);
            std::string command = cmdline ? *cmdline : "";
            for (char& c : command)
                if (c == '\0') c = ' ';
            while (!command.empty() && command.back() == ' ') command.pop_back();
            return {{"pid", std::stol(name)}, {"command", command.substr(0, 300)}};
        }
    }
    return nlohmann::json::object();
}

// One connection from inside: to the proxy, with who made it (its command line is the
// agent's bytes: what is not UTF-8, or cut in a character, is replaced); for a forward, asked
// for by CONNECT first. Nothing it meets ends the bridge: the connection alone ends.
void pass_on_one(UniqueFd client, const fs::path& socket, const std::string& host, int port) {
    auto proxy = net::connect_unix(socket);
    if (!proxy) return;
    std::string first =
        std::string(net::kPeerPreamble) +
        peer_of(client.get()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\r\n";
    if (!host.empty()) {
        const std::string target = (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                                   ":" + std::to_string(port);
        first += "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
    }
    if (!net::send_all(proxy->get(), first)) return;
    std::string rest;
    if (!host.empty()) {
        auto head = net::read_head(proxy->get(), rest, 15s);
        if (!head || head->find(" 200 ") == std::string::npos) return;  // blocked: closed
        if (!rest.empty() && !net::send_all(client.get(), rest)) return;
    }
    net::relay(client.get(), proxy->get(),
               -1);  // until both ends close: the bridge ends with its agent
}

void pass_on(UniqueFd client, const fs::path& socket, std::string host, int port) {
    try {
        pass_on_one(std::move(client), socket, host, port);
    } catch (...) {
        // This connection is lost (out of memory, say); the bridge and the rest go on.
    }
}

}  // namespace

Result<BridgeArgs> parse_bridge(const std::vector<std::string>& args) {
    BridgeArgs out;
    std::size_t i = 0;
    auto port_of = [](const std::string& text) -> int {
        try {
            const int port = std::stoi(text);
            return port > 0 && port < 65536 ? port : 0;
        } catch (...) {
            return 0;
        }
    };
    for (; i < args.size() && args[i] != "--"; i += 2) {  // an option and its value
        if (i + 1 >= args.size())
            return Error::usage("cocode-egress-bridge: " + args[i] + " needs a value");
        const std::string& value = args[i + 1];
        if (args[i] == "--socket") {
            out.socket = value;
        } else if (args[i] == "--proxy-port") {
            out.proxy_port = port_of(value);
        } else if (args[i] == "--forward") {
            const auto first = value.find(','), last = value.rfind(',');
            if (first == std::string::npos || first == last ||
                !port_of(value.substr(first + 1, last - first - 1)))
                return Error::usage("cocode-egress-bridge: --forward: expected ADDRESS,PORT,HOST");
            out.forwards.push_back({value.substr(0, first),
                                    port_of(value.substr(first + 1, last - first - 1)),
                                    value.substr(last + 1)});
        } else {
            return Error::usage("cocode-egress-bridge: unknown option " + args[i]);
        }
    }
    if (i < args.size()) out.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
    if (out.socket.empty() || !out.proxy_port || out.argv.empty())
        return Error::usage(
            "cocode-egress-bridge: expected --socket S --proxy-port P [--forward "
            "ADDRESS,PORT,HOST]... -- "
            "PROGRAM [ARGS]");
    return out;
}

Result<std::vector<Listener>> listen_all(const BridgeArgs& args) {
    std::vector<Listener> listeners;
    auto proxy = net::listen_tcp("127.0.0.1", args.proxy_port);
    if (!proxy) return std::move(proxy).error();
    listeners.push_back({std::move(proxy).value(), "", 0});
    for (const auto& f : args.forwards) {
        auto forward = net::listen_tcp(f.address, f.port);
        if (!forward) return std::move(forward).error();
        listeners.push_back({std::move(forward).value(), f.host, f.port});
    }
    return listeners;
}

void serve(std::vector<Listener> listeners, const fs::path& socket) {
    std::thread([listeners = std::move(listeners), socket] {
        std::vector<pollfd> fds;
        for (const auto& l : listeners) fds.push_back({l.socket.get(), POLLIN, 0});
        while (true) {
            if (::poll(fds.data(), fds.size(), -1) < 0) continue;
            for (std::size_t i = 0; i < fds.size(); ++i) {
                if (!(fds[i].revents & POLLIN)) continue;
                UniqueFd client(::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC));
                if (!client.valid()) continue;
                std::thread(pass_on, std::move(client), socket, listeners[i].host,
                            listeners[i].port)
                    .detach();
            }
        }
    }).detach();
}

}  // namespace cocode::bridge
