// cocode-dispatch plan: the (issue, agent) pairs `run` would make, as the matrix a workflow fans
// out over, and as step outputs inside GitHub Actions. It starts nothing and writes nothing in
// the repository.
#include <cstdio>

#include "commands.h"
#include "scale/plan.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

int run_plan(const PlanArgs& args) {
    if (args.issues.empty() && args.labels.empty())
        throw Failure(Error::usage("plan: name at least one ISSUE or a --label"));
    Workspace ws = open_workspace();
    const auto agents = config::choose_agents(ws.config, args.agents).value_or_throw();
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    const auto issues = issues::select_issues(*source, args.issues, args.labels).value_or_throw();
    const auto plan = scale::make_plan(issues, agents);

    if (auto written = scale::write_plan_outputs(plan); !written)
        throw Failure(Error::general("$GITHUB_OUTPUT: " + written.error().message));
    if (args.json) {
        std::printf("%s\n", scale::matrix(plan).dump().c_str());
    } else {
        for (const auto& entry : plan) std::printf("#%ld\t%s\n", entry.issue, entry.agent.c_str());
    }
    // An empty plan is an outcome, not a failure: the workflow skips its matrix on count 0.
    if (plan.empty())
        notice("nothing to plan: no open issues with those labels");
    else
        notice(std::to_string(plan.size()) + (plan.size() == 1 ? " run: " : " runs: ") +
               std::to_string(issues.size()) + (issues.size() == 1 ? " issue × " : " issues × ") +
               std::to_string(agents.size()) + (agents.size() == 1 ? " agent" : " agents"));
    return 0;
}

}  // namespace cocode::dispatch_cli
