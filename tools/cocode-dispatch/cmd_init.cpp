// cocode-dispatch init: a first .cocode/config.json with the coding CLIs found on PATH, and
// the post-commit hook.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/executables.h"
#include "config/presets.h"
#include "core/files.h"
#include "core/json_text.h"
#include "environment/spec.h"
#include "hook/installer.h"
#include "net/allowlist.h"
#include "proc/command.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

int run_init(const InitArgs& args) {
    Workspace ws = open_workspace(false);
    const fs::path file = ws.root / config::kConfigFile;
    std::error_code ec;
    if (fs::exists(file, ec) && !args.force)
        throw Failure(Error::usage(std::string(config::kConfigFile) +
                                   " already exists (--force writes a new one)"));
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    // Editors validate the file as it is written when it names its schema: the installed one.
    if (auto schema = tool::installed_data("config.schema.json")) doc["$schema"] = schema->string();
    doc["concurrency"] = 5;
    doc["timeout"] = "30m";
    nlohmann::ordered_json agents = nlohmann::ordered_json::object();
    std::string names;
    for (const auto& cli : config::builtin_presets()) {
        names += (names.empty() ? "" : ", ") + cli->name;
        if (auto path = find_in_path(cli->program)) {
            agents[cli->name] = {{"type", cli->name}};
            std::printf("found %s at %s\n", cli->name.c_str(), path->c_str());
        }
    }
    if (agents.empty())
        std::printf(
            "no coding CLI of a preset on PATH (%s): add an agent of type \"command\" "
            "(docs/agents.md)\n",
            names.c_str());
    // The agents' network: each reaches its own model, and the registries this repository
    // shows it uses (docs/security.md).
    nlohmann::ordered_json allow = nlohmann::ordered_json::array();
    std::string seen;
    for (const auto& [ecosystem, sign] : net::ecosystems_used(ws.root)) {
        allow.push_back(ecosystem);
        seen += (seen.empty() ? "" : ", ") + ecosystem + " (" + sign + ")";
    }
    doc["network"] = {{"mode", "allowlist"}, {"allow", allow}};
    std::printf("network: allowlist — each agent reaches its model%s\n",
                seen.empty() ? "; no package registry seen" : ("; and " + seen).c_str());
    doc["agents"] = agents;
    // A devcontainer.json's commands prepare the environment when nothing else does.
    if (auto text = read_file(ws.root / environment::kDevcontainerFile)) {
        auto spec = environment::devcontainer_spec(*text, environment::kDevcontainerFile);
        if (!spec)
            std::printf("warning: %s\n", spec.error().message.c_str());
        else if (!spec->setup.empty())
            std::printf("environment: %s\n", environment::describe(*spec).c_str());
    }
    fs::create_directories(file.parent_path(), ec);
    write_file_atomic(file, json_dump(doc, 2) + "\n").value_or_throw();
    std::printf("wrote %s\n", file.c_str());

    auto where = hook::locate_hooks(ws.root).value_or_throw();
    hook::InstallOptions options{tool::sibling_executable("cocode-hook-shim"),
                                 tool::sibling_executable("cocode-hook"), false};
    auto installed = hook::install_hook(where, "post-commit", options).value_or_throw();
    std::printf(
        "post-commit hook %s in %s\n",
        installed.outcome == hook::InstallOutcome::unchanged ? "already installed" : "installed",
        where.hooks_dir.c_str());
    return 0;
}

}  // namespace cocode::dispatch_cli
