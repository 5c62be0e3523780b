// A shell command run to its end into a log: how cocode runs the commands a repository or an
// agent wrote — setup commands (an environment's build, worktree_setup), key commands, verify
// commands. A `CommandRunner` decides what runs around the command; the one every caller is
// given (agent/confined.h) runs it in the sandbox behind the network's allowlist. Only the
// configuration's `"sandbox": "none"` gives the unconfined one, which is what it says.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "proc/spawn.h"

namespace cocode {

struct CommandRequest {
    std::string command;  // for `sh -c`
    std::filesystem::path cwd;
    std::vector<std::string> environment;  // the whole environment
    std::chrono::steady_clock::time_point deadline;
    std::filesystem::path log;     // stdout and stderr, appended (stderr only, when `out` is set)
    std::filesystem::path out;     // when set: stdout, appended here (a key command's answer)
    std::filesystem::path record;  // where its connections are recorded (an enclosed network)
    std::vector<OverlayMount> overlays;
    bool writes_cwd = true;  // false: it only reads its folder (a key command)
    // What else it writes (a merge in an agent's worktree: the worktree's git folder, the
    // objects and refs a commit needs).
    std::vector<std::filesystem::path> writable;
    // What else it reads that a sandbox keeps out of sight (an agent's own repository, among
    // the other runs' folders).
    std::vector<std::filesystem::path> readable;
};

struct CommandOutcome {
    int exit_code = 0;  // 128+N when killed by signal N
    bool timed_out = false;
    bool stopped = false;  // ended because a stop was asked (proc/interrupt.h): no verdict
    std::vector<std::string> blocked;  // hosts its network refused ("host:port")
};

using CommandRunner = std::function<Result<CommandOutcome>(const CommandRequest&)>;

// Runs `argv` (the command, or what wraps it) for `c`: its folder, overlays and log, with
// `environment`, in a session of its own, ended with its group (SIGTERM, 2 s, SIGKILL) at the
// deadline, or (SIGTERM, 1 s, SIGKILL) as soon as a stop is asked of this thread's work.
Result<CommandOutcome> run_to_log(const CommandRequest& c, const std::vector<std::string>& argv,
                                  const std::vector<std::string>& environment);

// The runner with nothing around the command: the host's files, processes and network. For
// `"sandbox": "none"`, and for what already runs inside a sandbox (the critic in an agent's).
CommandRunner unconfined_runner();

}  // namespace cocode
