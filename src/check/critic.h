// The check as a critic inside an agent's session (the Codali protocol's quality gate): the
// worktree as it stands — edits not yet committed included — judged by the same rules as the
// run's final check (scope, read-only paths, the verify commands), and the failures turned
// into reasons and fixes a model can act on. Nothing is committed: the worktree is judged
// through a commit no ref points at, so no hook runs and no branch moves. Its verify commands
// run as the final check's do, in a clean tree of that commit (made in the agent's own /tmp,
// with the run's environment copied in), inside the agent's own sandbox: what it left
// ignored or untracked in the worktree changes the critic's answer no more than the verdict.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "check/clean_tree.h"
#include "config/config.h"
#include "core/result.h"

namespace cocode::check {

struct CritiqueInput {
    std::filesystem::path worktree;
    std::string base;  // the run's base commit
    std::string marker;
    config::CheckConfig rules;         // the run's, from its seal
    std::filesystem::path report_dir;  // verify logs
    TreeRules tree;                    // the clean tree's setup and environment (the seal's)
};

struct Critique {
    bool pass = false;
    std::vector<std::string> reasons;          // "scope: outside the allowed paths: notes.txt"
    std::vector<std::string> suggested_fixes;  // "Address: …" with what would make it pass
    std::vector<std::string> touched_files;    // what differs from the base, as git sees it
};

Result<Critique> critique_worktree(const CritiqueInput& input);

}  // namespace cocode::check
