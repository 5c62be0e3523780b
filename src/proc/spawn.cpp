#include "proc/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "proc/command.h"

extern char** environ;

namespace cocode {
namespace {

class SpawnAttributes {
  public:
    explicit SpawnAttributes(ChildOptions::Group group) {
        posix_spawnattr_init(&attr_);
        sigset_t empty, all;
        sigemptyset(&empty);
        sigfillset(&all);
        // A supervisor blocks SIGCHLD/SIGINT/SIGTERM to wait for them; its children must not
        // inherit that. Everything back to default (glibc skips SIGKILL and SIGSTOP).
        posix_spawnattr_setsigmask(&attr_, &empty);
        posix_spawnattr_setsigdefault(&attr_, &all);
        short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        if (group == ChildOptions::Group::own_session) flags |= POSIX_SPAWN_SETSID;
        if (group == ChildOptions::Group::own_group) {
            flags |= POSIX_SPAWN_SETPGROUP;
            posix_spawnattr_setpgroup(&attr_, 0);
        }
        posix_spawnattr_setflags(&attr_, flags);
    }
    ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
    const posix_spawnattr_t* get() const { return &attr_; }

  private:
    posix_spawnattr_t attr_;
};

class SpawnActions {
  public:
    SpawnActions() { posix_spawn_file_actions_init(&actions_); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
    posix_spawn_file_actions_t* get() { return &actions_; }

    void set(int target, const ChildStream& stream) {
        switch (stream.kind()) {
            case ChildStream::Kind::null:
                posix_spawn_file_actions_addopen(&actions_, target, "/dev/null",
                                                 target == 0 ? O_RDONLY : O_WRONLY, 0);
                return;
            case ChildStream::Kind::read:
                posix_spawn_file_actions_addopen(&actions_, target, stream.file().c_str(), O_RDONLY,
                                                 0);
                return;
            case ChildStream::Kind::append:
                posix_spawn_file_actions_addopen(&actions_, target, stream.file().c_str(),
                                                 O_WRONLY | O_CREAT | O_APPEND, 0644);
                return;
            case ChildStream::Kind::fd:
                posix_spawn_file_actions_adddup2(&actions_, stream.fd(), target);
                return;
        }
    }

  private:
    posix_spawn_file_actions_t actions_;
};

// A child with overlay mounts cannot be made by posix_spawn: it is forked, and between the
// fork and the exec makes only system calls (the child of a threaded process may do nothing
// else), everything they need prepared here first.
class MountingSpawn {
  public:
    MountingSpawn(const ChildOptions& options, const std::filesystem::path& program, char** argv,
                  char** envp)
        : options_(options), program_(program), argv_(argv), envp_(envp) {
        uid_map_ = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
        gid_map_ = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
        for (const auto& m : options.overlays) {
            // overlayfs reads a backslash as escaping the next character (`,`, `:`, `\`).
            auto escaped = [](const std::filesystem::path& path) {
                std::string out;
                for (char c : path.string()) {
                    if (c == ',' || c == ':' || c == '\\') out += '\\';
                    out += c;
                }
                return out;
            };
            data_.push_back("lowerdir=" + escaped(m.lower) + ",upperdir=" + escaped(m.upper) +
                            ",workdir=" + escaped(m.work));
            // In a user namespace of its own, overlayfs keeps its marks in user.* attributes.
            user_data_.push_back("userxattr," + data_.back());
        }
    }

