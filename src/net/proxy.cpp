#include "net/proxy.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"

namespace cocode::net {

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// What a request asks for: CONNECT host:port, or an absolute URL to proxy.
struct Target {
    std::string host;
    int port = 0;
    bool tunnel = false;
    std::string forward_head;  // plain HTTP: the head to send the server
};

std::optional<Target> target_of(const std::string& head) {
    const auto line_end = head.find("\r\n");
    const std::string line = head.substr(0, line_end);
    const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string::npos || sp2 == sp1) return std::nullopt;
    const std::string method = line.substr(0, sp1), uri = line.substr(sp1 + 1, sp2 - sp1 - 1),
                      version = line.substr(sp2 + 1);
    Target t;
    if (method == "CONNECT") {
        auto entry = endpoint_entry("https://" + uri, "");
        if (!entry || uri.find(':') == std::string::npos) return std::nullopt;
        t.host = entry->host;
        t.port = entry->port;
        t.tunnel = true;
        return t;
    }
    if (uri.rfind("http://", 0) != 0) return std::nullopt;
    auto entry = endpoint_entry(uri, "");
    if (!entry) return std::nullopt;
    t.host = entry->host;
    t.port = entry->port;
    const auto path_at = uri.find('/', 7);
    std::string forward = method + " " +
                          (path_at == std::string::npos ? "/" : uri.substr(path_at)) + " " +
                          version + "\r\n";
    // The headers, less those meant for the proxy.
    std::size_t at = line_end + 2;
    while (at < head.size()) {
        const auto next = head.find("\r\n", at);
        if (next == std::string::npos || next == at) break;
        const std::string header = head.substr(at, next - at);
        std::string name = header.substr(0, header.find(':'));
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        // One request per connection: a request after it would reach this server in the
        // proxy's form, unchecked, so the server is asked to close after its answer.
        if (name.rfind("proxy-", 0) != 0 && name != "connection" && name != "keep-alive")
            forward += header + "\r\n";
        at = next + 2;
    }
    t.forward_head = forward + "Connection: close\r\n\r\n";
    return t;
}

std::string answer(int code, const std::string& reason, const std::string& text) {
    return "HTTP/1.1 " + std::to_string(code) + " " + reason +
           "\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: " +
           std::to_string(text.size() + 1) + "\r\n\r\n" + text + "\n";
}

}  // namespace

json egress_json(const EgressEvent& e) {
    json line = {{"time", e.time},       {"host", e.host},           {"port", e.port},
                 {"allowed", e.allowed}, {"bytes_out", e.bytes_out}, {"bytes_in", e.bytes_in},
                 {"pid", e.pid},         {"command", e.command}};
    if (!e.error.empty()) line["error"] = e.error;
    return line;
}

std::string to_json_line(const EgressEvent& e) {
    return egress_json(e).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<EgressEvent> read_egress(const std::filesystem::path& record) {
    auto text = read_file(record);
    return text ? parse_egress(*text) : std::vector<EgressEvent>{};
}

std::vector<EgressEvent> parse_egress(std::string_view text_view) {
    std::vector<EgressEvent> out;
    const std::string whole(text_view);
    const std::string* text = &whole;
    std::size_t at = 0;
    while (at < text->size()) {
        const auto end = text->find('\n', at);
        const std::string line = text->substr(at, end == std::string::npos ? end : end - at);
        at = end == std::string::npos ? text->size() : end + 1;
        const json value = json::parse(line, nullptr, false);
        if (!value.is_object() || !value.contains("host")) continue;
        EgressEvent e;
        e.time = json_value(value, "time", "");
        e.host = json_value(value, "host", "");
        e.port = json_value(value, "port", 0);
        e.allowed = json_value(value, "allowed", false);
        e.error = json_value(value, "error", "");
        e.bytes_out = json_value<std::uint64_t>(value, "bytes_out", 0);
        e.bytes_in = json_value<std::uint64_t>(value, "bytes_in", 0);
        e.pid = json_value(value, "pid", 0L);
        e.command = json_value(value, "command", "");
        out.push_back(std::move(e));
    }
    return out;
}

EgressProxy::EgressProxy(ProxyOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<EgressProxy>> EgressProxy::start(ProxyOptions options) {
    std::unique_ptr<EgressProxy> proxy(new EgressProxy(std::move(options)));
    auto listener = listen_unix(proxy->options_.socket);
    if (!listener) return std::move(listener).error();
    proxy->listener_ = std::move(listener).value();
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return Error::general("egress proxy: pipe: " + std::string(std::strerror(errno)));
    proxy->stop_read_ = UniqueFd(pipe_fds[0]);
    proxy->stop_write_ = UniqueFd(pipe_fds[1]);
    proxy->acceptor_ = std::thread([p = proxy.get()] { p->accept_loop(); });
    return proxy;
}

EgressProxy::~EgressProxy() {
    if (stop_write_.valid()) {
        const char byte = 0;
        [[maybe_unused]] auto n = ::write(stop_write_.get(), &byte, 1);
    }
    if (acceptor_.joinable()) acceptor_.join();
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return active_ == 0; });
    lock.unlock();
    std::error_code ec;
    std::filesystem::remove(options_.socket, ec);
}

