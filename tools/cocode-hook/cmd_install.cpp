#include <cstdio>

#include "commands.h"
#include "hook/installer.h"

namespace cocode::hook_cli {

int run_install(const InstallArgs& args) {
    auto where = hook::locate_hooks(args.repo).value_or_throw();
    std::vector<std::string> hooks =
        args.hooks.empty() ? std::vector<std::string>{"post-commit"} : args.hooks;
    hook::InstallOptions options{shim_executable(), self_executable(), args.allow_tracked};
    for (const std::string& name : hooks) {
        auto result = hook::install_hook(where, name, options).value_or_throw();
        const char* verb = result.outcome == hook::InstallOutcome::installed ? "installed"
                           : result.outcome == hook::InstallOutcome::updated ? "updated"
                                                                             : "already installed";
        std::printf("%s: %s in %s", name.c_str(), verb, where.hooks_dir.c_str());
        if (result.chained) std::printf(" (chains %s)", result.chained->filename().c_str());
        std::printf("\n");
    }
    return 0;
}

}  // namespace cocode::hook_cli
