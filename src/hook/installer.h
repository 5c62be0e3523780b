// Installing cocode's hook into the hooks folder git really uses, chaining what was there,
// and restoring it exactly.
//
// What lands in the hooks folder (docs/hooks.md):
//   <name>                  a copy of the cocode-hook-shim binary
//   <name>.cocode-chained   the hook that was there before, byte for byte, mode included
//   cocode-hook.tool        the absolute path of the cocode-hook that installed it
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace cocode::hook {

// The hooks cocode-hook serves: post-commit records READY; pre-push is cocode-check's gate
// (the shim hands the hook's stdin to both cocode-hook and the chained hook).
inline const std::vector<std::string> kManagedHooks = {"post-commit", "pre-push"};

struct HooksLocation {
    std::filesystem::path hooks_dir;                 // absolute
    std::filesystem::path common_dir;                // absolute
    std::optional<std::filesystem::path> work_tree;  // absent for a bare repository
    std::optional<std::string> hooks_path_config;    // core.hooksPath, when set
    // Every linked worktree of this repository runs hooks from this same folder: false when
    // core.hooksPath is relative (resolved in each worktree) or per-worktree config
    // (extensions.worktreeConfig) could set it differently.
    bool shared_by_worktrees = true;
};

// Asks the git CLI (`rev-parse --git-path hooks`) so that core.hooksPath, linked worktrees
// and includes resolve exactly as they do when git runs a hook.
Result<HooksLocation> locate_hooks(const std::filesystem::path& repo_dir);

enum class InstallOutcome { installed, updated, unchanged };

struct InstallResult {
    InstallOutcome outcome = InstallOutcome::unchanged;
    std::optional<std::filesystem::path> chained;  // the original hook, kept and run after ours
};

struct InstallOptions {
    std::filesystem::path shim;  // the cocode-hook-shim binary to copy
    std::filesystem::path tool;  // the cocode-hook binary the shim calls
    // Install even when the files would land in the work tree where git sees them.
    bool allow_tracked = false;
};

Result<InstallResult> install_hook(const HooksLocation& where, const std::string& name,
                                   const InstallOptions& options);

enum class UninstallOutcome { removed, restored, not_installed };
Result<UninstallOutcome> uninstall_hook(const HooksLocation& where, const std::string& name);

enum class HookState {
    absent,     // nothing there
    installed,  // our shim, identical to the one we would install now
    outdated,   // our shim, another version
    foreign,    // someone else's hook
};

struct HookStatus {
    std::string name;
    HookState state = HookState::absent;
    std::optional<std::filesystem::path> chained;
};

struct HooksStatus {
    HooksLocation where;
    std::optional<std::filesystem::path> tool;  // recorded in cocode-hook.tool
    bool tool_exists = false;
    std::vector<HookStatus> hooks;
};

HooksStatus hooks_status(const HooksLocation& where, const std::filesystem::path& shim);

std::string_view state_name(HookState state);

}  // namespace cocode::hook
