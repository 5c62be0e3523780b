// `cocode-dispatch plan`: the runs a batch would make, as a GitHub Actions matrix, so that a
// workflow fans one issue out to a job per agent (`strategy.matrix: ${{ fromJSON(...) }}`).
// Only numbers and agent names (from the repository's own configuration) go into it: no issue
// text, which is untrusted and would reach job names and scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "github/types.h"

namespace cocode::scale {

struct PlanEntry {
    long issue = 0;
    std::string agent;
    bool plan_round = false;  // a plan round (docs/review.md, "Plans"): the job runs `run --plan`
    std::string route;        // why routing by evidence chose this agent (check/route.h)
};

// One entry per (issue, agent), issues in the order given, agents in the order chosen; with
// `plan_rounds`, each a plan round.
std::vector<PlanEntry> make_plan(const std::vector<github::Issue>& issues,
                                 const std::vector<config::AgentConfig>& agents,
                                 bool plan_rounds = false);

// {"include": [{"issue": 7, "agent": "claude"}, …]}: what `fromJSON` turns into a matrix; a
// plan round's entry also has "plan": true, a routed one "route": why.
nlohmann::json matrix(const std::vector<PlanEntry>& plan);

// Inside Actions: `matrix` (the above, one line), `count` (entries; GitHub refuses an empty
// matrix, so a workflow tests `count != '0'`), `issues` (a JSON array of the issue numbers,
// for the job that compares the agents) and `plan` ("true" when the runs are plan rounds,
// which are not compared) appended to $GITHUB_OUTPUT. Nothing outside Actions.
Result<void> write_plan_outputs(const std::vector<PlanEntry>& plan);

}  // namespace cocode::scale
