// The one way cocode starts a process (the hook's static shim aside: see its file). A child
// gets exactly the descriptors it is given — stdin, stdout and stderr as asked, optionally a
// descriptor 3, nothing else of ours (sockets, locks, logs, inotify), opened close-on-exec or
// not — default signal dispositions and an empty signal mask whatever the parent blocks, and,
// when asked, a process group or a session of its own so that it can be ended as a group.
// Everything that starts processes — run_command, the supervisor's agents, verify commands,
// the built-in agents' shell, the detached dispatcher — says what it wants here. A child that
// needs overlay mounts (a prepared environment's copy-on-write view, environment/view.h) is
// started through tools/cocode-overlay, which makes them in a mount namespace of the child's
// own and becomes the child.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace cocode {

// How one of a child's standard descriptors is set up.
class ChildStream {
  public:
    static ChildStream null() { return ChildStream(Kind::null, {}, -1); }  // /dev/null
    static ChildStream read_from(std::filesystem::path file) {
        return ChildStream(Kind::read, std::move(file), -1);
    }
    // Created 0644 when missing; appended to, so that a restart keeps what came before.
    static ChildStream append_to(std::filesystem::path file) {
        return ChildStream(Kind::append, std::move(file), -1);
    }
    // One of ours (a pipe's end), duplicated onto the child's.
    static ChildStream descriptor(int fd) { return ChildStream(Kind::fd, {}, fd); }

    enum class Kind { null, read, append, fd };
    Kind kind() const { return kind_; }
    const std::filesystem::path& file() const { return file_; }
    int fd() const { return fd_; }

  private:
    ChildStream(Kind kind, std::filesystem::path file, int fd)
        : kind_(kind), file_(std::move(file)), fd_(fd) {}
    Kind kind_;
    std::filesystem::path file_;
    int fd_;
};

// One overlay mount of a child's own: `lower` (read-only, never written) under `upper`, which
// takes every change, seen at `target`. `work` is overlayfs's scratch folder, on the file
// system of `upper`.
struct OverlayMount {
    std::filesystem::path lower, upper, work, target;
};

struct ChildOptions {
    std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
    std::optional<std::filesystem::path> cwd;
    // When set, the child's whole environment ("NAME=value" entries); else ours.
    std::optional<std::vector<std::string>> environment;
    ChildStream in = ChildStream::null();
    ChildStream out = ChildStream::null();
    ChildStream err = ChildStream::null();
    std::optional<int> fd3;  // one of ours, passed on as the child's descriptor 3
    enum class Group {
        ours,         // in our process group: the terminal's signals reach it as they reach us
        own_group,    // a group of its own (pgid == pid), so it can be ended as one
        own_session,  // a session of its own too: no controlling terminal (an agent cannot
                      // push input into the user's shell with TIOCSTI, nor be stopped by it)
    };
    Group group = Group::ours;
    // Mounted in a mount namespace of the child's own (private: nothing reaches the host's),
    // in order, before it starts, by cocode-overlay (beside this program, or in
    // ../libexec/cocode/); gone when its last process ends. Without the capability to make
    // one (a user, or root in a container): in a user namespace of its own too, which maps
    // only our own user and group (the child sees its files as ours, and holds no capability
    // once it runs), with overlayfs's `userxattr`. A `cwd` inside a target is the overlay.
    std::vector<OverlayMount> overlays;
};

// Starts the child: its pid. A program that cannot be found is ExitCode::missing_dependency; an
// overlay the kernel refuses ends the child with exit 126 and one line on its stderr. Its
// starter waits for it (wait_child, end_group): until then a subreaper's sweep for adopted
// orphans (reap_orphans, orphans_to_end) leaves it alone, whatever thread started it.
// A sandbox maker asked to die with its parent is told that its parent is this process
// (dying_with).
Result<pid_t> start_child(const ChildOptions& options);

// A program of cocode's, beside this one (or in ../libexec/cocode/, as the package lays them
// out), else in PATH; empty where there is none.
std::filesystem::path program_beside_us(const std::string& name);

// The command line that starts `argv` (its program found at `program`) as a child of `parent`:
// a sandbox maker asked to die with its parent (`--die-with-parent` among its options) is told
// who that parent is, so that it ends before its program runs if the parent died before the
// maker asked the kernel for the signal — which the kernel then never sends (cocode-sandbox
// `--parent-pid`; bubblewrap, which has no such option, started by cocode-sandbox
// `--exec-with-parent`, when one lies beside this program: `program` becomes that). Any other
// command line as it is.
std::vector<std::string> dying_with(pid_t parent, const std::vector<std::string>& argv,
                                    std::filesystem::path& program);

// waitpid for a child start_child made (`options`: 0 or WNOHANG): its pid once it has been
// reaped, 0 when it has not exited yet (WNOHANG), -1 with errno on an error.
pid_t wait_child(pid_t pid, int* status, int options = 0);

// For a subreaper: reaps the children that ended which no start_child made — orphans of its
// agents it adopted — never a child another thread is waiting for (a verify command, a git
// run by a judge running beside a supervisor). Each reaped pid goes to `reaped`.
void reap_orphans(const std::function<void(pid_t pid, int status)>& reaped = nullptr);
// The children alive now that no start_child made: the adopted orphans, for a subreaper to end.
std::vector<pid_t> orphans_to_end();

// Whether this process can give a child overlay mounts with files at `scratch` (a folder on
// the file system its upper folders will be on): "" when it can, else what the kernel said
// and what would fix it. Tried for real (a child that mounts one), once per file system.
std::string overlay_refused(const std::filesystem::path& scratch);

// A command line for the shell: how every shell command cocode runs is started (verify
// commands, setup commands, the built-in agents' commands): `sh -c COMMAND`, sh as PATH finds
// it, else /bin/sh.
std::vector<std::string> shell_argv(const std::string& command);

// The exit code of a wait status: 128+N for a signal N, as a shell reports it.
int exit_code_of(int wait_status);

// Waits until `pid` (a child) has exited or `deadline` passes; true when it has exited. It is
// left a zombie, so that its pid, and so its group id, cannot be reused before what is left of
// its group has been ended (end_group).
bool exited_by(pid_t pid, std::chrono::steady_clock::time_point deadline);

// Ends a child that leads its own group, and whatever of the group is left: SIGTERM to the
// group when it has not exited, `grace` to go, then SIGKILL to the group; reaps it. Its exit
// code (exit_code_of).
int end_group(pid_t pid, std::chrono::milliseconds grace);

}  // namespace cocode
