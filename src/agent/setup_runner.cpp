#include "agent/setup_runner.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "agent/egress.h"
#include "core/files.h"
#include "git/git_files.h"
#include "net/proxy.h"
#include "proc/command.h"
#include "proc/sandbox.h"

namespace cocode::agent {
namespace fs = std::filesystem;

std::vector<fs::path> secrets_in_home(const fs::path& home, const config::CliPreset* own) {
    std::vector<fs::path> hidden;
    if (home.empty() || home == "/") return hidden;
    for (const char* secret :
         {".ssh", ".git-credentials", ".config/git/credentials", ".config/gh", ".netrc"})
        hidden.push_back(home / secret);
    // Every other CLI's own configuration and state (its logins among them) is hidden; the
    // agent's own preset's stays, also where another preset shares a folder with it.
    const std::vector<std::string> own_paths = own ? own->config_paths : std::vector<std::string>{};
    for (const auto& cli : config::builtin_presets()) {
        if (cli.get() == own) continue;
        for (const auto& path : cli->config_paths)
            if (std::find(own_paths.begin(), own_paths.end(), path) == own_paths.end())
                hidden.push_back(home / path);
    }
    return hidden;
}

namespace {

struct Probed {
    std::once_flag once;
    SandboxProbe probe;
};

// The hosts a record's refused connections went to, from byte `offset` on.
std::vector<std::string> blocked_since(const fs::path& record, std::uint64_t offset) {
    std::vector<std::string> out;
    for (const auto& e : net::parse_egress(read_file_from(record, offset, std::size_t{4} << 20))) {
        const std::string host = e.host + ":" + std::to_string(e.port);
        if (!e.allowed && std::find(out.begin(), out.end(), host) == out.end()) out.push_back(host);
    }
    return out;
}

}  // namespace

environment::SetupRunner setup_runner(const config::Config& config, const fs::path& repo_root,
                                      std::optional<net::Allowlist> allow) {
    auto probed = std::make_shared<Probed>();
    return [config, repo_root, allow,
            probed](const environment::SetupCommand& c) -> Result<environment::SetupOutcome> {
        const bool want = config.sandbox != config::SandboxMode::none;
        if (want) std::call_once(probed->once, [&] { probed->probe = probe_sandbox(); });
        const SandboxProbe& probe = probed->probe;
        if (config.sandbox == config::SandboxMode::bwrap && !probe.available)
            return Error::missing("sandbox: bwrap, but " + probe.why_not);
        const bool sandboxed = want && probe.available;
        const NetworkDecision network =
            decide_network(config.network.mode, sandboxed, sandboxed && probe.network,
                           sandboxed ? probe.network_why_not
                           : want    ? probe.why_not
                                     : "sandbox: none");
        if (!network.refused.empty()) return Error::missing(network.refused);

        std::vector<std::string> argv = shell_argv(c.command);
        std::vector<std::string> environment = c.environment;
        std::unique_ptr<net::EgressProxy> proxy;
        std::uint64_t record_offset = 0;
        if (sandboxed) {
            SandboxPlan plan;
            plan.read_only.push_back(repo_root);
            if (auto dirs = git::locate_git_dirs(repo_root, nullptr))
                plan.read_only.push_back(dirs->common_dir);
            plan.read_write.push_back(c.cwd);
            const char* home = std::getenv("HOME");
            plan.hidden = secrets_in_home(home ? home : "", nullptr);
            if (network.mode != config::NetworkMode::open) {
                net::Allowlist allowed;
                if (allow) {
                    allowed = *allow;
                } else {
                    for (const auto& [ecosystem, shown_by] : net::ecosystems_used(c.cwd))
                        if (auto entries = net::parse_allow_entry(ecosystem, shown_by))
                            allowed.add(*entries);
                    for (const auto& text : config.network.allow)
                        if (auto entries = net::parse_allow_entry(text, "network.allow"))
                            allowed.add(*entries);
                }
                const fs::path socket =
                    c.record.parent_path() / (c.record.stem().string() + ".sock");
                EgressPlan egress = enclosed_plan(allowed, network.mode, socket, c.record);
                auto started = start_egress_proxy(
                    egress, "network.allow in " + std::string(config::kConfigFile), "setup");
                if (!started) return std::move(started).error();
                proxy = std::move(*started);
                std::error_code ec;
                record_offset = fs::file_size(c.record, ec);
                if (ec) record_offset = 0;
                for (const auto& variable : proxy_variables(egress)) {
                    const std::string prefix = variable.first + "=";
                    std::erase_if(environment, [&](const std::string& entry) {
                        return entry.rfind(prefix, 0) == 0;
                    });
                    if (!variable.second.empty()) environment.push_back(prefix + variable.second);
                }
                plan.own_network = true;
                plan.read_only_last.push_back(c.record);
                argv = bridged_argv(dispatch_program(), egress, argv);
            }
            argv = sandboxed_argv(probe.bwrap, plan, argv);
        }
        auto outcome = environment::run_setup(c, argv, environment);
        if (!outcome) return outcome;
        proxy.reset();  // every process of it is gone: nothing is left to go out
        if (network.mode != config::NetworkMode::open && sandboxed)
            outcome->blocked = blocked_since(c.record, record_offset);
        return outcome;
    };
}

}  // namespace cocode::agent
