#include "proc/spawn.h"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>

namespace cocode {

SpawnAttributes::SpawnAttributes(bool own_session) {
    posix_spawnattr_init(&attr_);
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &empty);
    // Everything back to default (SIGKILL/SIGSTOP cannot be set and are ignored by glibc).
    posix_spawnattr_setsigdefault(&attr_, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    // A session of its own makes it the leader of its own process group too, and leaves it
    // without a controlling terminal: it cannot open /dev/tty and push input into the user's
    // shell (TIOCSTI), nor be stopped by the terminal's signals.
    if (own_session) flags |= POSIX_SPAWN_SETSID;
    posix_spawnattr_setflags(&attr_, flags);
}

SpawnAttributes::~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }

void close_inherited_fds(posix_spawn_file_actions_t* actions) {
    posix_spawn_file_actions_addclosefrom_np(actions, 3);
}

Result<pid_t> spawn_in_own_group(const SpawnSpec& spec) {
    if (spec.argv.empty()) return Error::usage("spawn: empty command line");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, spec.stdin_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, spec.stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, spec.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
    close_inherited_fds(&actions);

    std::vector<char*> args;
    for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    for (const auto& e : spec.environment) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);

    SpawnAttributes attributes(true);
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, spec.argv[0].c_str(), &actions, attributes.get(), args.data(),
                           env.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Error::from_errno("cannot start " + spec.argv[0], rc);
    return pid;
}

}  // namespace cocode
