// The reference plan agent (examples/agents/plan-agent.sh) and the rules the plan tests give it:
// it plans src/feature.txt and a verify command `test -s …` (and one no prefix allows); the
// configuration allows src/**, verifies `test -d src` and lets plans add `test -s` commands.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cocode::test {

// The configuration's `agents` (one, "planner"), `check` and `plan`, to merge into a test's.
inline nlohmann::json plan_agent_config() {
    return {{"agents",
             {{"planner",
               {{"command", std::string(COCODE_SOURCE_DIR) + "/examples/agents/plan-agent.sh"}}}}},
            {"check",
             {{"allowed_paths", {"src/**"}},
              {"verify", {{{"name", "src exists"}, {"run", "test -d src"}}}}}},
            {"plan", {{"bind_verify", {"test -s"}}}}};
}

}  // namespace cocode::test
