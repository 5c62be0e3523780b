// cocode-dispatch agent (hidden): a built-in agent, started by the supervisor like any agent
// (its own process group, in the sandbox, stdout and stderr on the run folder's files). Its
// configuration is the one the run was dispatched under, read from the run's seal, where the
// agent cannot rewrite it; the run itself comes from the environment the dispatcher gave it.
#include "agent/builtin.h"
#include "commands.h"
#include "proc/environment.h"
#include "proc/process_tree.h"
#include "run/seal.h"

namespace cocode::dispatch_cli {

int run_agent(const AgentArgs& args) {
    auto seal = run::read_seal(args.repo, args.run).value_or_throw();
    config::Config config;
    if (seal && !seal->config_text.empty())
        config =
            config::parse_config(seal->config_text, run::seal_path(args.repo, args.run), args.repo)
                .value_or_throw();
    else
        config = config::load_config(args.repo).value_or_throw();
    const config::AgentConfig* agent = config.find_agent(args.agent);
    if (!agent)
        throw Failure(
            Error::usage("no agent '" + args.agent + "' in the configuration of run " + args.run));
    auto context = agent::context_from_environment(current_environment()).value_or_throw();
    auto builtin = agent::make_builtin_agent(*agent).value_or_throw();
    // Orphans of the commands it runs come back to it, to be ended and reaped.
    become_subreaper();
    return builtin->execute(context);
}

}  // namespace cocode::dispatch_cli
