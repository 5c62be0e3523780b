#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/json_text.h"
#include "hook/installer.h"

namespace cocode::hook_cli {

int run_status(const StatusArgs& args) {
    auto where = hook::locate_hooks(args.repo).value_or_throw();
    hook::HooksStatus status = hook::hooks_status(where, shim_executable());

    if (args.json) {
        nlohmann::ordered_json out;
        out["hooks_dir"] = status.where.hooks_dir.string();
        out["core_hooks_path"] = status.where.hooks_path_config
                                     ? nlohmann::ordered_json(*status.where.hooks_path_config)
                                     : nullptr;
        out["tool"] = status.tool ? nlohmann::ordered_json(status.tool->string()) : nullptr;
        out["tool_exists"] = status.tool_exists;
        out["hooks"] = nlohmann::ordered_json::array();
        for (const hook::HookStatus& h : status.hooks) {
            nlohmann::ordered_json entry;
            entry["name"] = h.name;
            entry["state"] = hook::state_name(h.state);
            entry["chained"] = h.chained ? nlohmann::ordered_json(h.chained->string()) : nullptr;
            out["hooks"].push_back(std::move(entry));
        }
        std::printf("%s\n", json_output(out, 2).c_str());
        return 0;
    }

    std::printf("hooks folder: %s%s\n", status.where.hooks_dir.c_str(),
                status.where.hooks_path_config ? " (core.hooksPath)" : "");
    if (status.tool)
        std::printf("cocode-hook:  %s%s\n", status.tool->c_str(),
                    status.tool_exists ? "" : " (missing!)");
    for (const hook::HookStatus& h : status.hooks) {
        const char* state = h.state == hook::HookState::installed ? "installed"
                            : h.state == hook::HookState::outdated
                                ? "installed, older version (run install again)"
                            : h.state == hook::HookState::foreign ? "another tool's hook"
                                                                  : "not installed";
        std::printf("%-12s  %s", h.name.c_str(), state);
        if (h.chained) {
            std::printf(h.state == hook::HookState::foreign ? "; cocode's chained copy left at %s"
                                                            : "; chains %s",
                        h.chained->filename().c_str());
        }
        std::printf("\n");
    }
    return 0;
}

}  // namespace cocode::hook_cli
