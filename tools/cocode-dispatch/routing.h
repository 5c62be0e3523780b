// Routing by evidence for `run` and `plan` (check/route.h): with `route.mode` `evidence` and no
// agents named, each issue gets the agents the scorecard of this clone's runs trusts for its
// kind of work (its labels' type; every kind when they say none).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "check/route.h"
#include "config/config.h"
#include "github/api.h"
#include "github/types.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

// Per issue, the agents chosen of `agents` and why; empty when routing is not asked for (the
// configuration's `all`, or `named` agents). Each choice is said as a notice. `published`
// (the action's plan job, on a runner with no run folders): the runs whose verdicts were
// published on the repository's issues in the last 180 days count too (check/published.h).
std::map<long, check::Routed> route_issues(const Workspace& ws,
                                           const std::vector<github::Issue>& issues,
                                           const std::vector<config::AgentConfig>& agents,
                                           const std::vector<std::string>& named,
                                           github::GitHub* published = nullptr);

}  // namespace cocode::dispatch_cli
