// cocode-dispatch doctor: is everything cocode needs here? Exit 3 when something is missing.
#include <sys/statvfs.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/executables.h"
#include "git/repository.h"
#include "github/auth.h"
#include "github/url.h"
#include "hook/installer.h"
#include "proc/command.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

namespace {

struct Check {
    std::string name;
    std::string state;  // ok, missing, warning
    std::string detail;
};

// `program --version`, first line, bounded by coreutils' timeout so a CLI that waits for
// input or a login cannot hang the doctor.
std::string version_of(const fs::path& program) {
    auto result = run_command({"timeout", "5", program.string(), "--version"});
    if (!result || result->exit_code != 0) return "version unknown";
    std::string line = first_line(result->out);
    return line.empty() ? "version unknown" : line;
}

}  // namespace

int run_doctor(const DoctorArgs& args) {
    std::vector<Check> checks;
    if (auto git = find_in_path("git"))
        checks.push_back({"git", "ok", version_of(*git)});
    else
        checks.push_back({"git", "missing", "git is not on PATH"});
    checks.push_back({"libgit2", "ok", git::libgit2_version()});

    std::optional<Workspace> ws;
    try {
        ws = open_workspace(true);
    } catch (const Failure& failure) {
        checks.push_back({"repository", "warning", failure.error().message});
    }
    if (ws) {
        checks.push_back({"repository", "ok", ws->root.string()});
        if (ws->config.agents.empty())
            checks.push_back({"agents", "warning", "none configured (cocode-dispatch init)"});
        for (const auto& agent : ws->config.agents) {
            const std::string name = "agent " + agent.name;
            auto program = find_in_path(agent.argv.front());
            if (!program) {
                checks.push_back({name, "missing", agent.argv.front() + " not found in PATH"});
                continue;
            }
            std::string detail = program->string();
            if (agent.type != config::AgentType::command)
                detail += " (" + version_of(*program) + ")";
            if (agent.token_env) {
                const char* token = std::getenv(agent.token_env->c_str());
                detail += std::string(", ") + *agent.token_env +
                          (token && *token ? " present" : " not set (the CLI's own login is used)");
            }
            checks.push_back({name, "ok", detail});
        }
        auto where = hook::locate_hooks(ws->root);
        if (where) {
            auto status = hook::hooks_status(*where, tool::sibling_executable("cocode-hook-shim"));
            for (const auto& hook : status.hooks) {
                std::string state(hook::state_name(hook.state));
                checks.push_back({"hook " + hook.name,
                                  hook.state == hook::HookState::installed ? "ok" : "warning",
                                  state + " in " + where->hooks_dir.string()});
            }
        }
        struct statvfs fsinfo {};
        if (::statvfs(ws->root.c_str(), &fsinfo) == 0) {
            double free_gb =
                static_cast<double>(fsinfo.f_bavail) * static_cast<double>(fsinfo.f_frsize) / 1e9;
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.1f GB free", free_gb);
            checks.push_back({"disk", free_gb < 1.0 ? "warning" : "ok", buf});
        }
    }
    // Which credential would be used, never its value: the same resolution the GitHub
    // client makes (App, GITHUB_TOKEN, GH_TOKEN, `gh auth token`, anonymous).
    if (auto api = github::resolve_api_url(std::nullopt); !api) {
        checks.push_back({"github token", "warning", api.error().message});
    } else if (auto auth = github::resolve_auth(*api); !auth) {
        checks.push_back({"github token", "warning", auth.error().message});
    } else if ((*auth)->source() == "anonymous") {
        checks.push_back({"github token", "warning",
                          "none: only public repositories and the local issue store"});
    } else {
        checks.push_back({"github token", "ok", "from " + (*auth)->source()});
    }

    bool missing = false;
    for (const auto& c : checks) missing = missing || c.state == "missing";
    if (args.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& c : checks)
            out.push_back({{"check", c.name}, {"state", c.state}, {"detail", c.detail}});
        std::cout << out.dump(2) << "\n";
    } else {
        for (const auto& c : checks)
            std::printf("%-8s %-22s %s\n", c.state.c_str(), c.name.c_str(), c.detail.c_str());
    }
    return missing ? static_cast<int>(ExitCode::missing_dependency) : 0;
}

}  // namespace cocode::dispatch_cli
