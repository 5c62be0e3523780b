// The egress proxy of one run: the only way out of the agent's network namespace
// (docs/security.md, "The agent's network"). It listens on a Unix socket in the run's folder,
// which the bridge inside the namespace (agent/egress.h) connects to, and speaks HTTP CONNECT
// and plain HTTP proxying. It resolves names itself, and only allowed ones; a blocked request
// is answered 403 at once with one line naming the host and the setting to change. Every
// connection, allowed or not, is one line of the run's egress.jsonl.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "net/allowlist.h"
#include "net/relay.h"

namespace cocode::net {

// The first line the bridge sends on each connection, before the client's bytes: who made it
// (`{"pid": …, "command": "…"}`). The agent can reach the socket too, so it is a hint for the
// record, never a permission.
inline constexpr char kPeerPreamble[] = "COCODE-PEER ";

struct ProxyOptions {
    std::filesystem::path socket;  // <run>/egress.sock
    std::filesystem::path record;  // <run>/egress.jsonl
    Allowlist allow;
    bool audit = false;         // everything goes through, and is recorded
    std::string fix;            // the setting a 403 names ("network.allow in …")
    int max_connections = 256;  // at once; the next are answered 503
    // How an allowed connection is opened; empty: directly (connect_tcp, 10 s). The
    // supervisor goes out as the host does, through the host's own proxy (github/reach.h).
    std::function<Result<UniqueFd>(const std::string& host, int port, bool tunnel)> connect;
    // Told once when the record cannot be written (a full disk).
    std::function<void(const std::string&)> notice;
};

// One line of egress.jsonl.
struct EgressEvent {
    std::string time;  // UTC, ISO 8601
    std::string host;
    int port = 0;
    bool allowed = false;
    std::string error;  // why an allowed one failed (resolving, connecting); "" otherwise
    std::uint64_t bytes_out = 0, bytes_in = 0;
    long pid = 0;  // 0 when not known
    std::string command;
};
std::string to_json_line(const EgressEvent& event);
// The same as an object (the dashboard's run page).
nlohmann::json egress_json(const EgressEvent& event);
// The events of a run's egress.jsonl; lines that are not events are skipped.
std::vector<EgressEvent> read_egress(const std::filesystem::path& record);
// The same from its text (a part of it: what was appended since an offset).
std::vector<EgressEvent> parse_egress(std::string_view text);

class EgressProxy {
  public:
    static Result<std::unique_ptr<EgressProxy>> start(ProxyOptions options);
    // Stops listening, ends every connection and removes the socket.
    ~EgressProxy();
    EgressProxy(const EgressProxy&) = delete;
    EgressProxy& operator=(const EgressProxy&) = delete;

    int blocked() const { return blocked_; }

  private:
    explicit EgressProxy(ProxyOptions options);
    void accept_loop();
    void serve(UniqueFd client);
    void record(const EgressEvent& event);

    ProxyOptions options_;
    UniqueFd listener_;
    UniqueFd stop_read_, stop_write_;
    std::mutex mutex_;
    std::condition_variable idle_;
    int active_ = 0;
    std::atomic<int> blocked_{0};
    std::atomic<bool> told_{false};
    std::thread acceptor_;
};

}  // namespace cocode::net
