// Starting an agent: its own session and process group (no controlling terminal), stdin from a file (/dev/null or the prompt),
// stdout and stderr opened straight onto the run folder's files (we copy no bytes), cwd =
// its worktree, exactly the environment given, and a clean signal state whatever the
// dispatcher blocks.
#pragma once

#include <spawn.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace cocode {

// posix_spawn attributes with default signal dispositions and an empty signal mask (a
// supervisor blocks SIGCHLD/SIGINT/SIGTERM to wait for them; its children must not inherit
// that), optionally in a new session (and so a new process group, without a terminal).
class SpawnAttributes {
  public:
    explicit SpawnAttributes(bool own_session);
    ~SpawnAttributes();
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
    const posix_spawnattr_t* get() const { return &attr_; }

  private:
    posix_spawnattr_t attr_;
};

// Closes, in the child, every descriptor above stderr: whatever this process holds open
// (sockets, locks, a log, inotify) never reaches what it starts, whether or not it was opened
// close-on-exec.
void close_inherited_fds(posix_spawn_file_actions_t* actions);

struct SpawnSpec {
    std::vector<std::string> argv;  // argv[0] already resolved to a path
    std::vector<std::string> environment;
    std::filesystem::path cwd;
    std::filesystem::path stdin_path = "/dev/null";
    std::filesystem::path stdout_path;  // appended to (a restart keeps what came before)
    std::filesystem::path stderr_path;
};

// The child's pid; it leads its own session and process group (sid == pgid == pid).
Result<pid_t> spawn_in_own_group(const SpawnSpec& spec);

}  // namespace cocode
