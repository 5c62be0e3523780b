// Routing by evidence (docs/report.md, "Routing by evidence"): which of the configured agents
// an issue gets, from what the scorecard says of each on the issue's kind of work. A pure
// decision, tabled in tests/unit/scorecard_test.cpp; `run` and `plan` ask it for each issue
// when `route.mode` is `evidence` and no `--agent` names the agents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/scorecard.h"
#include "config/config.h"

namespace cocode::check {

// What the scorecard says of one agent on one kind of work.
struct AgentEvidence {
    std::string agent;
    int judged = 0;
    int passed = 0;
    std::optional<double> cost_per_run;  // what one of its runs costs, when known
};

// Every agent's evidence on work of type `type` ("fix"; "" for every kind), summed over the
// sizes, from a scorecard by agent and kind.
std::vector<AgentEvidence> evidence_for(const Scorecard& by_agent_and_kind,
                                        const std::string& type);

struct RouteAsk {
    std::vector<std::string> agents;  // the candidates, as configured
    std::vector<AgentEvidence> evidence;
    std::string type;  // the issue's type of work; "" when its labels do not say
    long issue = 0;
    std::optional<double> budget_left;  // of today's budget.daily_usd, when one is set
};

struct Routed {
    std::vector<std::string> agents;  // in the candidates' order
    // One line with the figures: "raced claude and codex: 71% ±9 and 66% ±11 on fix".
    std::string why;
};

// An agent with fewer than `min_runs` judged runs of the type is still learning: it runs, so
// that the evidence comes. Among the others, ranked by the lower bound of their PASS rate's
// 95 % interval: the first alone when that bound is above every other's upper bound, else the
// first `race`. With probability `explore` (drawn from `seed` and the issue: the same seed,
// the same choice) one more of those not chosen. Past `budget_left`, at the runs' known costs,
// the explored one, then learners, then the last of the race are left out (one agent stays).
Routed route_by_evidence(const config::RouteConfig& route, const RouteAsk& ask);

}  // namespace cocode::check
