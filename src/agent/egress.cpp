#include "agent/egress.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "config/presets.h"
#include "core/error.h"
#include "core/files.h"
#include "core/terminal_text.h"
#include "github/reach.h"
#include "net/proxy.h"
#include "net/relay.h"
#include "proc/command.h"
#include "proc/spawn.h"

namespace cocode::agent {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::optional<std::string> environment_value(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}

// Where an agent's model is: its base_url, else where its CLI is pointed (its variable, its
// own configuration) or its default, else a built-in agent's provider's.
std::string endpoint_of(const config::AgentConfig& agent) {
    if (auto endpoint = config::model_endpoint(agent, environment_value); endpoint.url)
        return *endpoint.url;
    if (agent.base_url) return *agent.base_url;
    if (agent.chat)
        if (const auto* provider = config::chat_provider(agent.chat->provider))
            return std::string(provider->base_url);
    return {};
}

void add_entries(net::Allowlist& allow, const std::vector<std::string>& texts,
                 const std::string& why) {
    for (const auto& text : texts)
        if (auto entries = net::parse_allow_entry(text, why)) allow.add(*entries);
}

}  // namespace

std::string_view network_name(config::NetworkMode mode) {
    switch (mode) {
        case config::NetworkMode::allowlist:
            return "allowlist";
        case config::NetworkMode::audit:
            return "audit";
        case config::NetworkMode::open:
            break;
    }
    return "open";
}

NetworkDecision decide_network(std::optional<config::NetworkMode> asked, bool sandboxed,
                               bool namespace_ok, const std::string& why_not) {
    if (asked == config::NetworkMode::open) return {};
    if (sandboxed && namespace_ok) return {asked.value_or(config::NetworkMode::allowlist), ""};
    if (!asked) return {};  // unset, and nothing to enclose it with: the host's network
    return {config::NetworkMode::open,
            "network.mode " + std::string(network_name(*asked)) +
                " needs the sandbox's network namespace, but " + why_not +
                " (allow user namespaces, or set network.mode to \"open\")"};
}

net::Allowlist allowlist_of(const config::Config& config, const config::AgentConfig& agent) {
    net::Allowlist allow;
    if (auto entry = net::endpoint_entry(endpoint_of(agent), "agent " + agent.name + "'s endpoint"))
        allow.add(*entry);
    // A CLI on its own service (no base_url) needs that service's hosts too (its preset's).
    if (const config::CliPreset* cli = config::cli_preset(agent); cli && !agent.base_url)
        add_entries(allow, cli->egress, "the " + cli->name + " preset");
    add_entries(allow, config.network.allow, "network.allow");
    add_entries(allow, agent.network_allow, "agent " + agent.name + "'s network_allow");
    return allow;
}

EgressPlan egress_plan(const config::Config& config, const config::AgentConfig& agent,
                       config::NetworkMode mode, const fs::path& folder) {
    EgressPlan plan = enclosed_plan(
        mode == config::NetworkMode::open ? net::Allowlist() : allowlist_of(config, agent), mode,
        folder / "egress.sock", folder / "egress.jsonl");
    plan.fail_on_blocked = plan.enclosed() && config.network.fail_on_blocked;
    return plan;
}

EgressPlan enclosed_plan(net::Allowlist allow, config::NetworkMode mode, const fs::path& socket,
                         const fs::path& record) {
    EgressPlan plan;
    plan.mode = mode;
    if (mode == config::NetworkMode::open) return plan;
    plan.allow = std::move(allow);
    plan.socket = socket;
    plan.record = record;
    // The host's loopback endpoints, at their own address and port inside too; localhost
    // as both of its addresses.
    // An address listed as itself asks for itself; one listed only through localhost asks
    // for localhost.
    auto forward = [&](const std::string& address, int port, const std::string& host) {
        auto same = std::find_if(plan.forwards.begin(), plan.forwards.end(), [&](const auto& f) {
            return f.address == address && f.port == port;
        });
        if (same == plan.forwards.end())
            plan.forwards.push_back({address, port, host});
        else if (host == address)
            same->host = host;
    };
    for (const auto& e : plan.allow.entries()) {
        if (!e.port || !net::is_loopback(e.host)) continue;
        if (e.host == "localhost") {
            forward("127.0.0.1", e.port, e.host);
            forward("::1", e.port, e.host);
        } else {
            forward(e.host, e.port, e.host);
        }
    }
    // The proxy's own port: one no forward takes.
    plan.proxy_port = 3128;
    while (std::any_of(plan.forwards.begin(), plan.forwards.end(),
                       [&](const auto& f) { return f.port == plan.proxy_port; }))
        ++plan.proxy_port;
    return plan;
}

fs::path dispatch_program() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && self.filename() == "cocode-dispatch") return self;
    // cocode-check, and the tools installed together: beside this program.
    if (!ec && ::access((self.parent_path() / "cocode-dispatch").c_str(), X_OK) == 0)
        return self.parent_path() / "cocode-dispatch";
    if (auto found = find_in_path("cocode-dispatch")) return *found;
    return "cocode-dispatch";
}

Result<std::unique_ptr<net::EgressProxy>> start_egress_proxy(const EgressPlan& plan,
                                                             const std::string& fix,
                                                             const std::string& label) {
    if (auto made = create_file(plan.record); !made) return std::move(made).error();
    net::ProxyOptions options;
    options.socket = plan.socket;
    options.record = plan.record;
    options.allow = plan.allow;
    options.audit = plan.mode == config::NetworkMode::audit;
    // Out as the host goes out: through its own proxy (HTTPS_PROXY, NO_PROXY…).
    options.connect = [](const std::string& host, int port, bool tunnel) -> Result<UniqueFd> {
        auto opened = github::open_connection(
            (tunnel ? "https://" : "http://") + net::entry_text({host, port, ""}),
            std::chrono::seconds(10));
        if (!opened) return std::move(opened).error();
        return std::move(opened->fd);
    };
    options.fix = fix;
    options.notice = [label](const std::string& text) {
        // A host the agent asked for is its text: shown as text, never as a command.
        std::fprintf(stderr, "cocode: %s: %s\n", label.c_str(), terminal_safe_line(text).c_str());
    };
    return net::EgressProxy::start(std::move(options));
}

std::vector<std::pair<std::string, std::string>> proxy_variables(const EgressPlan& plan) {
    if (!plan.enclosed()) return {};
    const std::string url = "http://127.0.0.1:" + std::to_string(plan.proxy_port);
    return {{"HTTPS_PROXY", url}, {"https_proxy", url}, {"HTTP_PROXY", url}, {"http_proxy", url},
            {"NO_PROXY", ""},     {"no_proxy", ""},     {"ALL_PROXY", ""},   {"all_proxy", ""}};
}

std::vector<std::string> bridged_argv(const EgressPlan& plan,
                                      const std::vector<std::string>& argv) {
    std::vector<std::string> out = {bridge_program().string(), "--socket", plan.socket.string(),
                                    "--proxy-port", std::to_string(plan.proxy_port)};
    for (const auto& f : plan.forwards)
        out.insert(out.end(),
                   {"--forward", f.address + "," + std::to_string(f.port) + "," + f.host});
    out.push_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

fs::path bridge_program() {
    std::error_code ec;
    const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec)
        for (const fs::path& candidate :
             {dir / "cocode-egress-bridge",
              dir / ".." / "libexec" / "cocode" / "cocode-egress-bridge"})
            if (::access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    if (auto found = find_in_path("cocode-egress-bridge")) return *found;
    return "cocode-egress-bridge";
}

}  // namespace cocode::agent
