// How setup commands run (environment/store.h's SetupRunner) — an environment's build, a
// run's worktree_setup, and worktree_setup again in a check's clean tree — as an agent runs:
// in the sandbox when the configuration and this machine allow it (its worktree-like folder
// writable, the repository read-only, the user's credentials hidden), and, when the network is
// enclosed, behind an egress proxy of their own whose connections go to the command's record.
// A setup command runs code the repository (or an agent's lockfile) names: it gets no more
// than an agent does.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "config/config.h"
#include "config/presets.h"
#include "environment/store.h"
#include "net/allowlist.h"

namespace cocode::agent {

// What the setup may reach when its network is enclosed: `allow` when given (a run's own
// allowlist), else the ecosystems its folder shows it uses (net::ecosystems_used) and
// network.allow.
environment::SetupRunner setup_runner(const config::Config& config,
                                      const std::filesystem::path& repo_root,
                                      std::optional<net::Allowlist> allow = std::nullopt);

// What of a user's HOME a sandboxed process must not read: credentials (ssh, git, gh,
// .netrc) and every coding CLI's own configuration and state but `own`'s.
std::vector<std::filesystem::path> secrets_in_home(const std::filesystem::path& home,
                                                   const config::CliPreset* own);

}  // namespace cocode::agent
