// Finding every process that belongs to a run, including the ones that tried to leave.
//
// An agent starts as the leader of its own process group; most of what it starts stays in
// that group. A daemon that calls setsid() or double-forks leaves the group, but it keeps
// its environment: every process of a run carries `JRUN_ID=<run id>` from the environment
// we gave the agent. A run's processes are its group, every live process whose environment
// holds that entry, and every descendant of either (an agent that scrubs its children's
// environment cannot hide them from the parent links). Zombies are already dead.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocode {

struct ProcessInfo {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgid = 0;
    char state = '?';  // from /proc/<pid>/stat: R, S, D, Z, T, …
};

// One process, from /proc/<pid>/stat; nullopt when there is none.
std::optional<ProcessInfo> process_info(pid_t pid);

// Every process visible in /proc (other users' included, their environment unread).
std::vector<ProcessInfo> list_processes();

// The live processes of a run (see above). `tag` is "JRUN_ID=<run id>".
std::vector<pid_t> run_processes(pid_t pgid, std::string_view tag);

// Whether any process (a zombie included) is left in the process group.
bool group_alive(pid_t pgid);

// This process's children, from /proc/self/task/*/children; nullopt when the kernel does not
// list them. For a child subreaper that is every adopted orphan too: a quick way to see that
// a run left nothing behind without reading every process's environment.
std::optional<std::vector<pid_t>> own_children();

// Sends `signal` to the group and to each of the run's processes; returns how many got it.
int signal_run(pid_t pgid, std::string_view tag, int signal);

// SIGTERM to all of a run's processes, up to `grace` for them to go, then SIGKILL to
// whatever is left, re-found each time. Blocks; for tools, not for the supervisor's loop.
void stop_run_blocking(pid_t pgid, std::string_view tag, std::chrono::milliseconds grace);

// Makes this process the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER): a daemon
// that double-forks away from an agent becomes our child, not init's, so we can wait for it.
bool become_subreaper();

}  // namespace cocode
