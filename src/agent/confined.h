// How cocode runs what an agent or a repository wrote (docs/security.md, "The sandbox"): the
// agent itself (agent/prepare), and every command that runs its code or a repository's —
// verify commands, worktree_setup, an environment's setup and key commands — in the sandbox
// (proc/sandbox.h) on the folder it works in, with its own HOME and /tmp, the host's secrets
// out of sight, no credentials in its environment, and, when the network is enclosed, behind
// an egress proxy of its own whose connections go to the command's record. Where no sandbox
// can be made these refuse with one line; only the configuration's `"sandbox": "none"` runs
// them without one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/presets.h"
#include "git/agent_repo.h"
#include "net/allowlist.h"
#include "proc/command_runner.h"
#include "proc/sandbox.h"

namespace cocode::agent {

// What every sandbox of the repository at `repo_root` shares. Reading is denied by default
// (docs/security.md, "The sandbox"): of the host only the system's folders show
// (proc/sandbox.h, host_folders_out_of_sight); of the main repository only its objects, which
// the agents' repositories and the clean trees borrow (not its settings, refs or files); then
// what its child must read wherever it lies (the toolchains PATH names, the environments'
// store, cocode's own programs, the files `environment` names: a CA bundle) and what the
// configuration names (`readable`). What it must not see stays hidden (the host's secrets,
// every coding CLI's configuration and login under the user's HOME) and what it must never
// write is protected (the store, the seals). Callers add what it writes and reads of its own
// (its worktree, its run folder), its HOME and its /tmp.
// `worktree_root`, where the pairs' worktrees are, is apart too (made now, as the others).
SandboxPlan repository_sandbox(const std::filesystem::path& repo_root,
                               const std::vector<std::string>& environment,
                               const std::vector<std::filesystem::path>& hidden_first = {},
                               const std::filesystem::path& worktree_root = {},
                               const std::vector<std::filesystem::path>& readable = {});

// The user's HOME, as the dispatcher has it ("" when unset).
std::filesystem::path user_home();

// What of a user's HOME a sandboxed process must not read: credentials (proc/sandbox.h's
// host_secrets) and every coding CLI's own configuration and state but `own`'s.
std::vector<std::filesystem::path> secrets_in_home(const std::filesystem::path& home,
                                                   const config::CliPreset* own);

// What a sandboxed CLI agent takes from the user's HOME into its own (`home`): its preset's
// configuration and login (`config_paths`), without the CLI's record of past sessions and
// history in other folders (projects, sessions, logs, caches). Links are copied as links,
// never followed.
Result<void> copy_cli_settings(const config::CliPreset& cli, const std::filesystem::path& from_home,
                               const std::filesystem::path& home);

// The program the configuration has make its sandboxes: `"sandbox": "bwrap"` bubblewrap, `auto`
// cocode's own where it can be made (proc/sandbox.h); nullopt for `"sandbox": "none"`.
std::optional<SandboxMaker> sandbox_maker(const config::Config& config);

// The agent's branch taken back into the main repository (git::take_agent_branch), the side
// that serves it — git-upload-pack in the agent's repository — run in a sandbox `maker` makes
// (nullopt only for a run under `"sandbox": "none"`, where it runs as it is). The branch's
// commit; nullopt when the agent's repository has no such branch.
Result<std::optional<std::string>> take_back(std::optional<SandboxMaker> maker,
                                             const std::filesystem::path& repo_root,
                                             const git::AgentRepo& agent_repo);

// The one line that refuses to run `what` (an agent's code) where no sandbox can be made.
std::string no_sandbox_refusal(const std::string& what, const SandboxProbe& probe);

// The runner of every command that runs a repository's or an agent's code (setup, key
// commands, verify): in the sandbox, its folder writable (unless the request says it only
// reads it), a HOME and a /tmp of its own made for it and thrown away after; when the network
// is enclosed, behind a proxy allowing `allow` (a run's own allowlist) when given, else the
// ecosystems its folder shows it uses (net::ecosystems_used) and network.allow.
// `around`: what stays out of its sight around the repository, and what of it comes back
// read-only (a replay's main repository hidden, its hidden tests shown to its verify commands).
struct Surroundings {
    std::vector<std::filesystem::path> hidden_first;
    std::vector<std::filesystem::path> visible;
};
CommandRunner confined_runner(const config::Config& config, const std::filesystem::path& repo_root,
                              std::optional<net::Allowlist> allow = std::nullopt,
                              Surroundings around = {});

}  // namespace cocode::agent
