// An agent's network under `network.mode` allowlist or audit (docs/security.md, "The agent's
// network"): what a run's plan holds, and the bridge — the first program inside the agent's
// network namespace. The namespace has its own loopback and nothing else: no route, no
// resolver. The bridge listens there on the proxy's port and on each allowed endpoint of the
// host's loopback (a local model server, the tests' fakes: reachable at the address they are
// configured with), passes every connection to the run's egress proxy (net/proxy.h) over the
// Unix socket in the run's folder, then starts the agent and ends with it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "net/allowlist.h"
#include "net/proxy.h"

namespace cocode::agent {

// What a run's network is, decided when it is planned.
struct EgressPlan {
    config::NetworkMode mode = config::NetworkMode::open;
    bool fail_on_blocked = false;
    net::Allowlist allow;          // the agent's endpoint, network.allow, its own network_allow
    std::filesystem::path socket;  // <run>/egress.sock
    std::filesystem::path record;  // <run>/egress.jsonl
    int proxy_port = 0;            // inside the namespace, on 127.0.0.1
    // The host's loopback endpoints the bridge listens on inside: at `address`:`port`, asked
    // of the proxy as `host`:`port` (localhost listens at both its addresses, as localhost).
    struct Forward {
        std::string address;
        int port = 0;
        std::string host;
    };
    std::vector<Forward> forwards;
    bool enclosed() const { return mode != config::NetworkMode::open; }
};

// "allowlist", "audit" or "open": as configuration and run-info write it.
std::string_view network_name(config::NetworkMode mode);

// What a run's network is, from what the configuration asks (`asked`; unset: allowlist where
// the sandbox can enclose it) and what this machine can do: `sandboxed` (the run is in
// bubblewrap) and `namespace_ok` (bwrap can make a network namespace here); `why_not` says
// why not when either is false. A configured allowlist or audit that cannot be had is
// `refused` (the run fails, exit 3): it never runs open.
struct NetworkDecision {
    config::NetworkMode mode = config::NetworkMode::open;
    std::string refused;
};
NetworkDecision decide_network(std::optional<config::NetworkMode> asked, bool sandboxed,
                               bool namespace_ok, const std::string& why_not);

// The allowlist of `agent` under `config`: its model endpoint (base_url, else its preset's),
// `network.allow`, its own `network_allow`.
net::Allowlist allowlist_of(const config::Config& config, const config::AgentConfig& agent);

// The plan of a run in `folder`; `mode` already resolved (an unset mode is allowlist when
// the run is sandboxed).
EgressPlan egress_plan(const config::Config& config, const config::AgentConfig& agent,
                       config::NetworkMode mode, const std::filesystem::path& folder);

// The plan of a network enclosed with `allow` (the bridge's forwards and port), whose proxy
// listens at `socket` and records into `record`: what egress_plan makes for an agent, and the
// setup commands' runner (agent/confined.h) for theirs.
EgressPlan enclosed_plan(net::Allowlist allow, config::NetworkMode mode,
                         const std::filesystem::path& socket, const std::filesystem::path& record);

// cocode-dispatch, which runs the built-in agents and the egress bridge: this very program
// when it is cocode-dispatch, else the one beside it (cocode-check), else the one in PATH (a
// library caller, a test).
std::filesystem::path dispatch_program();

// The egress proxy of an enclosed network: its record made first (so that the sandbox can
// make it read-only inside), connections out as the host goes out (its own proxy, if any),
// a refused one answered with `fix`; `label` names it in the notices it prints.
Result<std::unique_ptr<net::EgressProxy>> start_egress_proxy(const EgressPlan& plan,
                                                             const std::string& fix,
                                                             const std::string& label);

// HTTPS_PROXY, HTTP_PROXY and their lower-case forms, pointing at the bridge; NO_PROXY and
// ALL_PROXY emptied (an agent's own would skip the proxy for hosts it lists).
std::vector<std::pair<std::string, std::string>> proxy_variables(const EgressPlan& plan);

// The bridge (tools/cocode-egress-bridge): beside this program (the build tree) or in
// ../libexec/cocode/ (installed), else on PATH. A small program of its own, started first in
// every enclosed network: it loads none of cocode-dispatch's libraries.
std::filesystem::path bridge_program();

// The command line that starts `argv` behind the bridge: `cocode-egress-bridge --socket S
// --proxy-port P [--forward ADDR,PORT,HOST]... -- ARGV`, which listens, starts ARGV, relays
// until it ends and exits with its exit code (3 when the namespace cannot be set up).
std::vector<std::string> bridged_argv(const EgressPlan& plan, const std::vector<std::string>& argv);

}  // namespace cocode::agent
