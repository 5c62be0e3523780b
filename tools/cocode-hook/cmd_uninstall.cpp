#include <cstdio>

#include "commands.h"
#include "hook/installer.h"

namespace cocode::hook_cli {

int run_uninstall(const UninstallArgs& args) {
    auto where = hook::locate_hooks(args.repo).value_or_throw();
    const std::vector<std::string>& hooks = args.hooks.empty() ? hook::kManagedHooks : args.hooks;
    for (const std::string& name : hooks) {
        switch (hook::uninstall_hook(where, name).value_or_throw()) {
            case hook::UninstallOutcome::restored:
                std::printf("%s: removed; the hook it chained is back in place\n", name.c_str());
                break;
            case hook::UninstallOutcome::removed:
                std::printf("%s: removed\n", name.c_str());
                break;
            case hook::UninstallOutcome::not_installed:
                if (!args.hooks.empty()) std::printf("%s: not installed\n", name.c_str());
                break;
        }
    }
    return 0;
}

}  // namespace cocode::hook_cli
