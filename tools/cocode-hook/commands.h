// cocode-hook's subcommands, one file each. Each returns the process exit code; a
// cocode::Failure thrown from one is reported by main.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cocode::hook_cli {

struct InstallArgs {
    std::filesystem::path repo = ".";
    std::vector<std::string> hooks;  // default: post-commit
    bool allow_tracked = false;
};
int run_install(const InstallArgs& args);

struct UninstallArgs {
    std::filesystem::path repo = ".";
    std::vector<std::string> hooks;  // default: every hook cocode installed
};
int run_uninstall(const UninstallArgs& args);

struct StatusArgs {
    std::filesystem::path repo = ".";
    bool json = false;
};
int run_status(const StatusArgs& args);

// What git runs (through the shim) after each commit.
int run_post_commit();

// What git runs (through the shim) before a push: cocode-check's gate (docs/check.md).
// `lines` are the hook's stdin: "<local ref> <local sha> <remote ref> <remote sha>".
int run_pre_push(const std::string& remote);

// This executable's absolute path, and the shim that ships beside it.
std::filesystem::path self_executable();
std::filesystem::path shim_executable();

}  // namespace cocode::hook_cli
