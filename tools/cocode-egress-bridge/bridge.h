// The egress bridge (agent/egress.h, docs/security.md "The agent's network"): in a network
// namespace with its own loopback and nothing else, it listens on the proxy's port and on each
// allowed endpoint of the host's loopback, and passes every connection to the run's egress
// proxy over the Unix socket in the run's folder, saying which process inside made it. Two
// programs run it: cocode-egress-bridge (first in a sandbox bubblewrap makes), and
// cocode-sandbox in its own first process when its program is that bridge (one process and one
// start fewer). Static programs both: this links nothing of cocode's but the few files they
// share (net/relay, core/files).
//
//   cocode-egress-bridge --socket S --proxy-port P [--forward ADDRESS,PORT,HOST]... -- ARGV
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/files.h"
#include "core/result.h"

namespace cocode::bridge {

// A host loopback endpoint listened on inside, asked of the proxy as `host`:`port`.
struct Forward {
    std::string address;
    int port = 0;
    std::string host;
};

struct BridgeArgs {
    std::filesystem::path socket;
    int proxy_port = 0;
    std::vector<Forward> forwards;
    std::vector<std::string> argv;
};

// The bridge's command line after its program's name.
Result<BridgeArgs> parse_bridge(const std::vector<std::string>& args);

struct Listener {
    UniqueFd socket;
    std::string host;  // a forward's, as the proxy is asked for it; "" for the proxy's own
    int port = 0;
};

// Its listening sockets, made before its agent starts (so that its first connection finds
// them): the proxy's port, then each forward's.
Result<std::vector<Listener>> listen_all(const BridgeArgs& args);

// Accepts on `listeners` for ever, on a thread of its own, and passes each connection on to
// the proxy at `socket`, each on a thread of its own.
void serve(std::vector<Listener> listeners, const std::filesystem::path& socket);

}  // namespace cocode::bridge
