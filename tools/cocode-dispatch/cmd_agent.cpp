// cocode-dispatch agent (hidden): a built-in agent, started by the supervisor like any agent
// (its own process group, in the sandbox, stdout and stderr on the run folder's files). Its
// configuration is the one the run was dispatched under, read from the run's seal, where the
// agent cannot rewrite it; the run itself comes from the environment the dispatcher gave it.
#include <cstdio>

#include "agent/builtin.h"
#include "check/critic.h"
#include "check/run_check.h"
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
    // A codali session's critic: the run's own check rules, base and marker, from the seal,
    // applied to the worktree as it stands (check/critic.h).
    agent::Critic critic;
    if (seal && !seal->base_commit.empty()) {
        check::CritiqueInput input;
        input.base = seal->base_commit;
        input.marker = context.ready_marker;
        input.rules = config.check;
        critic = [input, config, repo = args.repo, key = seal->environment_key,
                  folder = context.run_folder](
                     const std::filesystem::path& worktree,
                     int round) mutable -> Result<protocol::CriticResult> {
            input.worktree = worktree;
            auto tree = check::tree_rules_for(config, worktree, repo, input.base, key);
            if (!tree) return std::move(tree).error();
            input.tree = std::move(*tree);
            input.report_dir = folder / "critic" / ("round-" + std::to_string(round));
            std::error_code ec;
            std::filesystem::create_directories(input.report_dir, ec);
            auto judged = check::critique_worktree(input);
            if (!judged) return std::move(judged).error();
            protocol::CriticResult out;
            out.pass = judged->pass;
            out.reasons = std::move(judged->reasons);
            out.suggested_fixes = std::move(judged->suggested_fixes);
            out.touched_files = std::move(judged->touched_files);
            return out;
        };
    }
    // A critic asked for that cannot judge is said, never silently skipped (the session would
    // hand in without the check it was promised).
    if (!critic && agent->type == config::AgentType::codali && agent->chat &&
        agent->chat->critic_rounds > 0)
        std::fprintf(stderr,
                     "cocode: run %s has no seal here to judge by: its critic does not run "
                     "(critic_rounds %d)\n",
                     args.run.c_str(), agent->chat->critic_rounds);
    auto builtin = agent::make_builtin_agent(*agent, std::move(critic)).value_or_throw();
    // Orphans of the commands it runs come back to it, to be ended and reaped.
    become_subreaper();
    return builtin->execute(context);
}

}  // namespace cocode::dispatch_cli
