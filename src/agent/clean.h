// Removing what runs left: their worktrees and branches, and what a start cut short left
// half-made. Nothing is removed that cocode cannot prove is its own and that holds work that
// exists nowhere else (docs/runs.md, "clean").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "proc/command_runner.h"
#include "run/run_folder.h"

namespace cocode::agent {

// One thing clean did, or would not do, and why: what the tool prints.
struct CleanStep {
    std::string what;  // "worktree /repo/.cocode/worktrees/7-claude", "branch cocode/7-claude"
    bool removed = false;
    std::string why;  // when kept: "holds 3 commits on no other branch and not pushed; kept…"
};

struct CleanOptions {
    bool force = false;  // drop unpushed commits and uncommitted changes too
    // Where the configuration puts worktrees (absolute), and its branch prefix: a run's
    // worktree and branch are derived from them and its seal, never taken from its
    // run-info.yaml, which the agent could rewrite.
    std::filesystem::path worktree_root;
    std::string branch_prefix = "cocode/";
    // What asks the agent's own git whether its worktree holds uncommitted work (the sandbox,
    // agent/confined.h): a worktree's git is the agent's, never run on the host. Unset: a
    // worktree is kept unless `force`, since nothing can tell.
    CommandRunner runner;
    // Run folders that never got their run-info.yaml are removed once they are this old (a
    // younger one may be a start still under way).
    std::chrono::seconds half_made_age{60};
};

// Cleans `runs` (their worktrees and branches; their run folders stay, the record), then the
// half-made state of the repository's runs: run folders without run-info, a worktree whose
// `.git` is gone, stale entries in `.git/worktrees/`. A run's worktree and branch are the ones
// its seal names, in the configured worktree root; a run without a seal keeps its own. A branch is
// deleted only when every commit it has after its base provably is on a remote (or with `force`); a
// run still going is never touched. Every step says whether it removed anything, checked after.
std::vector<CleanStep> clean(const std::filesystem::path& repo_root,
                             const std::vector<run::RunRecord>& runs,
                             const std::vector<run::RunRecord>& all_runs,
                             const CleanOptions& options);

}  // namespace cocode::agent
