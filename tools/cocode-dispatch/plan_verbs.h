// `continue --approve | --revise | --reject` (docs/review.md, "Plans").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "batch.h"
#include "commands.h"
#include "github/types.h"
#include "run/run_folder.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

// What `continue` found before it knew the plan verb: the pair's newest run per agent, the
// issue, and the batch's flags.
struct PlanBatch {
    const Workspace& ws;
    std::optional<config::Duration> timeout;
    RunArgs run_args;
    issues::IssueSource* source = nullptr;
    github::Issue issue;
    std::map<std::string, const run::RunRecord*> newest;
};

// The agents of `newest` whose newest round is a plan round (among those named; with --approve
// --hash, the one whose plan has that hash, else all of them, for the refusal to name).
std::vector<std::string> agents_with_plans(
    const ContinueArgs& args, const std::map<std::string, const run::RunRecord*>& newest);

// Approves, revises or rejects; the batch's exit code (0 for a rejection). A refusal is a usage
// error saying why, and with --comment, one reply on the issue.
int continue_plan(const ContinueArgs& args, const PlanBatch& batch);

}  // namespace cocode::dispatch_cli
