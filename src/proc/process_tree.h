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
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocode {

struct ProcessInfo {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgid = 0;
    char state = '?';         // from /proc/<pid>/stat: R, S, D, Z, T, …
    std::uint64_t start = 0;  // when it started, in clock ticks since boot (stat field 22)
};

// A process as it was when cocode recorded it: a pid alone names whatever process got that
// number last; with its start time (and the boot it happened in) it names one process —
// unless the number went to another process within the same clock tick (10 ms), which only
// a forced ns_last_pid or a tiny pid space can do. Where the kernel has pidfs (Linux 6.9+)
// the stamp also holds the process's pidfs inode, never given to two processes of a boot.
struct ProcessStamp {
    pid_t pid = 0;
    std::uint64_t start = 0;  // 0: not known
    std::uint64_t ino = 0;    // its pidfs inode; 0: not known (no pidfs)
};

// This boot's id (/proc/sys/kernel/random/boot_id); "" when it cannot be read.
std::string boot_id();

// The stamp of a live process now; pid 0 when there is none.
ProcessStamp stamp_of(pid_t pid);

// The pidfs inode of a live process; 0 when there is none or the kernel has no pidfs.
std::uint64_t pidfs_inode(pid_t pid);

// Is this the very process stamped (alive, not a zombie, same start time, same pidfs inode
// when both are known)? A stamp without a
// start time proves nothing and is false, unless `legacy_pid_only` (records written before
// start times were kept), when a live pid is taken as it.
bool is_alive(const ProcessStamp& stamp, bool legacy_pid_only = false);

// Everything that proves a process belongs to a run: its process group, while the group
// provably is still the one the run's agent led (the leader alive with its recorded start
// time, or the leader gone but its group not yet empty: a pid is not handed out again while
// a group of that number exists), and the run's tag in a process's environment.
struct RunMarks {
    ProcessStamp leader;  // the agent (or its sandbox), the leader of the group
    std::string tag;      // "JRUN_ID=<run id>"
};

// Whether the run's group is still provably the run's (see above).
bool group_is_ours(const ProcessStamp& leader);

// One process, from /proc/<pid>/stat; nullopt when there is none.
std::optional<ProcessInfo> process_info(pid_t pid);

// Every process visible in /proc (other users' included, their environment unread).
std::vector<ProcessInfo> list_processes();

// The live processes of a run (see above): its group when it is still the run's, every
// process carrying the tag, and their descendants.
std::vector<pid_t> run_processes(const RunMarks& marks);

// Whether any process (a zombie included) is left in the process group.
bool group_alive(pid_t pgid);

// This process's children, from /proc/self/task/*/children; nullopt when the kernel does not
// list them. For a child subreaper that is every adopted orphan too: a quick way to see that
// a run left nothing behind without reading every process's environment.
std::optional<std::vector<pid_t>> own_children();

// Sends `signal` to the run's group (when it is still the run's) and to each of the run's
// processes; returns how many got it. Nothing else is ever signalled.
int signal_run(const RunMarks& marks, int signal);

// SIGTERM to all of a run's processes, up to `grace` for them to go, then SIGKILL to
// whatever is left, re-found each time. Blocks; for tools, not for the supervisor's loop.
void stop_run_blocking(const RunMarks& marks, std::chrono::milliseconds grace);

// Makes this process the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER): a daemon
// that double-forks away from an agent becomes our child, not init's, so we can wait for it.
bool become_subreaper();

}  // namespace cocode
