// cocode-hook: installs cocode's git hooks beside whatever is there, and is what those hooks
// call when a commit lands in a cocode run.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "common/executables.h"
#include "common/tool_main.h"

namespace fs = std::filesystem;
using namespace cocode::hook_cli;

fs::path cocode::hook_cli::self_executable() {
    return cocode::tool::self_executable("cocode-hook");
}

fs::path cocode::hook_cli::shim_executable() {
    return cocode::tool::sibling_executable("cocode-hook-shim");
}

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"cocode-hook: git hooks that tell cocode the moment an agent is ready",
                 "cocode-hook"};
    app.set_version_flag("--version", cocode::tool::version_line("cocode-hook"));
    app.footer(
        "Exit codes: 0 done, 1 an error, 2 a mistake in the arguments or not a git repository,\n"
        "3 a program that is needed is missing. See docs/hooks.md.");
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "every command's options (what the man page shows)");

    InstallArgs install;
    auto* install_cmd =
        app.add_subcommand("install", "install cocode's hook, chaining the one that is there");
    install_cmd->add_option("--repo", install.repo, "a folder inside the repository (default: .)");
    install_cmd->add_option(
        "--hook", install.hooks,
        "which hook: post-commit (the default), pre-push (cocode-check's gate)");
    install_cmd->add_flag("--allow-tracked", install.allow_tracked,
                          "install even where git would see the files (a tracked hooks folder)");

    UninstallArgs uninstall;
    auto* uninstall_cmd =
        app.add_subcommand("uninstall", "remove cocode's hook and restore what it chained");
    uninstall_cmd->add_option("--repo", uninstall.repo,
                              "a folder inside the repository (default: .)");
    uninstall_cmd->add_option("--hook", uninstall.hooks, "which hook (default: all of cocode's)");

    StatusArgs status;
    auto* status_cmd = app.add_subcommand("status", "what is installed, where, and what it chains");
    status_cmd->add_option("--repo", status.repo, "a folder inside the repository (default: .)");
    status_cmd->add_flag("--json", status.json, "print JSON");

    auto* post_commit_cmd =
        app.add_subcommand("post-commit", "what git runs after a commit (through the hook)");

    std::string remote, remote_url;
    auto* pre_push_cmd = app.add_subcommand(
        "pre-push", "what git runs before a push (through the hook): cocode-check's gate");
    pre_push_cmd->add_option("remote", remote, "the remote's name");
    pre_push_cmd->add_option("url", remote_url, "the remote's URL");

    if (auto exit = cocode::tool::parse(app, argc, argv, "cocode-hook")) return *exit;
    return cocode::tool::run("cocode-hook", [&] {
        if (*install_cmd) return run_install(install);
        if (*uninstall_cmd) return run_uninstall(uninstall);
        if (*status_cmd) return run_status(status);
        if (*post_commit_cmd) return run_post_commit();
        if (*pre_push_cmd) return run_pre_push(remote);
        return 0;
    });
}
