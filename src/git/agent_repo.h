// An agent's git storage of its own (docs/security.md, "The agent's repository"): for each
// run, a repository made fresh by cocode whose objects the agent writes and whose only branch
// it moves, borrowing the main repository's objects read-only (an alternate); its worktree's
// `.git` file names it. Nothing the agent writes there can change the main repository's
// objects or refs, or another run's. cocode takes the agent's branch back with a fetch over
// git's transport — every object id re-derived from its content, each object checked — into a
// quarantine ref first, the serving side run in the sandbox; it never runs git in the agent's
// repository on the host, nor reads its settings.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "proc/command_runner.h"

namespace cocode::git {

struct AgentRepo {
    std::filesystem::path git_dir;   // the agent's repository (cocode's to make, the agent's after)
    std::filesystem::path worktree;  // its worktree: `.git` there is a file naming git_dir
    std::string branch;              // its only branch ("cocode/12-claude")
};

// Makes `repo.git_dir` afresh (whatever was there is removed), for the worktree `repo.worktree`,
// borrowing the objects of the repository whose common git folder is `common`, its branch at
// `commit`. `checkout`: the worktree's files are checked out from it (a new worktree);
// otherwise only its index is (a worktree holding what the agent left, kept as it is).
Result<void> make_agent_repo(const std::filesystem::path& common, const AgentRepo& repo,
                             const std::string& commit, bool checkout);

// A git command (`sh -c`) in the agent's worktree as its own git would run it, through
// `runner` (the sandbox): the repository it names and its settings are the agent's, never
// read by cocode's git on the host. `writable`: what it may write (the worktree and the
// agent's repository, for a merge); empty, it writes nothing. What it printed, or why it failed.
Result<std::string> agent_git(const CommandRunner& runner, const std::filesystem::path& worktree,
                              const std::string& command, std::vector<std::string> environment,
                              std::vector<std::filesystem::path> writable = {},
                              std::vector<std::filesystem::path> readable = {});

// What the agent's branch's ref reads now in its repository (its loose ref, else its
// packed-refs), read as data: beneath `repo.git_dir` without following a link, a few KiB at
// most. A cheap look telling whether the branch may have moved, before taking it back; it
// decides nothing else. Empty when there is nothing to read.
std::string agent_branch_mark(const AgentRepo& repo);

// Takes the branch of the agent's repository `git_dir` back into the repository at
// `repo_dir`: fetched (`upload_pack` is the command that serves it, in the sandbox) with every
// object checked, into `refs/cocode/quarantine/<pair>`, then `refs/heads/<branch>` moved to it
// when it names a commit. The commit; nullopt when the agent's repository holds no such branch.
Result<std::optional<std::string>> take_agent_branch(const std::filesystem::path& repo_dir,
                                                     const std::filesystem::path& git_dir,
                                                     const std::string& branch,
                                                     const std::string& upload_pack);

}  // namespace cocode::git
