#include "proc/command_runner.h"

#include <algorithm>

#include "proc/interrupt.h"

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
    // Its deadline, or a stop asked of this thread's work (proc/interrupt.h), looked for
    // every 50 ms: either ends its group.
    for (;;) {
        const auto now = std::chrono::steady_clock::now();
        if (exited_by(*pid, std::min(c.deadline, now + std::chrono::milliseconds(50)))) break;
        if (stop_asked()) {
            outcome.stopped = true;
            break;
        }
        if (std::chrono::steady_clock::now() >= c.deadline) {
            outcome.timed_out = true;
            break;
        }
    }
    outcome.exit_code = end_group(*pid, std::chrono::seconds(outcome.stopped ? 1 : 2));
    return outcome;
}

CommandRunner unconfined_runner() {
    return
        [](const CommandRequest& c) { return run_to_log(c, shell_argv(c.command), c.environment); };
}

}  // namespace cocode
