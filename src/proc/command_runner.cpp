#include "proc/command_runner.h"

namespace cocode {

Result<CommandOutcome> run_to_log(const CommandRequest& c, const std::vector<std::string>& argv,
                                  const std::vector<std::string>& environment) {
    ChildOptions child;
    child.argv = argv;
    child.cwd = c.cwd;
    child.environment = environment;
    child.out = ChildStream::append_to(c.out.empty() ? c.log : c.out);
    child.err = ChildStream::append_to(c.log);
    child.group = ChildOptions::Group::own_session;
    child.overlays = c.overlays;
    auto pid = start_child(child);
    if (!pid) return std::move(pid).error();
    CommandOutcome outcome;
    outcome.timed_out = !exited_by(*pid, c.deadline);
    outcome.exit_code = end_group(*pid, std::chrono::seconds(2));
    return outcome;
}

CommandRunner unconfined_runner() {
    return
        [](const CommandRequest& c) { return run_to_log(c, shell_argv(c.command), c.environment); };
}

}  // namespace cocode