void EgressProxy::accept_loop() {
    while (true) {
        pollfd p[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (p[1].revents) return;
        UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!client.valid()) continue;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (active_ >= options_.max_connections) {
                send_all(client.get(),
                         answer(503, "Service Unavailable",
                                "cocode: too many connections from this run at once"));
                continue;
            }
            ++active_;
        }
        std::thread([this, c = std::move(client)]() mutable {
            serve(std::move(c));
            std::lock_guard<std::mutex> lock(mutex_);
            --active_;
            idle_.notify_all();
        }).detach();
    }
}

void EgressProxy::serve(UniqueFd client) {
    std::string rest;
    auto head = read_head(client.get(), rest, 10s);
    if (!head) return;
    EgressEvent event;
    event.time = utc_now();
    if (head->rfind(kPeerPreamble, 0) == 0) {
        const auto end = head->find("\r\n");
        const json peer =
            json::parse(head->substr(sizeof kPeerPreamble - 1, end - (sizeof kPeerPreamble - 1)),
                        nullptr, false);
        if (peer.is_object()) {
            event.pid = json_value(peer, "pid", 0L);
            event.command = json_value(peer, "command", "");
        }
        // The request's head follows the preamble's line: read_head read up to its end.
        head = head->substr(end + 2);
    }
    auto target = target_of(*head);
    if (!target) {
        send_all(client.get(),
                 answer(400, "Bad Request",
                        "cocode: expected CONNECT host:port or an absolute http:// URL"));
        return;
    }
    event.host = target->host;
    event.port = target->port;
    // A name no host has (a NUL inside: the resolver would reach what comes before it) is
    // refused before anything is decided or recorded as allowed, in an audit too.
    event.allowed = is_host_name(target->host) &&
                    (options_.audit || options_.allow.allows(target->host, target->port));
    if (!event.allowed) {
        ++blocked_;
        record(event);
        send_all(client.get(),
                 answer(403, "Forbidden",
                        "cocode: egress to " + entry_text({target->host, target->port, ""}) +
                            " is blocked; allow it with " + options_.fix));
        return;
    }
    auto server = options_.connect ? options_.connect(target->host, target->port, target->tunnel)
                                   : connect_tcp(target->host, target->port, 10s);
    if (!server) {
        event.error = server.error().message;
        record(event);
        send_all(client.get(), answer(502, "Bad Gateway", "cocode: " + event.error));
        return;
    }
    const bool opened = target->tunnel
                            ? send_all(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n")
                            : send_all(server->get(), target->forward_head);
    if (opened && !rest.empty()) {
        send_all(server->get(), rest);
        event.bytes_out += rest.size();
    }
    if (opened) {
        const auto moved = relay(client.get(), server->get(), stop_read_.get());
        event.bytes_out += moved.up;
        event.bytes_in += moved.down;
    }
    record(event);
}

void EgressProxy::record(const EgressEvent& event) {
    // Appended under a lock: `logs`, the check and `egress` read it while the run goes on.
    auto written = append_line_locked(options_.record, to_json_line(event));
    if (!written && options_.notice && !told_.exchange(true))
        options_.notice("egress record " + options_.record.string() + ": " +
                        written.error().message);
}

}  // namespace cocode::net
