// cocode-dispatch clean: remove runs' worktrees and branches, and what a start cut short left
// half-made; never work that exists nowhere else unless --force (src/agent/clean.h).
#include <cstdio>

#include "agent/clean.h"
#include "agent/confined.h"
#include "commands.h"
#include "core/terminal_text.h"
#include "views.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

int run_clean(const CleanArgs& args) {
    if (!args.all && !args.which)
        throw Failure(Error::usage("clean: name a RUN or an ISSUE, or give --all"));
    if (args.all && args.which) throw Failure(Error::usage("clean: --all takes no RUN or ISSUE"));
    Workspace ws = open_workspace(false);
    auto runs = select_runs(ws, args.all ? std::nullopt : args.which);
    // --stop: what is still going is stopped first, as `stop` stops it; then cleaned.
    if (args.stop && !stop_and_wait(ws, runs, "terminal").empty())
        runs = select_runs(ws, args.all ? std::nullopt : args.which);
    auto all = args.all ? runs : select_runs(ws, std::nullopt);
    agent::CleanOptions options;
    options.force = args.force;
    options.worktree_root = config::worktree_root_of(ws.config, ws.root);
    options.branch_prefix = ws.config.branch_prefix;
    options.runner = agent::confined_runner(ws.config, ws.root);
    int kept = 0, removed = 0;
    for (const auto& step : agent::clean(ws.root, runs, all, options)) {
        if (step.removed) {
            std::printf("removed %s\n", terminal_safe_line(step.what).c_str());
            ++removed;
        } else {
            std::fprintf(stderr, "cocode-dispatch: %s: %s\n", terminal_safe_line(step.what).c_str(),
                         terminal_safe_line(step.why).c_str());
            ++kept;
        }
    }
    if (removed == 0 && kept == 0) std::printf("nothing to clean\n");
    return kept > 0 ? static_cast<int>(ExitCode::general) : 0;
}

}  // namespace cocode::dispatch_cli
