#include "scale/plan.h"

#include <algorithm>
#include <set>

#include "check/actions.h"
#include "core/terminal_text.h"

namespace cocode::scale {

std::vector<PlanEntry> make_plan(const std::vector<github::Issue>& issues,
                                 const std::vector<config::AgentConfig>& agents, bool plan_rounds) {
    std::vector<PlanEntry> plan;
    for (const auto& issue : issues)
        for (const auto& agent : agents)
            plan.push_back({issue.number, agent.name, plan_rounds, ""});
    return plan;
}

nlohmann::json matrix(const std::vector<PlanEntry>& plan) {
    nlohmann::json include = nlohmann::json::array();
    for (const auto& entry : plan) {
        nlohmann::json item = {{"issue", entry.issue}, {"agent", entry.agent}};
        if (entry.plan_round) item["plan"] = true;
        if (!entry.route.empty()) item["route"] = entry.route;
        include.push_back(std::move(item));
    }
    return {{"include", include}};
}

Result<void> write_plan_outputs(const std::vector<PlanEntry>& plan) {
    if (!in_github_actions()) return {};
    nlohmann::json numbers = nlohmann::json::array();
    std::set<long> seen;
    for (const auto& entry : plan)
        if (seen.insert(entry.issue).second) numbers.push_back(entry.issue);
    const bool plans = std::any_of(plan.begin(), plan.end(),
                                   [](const PlanEntry& entry) { return entry.plan_round; });
    for (const auto& [name, value] :
         {std::pair<std::string, std::string>{"matrix", matrix(plan).dump()},
          {"count", std::to_string(plan.size())},
          {"issues", numbers.dump()},
          {"plan", plans ? "true" : "false"}})
        if (auto written = check::append_actions_output(name, value); !written) return written;
    return {};
}

}  // namespace cocode::scale