    Result<pid_t> start() {
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0)
            return Error::from_errno("cannot start " + argv0(), errno);
        // Above every descriptor the child is given, so that closing the rest spares it.
        report_ = ::fcntl(ends[1], F_DUPFD_CLOEXEC, 64);
        const int dup_errno = errno;
        ::close(ends[1]);
        if (report_ < 0) {
            ::close(ends[0]);
            return Error::from_errno("cannot start " + argv0(), dup_errno);
        }
        const pid_t pid = ::fork();
        if (pid == 0) child();  // never returns
        const int fork_errno = errno;
        ::close(report_);
        if (pid < 0) {
            ::close(ends[0]);
            return Error::from_errno("cannot start " + argv0(), fork_errno);
        }
        Failure failure{};
        ssize_t got;
        while ((got = ::read(ends[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
        }
        ::close(ends[0]);
        if (got <= 0) return pid;  // the exec closed the pipe: it runs
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return Error::from_errno(what_failed(failure), failure.error);
    }

  private:
    enum class Step : int { namespaces, user_map, private_mounts, overlay, streams, cwd, exec };
    struct Failure {
        Step step;
        int error;
        int index;
    };

    std::string argv0() const { return options_.argv.at(0); }

    std::string what_failed(const Failure& f) const {
        switch (f.step) {
            case Step::namespaces:
                return "cannot start " + argv0() + ": no mount namespace of its own (for its " +
                       "environment's overlay)";
            case Step::user_map:
                return "cannot start " + argv0() + ": cannot map its user namespace";
            case Step::private_mounts:
                return "cannot start " + argv0() + ": cannot make its mounts private";
            case Step::overlay: {
                const auto& m = options_.overlays.at(static_cast<std::size_t>(f.index));
                return "cannot start " + argv0() + ": the kernel refused the overlay of " +
                       m.lower.string() + " at " + m.target.string();
            }
            case Step::streams:
                return "cannot start " + argv0() + ": cannot open its standard streams";
            case Step::cwd:
                return "cannot start " + argv0() + ": cannot enter " +
                       (options_.cwd ? options_.cwd->string() : std::string("its folder"));
            case Step::exec:
                break;
        }
        return "cannot start " + argv0();
    }

    [[noreturn]] void fail(Step step, int index = 0) const {
        const Failure f{step, errno, index};
        (void)!::write(report_, &f, sizeof f);
        ::_exit(127);
    }

    static bool write_all(const char* path, const std::string& text) {
        const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) return false;
        const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        return ok;
    }

    void stream(int target, const ChildStream& s) const {
        int fd = -1;
        switch (s.kind()) {
            case ChildStream::Kind::null:
                fd = ::open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
                break;
            case ChildStream::Kind::read:
                fd = ::open(s.file().c_str(), O_RDONLY);
                break;
            case ChildStream::Kind::append:
                fd = ::open(s.file().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
                break;
            case ChildStream::Kind::fd:
                if (::dup2(s.fd(), target) < 0) fail(Step::streams);
                return;
        }
        if (fd < 0) fail(Step::streams);
        if (fd != target) {
            if (::dup2(fd, target) < 0) fail(Step::streams);
            ::close(fd);
        }
    }

    [[noreturn]] void child() const {
        sigset_t empty;
        sigemptyset(&empty);
        for (int sig = 1; sig < NSIG; ++sig) {
            if (sig == SIGKILL || sig == SIGSTOP) continue;
            struct sigaction action {};
            action.sa_handler = SIG_DFL;
            (void)::sigaction(sig, &action, nullptr);  // glibc's own signals refuse: fine
        }
        ::sigprocmask(SIG_SETMASK, &empty, nullptr);
        if (options_.group == ChildOptions::Group::own_session) ::setsid();
        if (options_.group == ChildOptions::Group::own_group) ::setpgid(0, 0);
        // A mount namespace where we may make one (root with its capabilities); else one in a
        // user namespace of its own (a user, or root without the capability: in a container).
        bool user_namespace = false;
        if (::unshare(CLONE_NEWNS) != 0) {
            if (errno != EPERM || ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
                fail(Step::namespaces);
            user_namespace = true;
        }
        if (user_namespace && !(write_all("/proc/self/setgroups", "deny") &&
                                write_all("/proc/self/uid_map", uid_map_) &&
                                write_all("/proc/self/gid_map", gid_map_)))
            fail(Step::user_map);
        // Nothing mounted here may reach the host's namespace.
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            fail(Step::private_mounts);
        for (std::size_t i = 0; i < options_.overlays.size(); ++i)
            if (::mount("overlay", options_.overlays[i].target.c_str(), "overlay", 0,
                        (user_namespace ? user_data_[i] : data_[i]).c_str()) != 0)
                fail(Step::overlay, static_cast<int>(i));
        stream(0, options_.in);
        stream(1, options_.out);
        stream(2, options_.err);
        if (options_.fd3 && ::dup2(*options_.fd3, 3) < 0) fail(Step::streams);
        const unsigned first = options_.fd3 ? 4 : 3;
        if (static_cast<unsigned>(report_) > first)
            ::close_range(first, static_cast<unsigned>(report_) - 1, 0);
        ::close_range(static_cast<unsigned>(report_) + 1, ~0U, 0);
        if (options_.cwd && ::chdir(options_.cwd->c_str()) != 0) fail(Step::cwd);
        ::execve(program_.c_str(), argv_, envp_);
        fail(Step::exec);
    }

    const ChildOptions& options_;
    const std::filesystem::path& program_;
    char** argv_;
    char** envp_;
    std::string uid_map_, gid_map_;
    std::vector<std::string> data_, user_data_;
    int report_ = -1;
};

}  // namespace

Result<pid_t> start_child(const ChildOptions& options) {
    if (options.argv.empty()) return Error::usage("start_child: empty command line");
    auto program = find_in_path(options.argv[0]);
    if (!program) return Error::missing(options.argv[0] + ": " + why_not_found(options.argv[0]));

    SpawnActions actions;
    actions.set(0, options.in);
    actions.set(1, options.out);
    actions.set(2, options.err);
    if (options.fd3) posix_spawn_file_actions_adddup2(actions.get(), *options.fd3, 3);
    // Nothing else of ours reaches the child, whether or not it was opened close-on-exec.
    posix_spawn_file_actions_addclosefrom_np(actions.get(), options.fd3 ? 4 : 3);
    if (options.cwd) posix_spawn_file_actions_addchdir_np(actions.get(), options.cwd->c_str());

    std::vector<char*> args;
    for (const auto& a : options.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    char** envp = environ;
    if (options.environment) {
        for (const auto& e : *options.environment) env.push_back(const_cast<char*>(e.c_str()));
        env.push_back(nullptr);
        envp = env.data();
    }
    if (!options.overlays.empty())
        return MountingSpawn(options, *program, args.data(), envp).start();
    SpawnAttributes attributes(options.group);
    pid_t pid = -1;
    const int rc =
        ::posix_spawn(&pid, program->c_str(), actions.get(), attributes.get(), args.data(), envp);
    if (rc != 0) return Error::from_errno("cannot start " + options.argv[0], rc);
    return pid;
}

std::string overlay_refused(const std::filesystem::path& scratch) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(scratch, ec);
    struct stat st {};
    if (::stat(scratch.c_str(), &st) != 0)
        return "cannot read " + scratch.string() + ": " + std::strerror(errno);
    static std::mutex mutex;
    static std::map<dev_t, std::string> known;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = known.find(st.st_dev); found != known.end()) return found->second;

    const fs::path probe = scratch / (".overlay-probe-" + std::to_string(::getpid()));
    fs::remove_all(probe, ec);
    for (const char* part : {"lower", "upper", "work", "target"})
        fs::create_directories(probe / part, ec);
    std::string why;
    {
        ChildOptions child;
        child.argv = {"/bin/sh", "-c", "test -e lowered && : > written"};
        child.cwd = probe / "target";
        child.overlays.push_back(
            {probe / "lower", probe / "upper", probe / "work", probe / "target"});
        child.group = ChildOptions::Group::own_group;
        if (FILE* f = std::fopen((probe / "lower" / "lowered").c_str(), "w")) std::fclose(f);
        auto pid = start_child(child);
        if (!pid) {
            why = pid.error().message;
        } else {
            (void)exited_by(*pid, std::chrono::steady_clock::now() + std::chrono::seconds(10));
            const int code = end_group(*pid, std::chrono::seconds(1));
            if (code != 0 || !fs::exists(probe / "upper" / "written", ec) ||
                fs::exists(probe / "lower" / "written", ec))
                why = "an overlay mounted, but did not behave as one (exit " +
                      std::to_string(code) + ")";
        }
    }
    // overlayfs leaves its work folder unreadable (mode 0): opened up before it is removed.
    fs::permissions(probe / "work" / "work", fs::perms::owner_all, ec);
    fs::remove_all(probe, ec);
    if (!why.empty() && ::geteuid() != 0 && why.find("user namespace") == std::string::npos)
        why +=
            " (a user namespace of our own, with overlayfs's userxattr, needs Linux 5.11 or "
            "later and user namespaces allowed)";
    known[st.st_dev] = why;
    return why;
}

std::vector<std::string> shell_argv(const std::string& command) {
    auto shell = find_in_path("sh");
    return {shell ? shell->string() : "/bin/sh", "-c", command};
}

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return -1;
}

bool exited_by(pid_t pid, std::chrono::steady_clock::time_point deadline) {
    // A child whose output just closed is usually a few microseconds from exiting: look
    // again soon, then back off.
    auto pause = std::chrono::microseconds(50);
    for (;;) {
        siginfo_t info{};
        const int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0 && info.si_pid == pid) return true;
        if (rc < 0 && errno != EINTR) return true;  // not ours to wait for any more
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(50));
    }
}

int end_group(pid_t pid, std::chrono::milliseconds grace) {
    if (!exited_by(pid, std::chrono::steady_clock::now())) {
        ::kill(-pid, SIGTERM);
        if (!exited_by(pid, std::chrono::steady_clock::now() + grace)) ::kill(-pid, SIGKILL);
    }
    ::kill(-pid, SIGKILL);  // whatever of the group is still there
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return exit_code_of(status);
}

}  // namespace cocode
