#include "proc/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "proc/command.h"
#include "proc/process_tree.h"
#include "proc/sandbox.h"

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

// The children start_child made, until their starter has reaped them (wait_child): held with
// the spawn itself, so that a sweep never sees a child before it is known.
std::mutex& children_mutex() {
    static std::mutex mutex;
    return mutex;
}
std::set<pid_t>& started_children() {
    static std::set<pid_t> pids;
    return pids;
}

}  // namespace

pid_t wait_child(pid_t pid, int* status, int options) {
    pid_t got;
    while ((got = ::waitpid(pid, status, options)) < 0 && errno == EINTR) {
    }
    if (got == pid) {
        std::lock_guard lock(children_mutex());
        started_children().erase(pid);
    }
    return got;
}

void reap_orphans(const std::function<void(pid_t pid, int status)>& reaped) {
    std::lock_guard lock(children_mutex());
    auto children = own_children();
    if (!children) return;
    for (pid_t pid : *children) {
        if (started_children().count(pid)) continue;
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid && reaped) reaped(pid, status);
    }
}

std::vector<pid_t> orphans_to_end() {
    std::lock_guard lock(children_mutex());
    std::vector<pid_t> out;
    if (auto children = own_children())
        for (pid_t pid : *children)
            if (!started_children().count(pid)) out.push_back(pid);
    return out;
}

std::filesystem::path program_beside_us(const std::string& name) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec)
        for (const fs::path& candidate : {dir / name, dir / ".." / "libexec" / "cocode" / name})
            if (::access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal();
    if (auto found = find_in_path(name)) return *found;
    return {};
}

std::vector<std::string> dying_with(pid_t parent, const std::vector<std::string>& argv,
                                    std::filesystem::path& program) {
    const auto options_end = std::find(argv.begin(), argv.end(), "--");
    if (std::find(argv.begin(), options_end, "--die-with-parent") == options_end) return argv;
    const std::string pid = std::to_string(parent);
    const std::string name = program.filename().string();
    std::vector<std::string> out = argv;
    if (name == kCocodeSandbox) {
        out.insert(out.begin() + 1, {"--parent-pid", pid});
    } else if (name == kBubblewrap) {
        const std::filesystem::path starter = program_beside_us(kCocodeSandbox);
        if (starter.empty()) return argv;  // none here: bubblewrap's own signal, with its race
        out[0] = program.string();
        out.insert(out.begin(), {starter.string(), "--exec-with-parent", pid, "--"});
        program = starter;
    }
    return out;
}

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

    // Overlays: the helper makes them, then becomes the program (same pid, descriptors).
    std::vector<std::string> words = dying_with(::getpid(), options.argv, *program);
    if (!options.overlays.empty()) {
        auto helper = program_beside_us("cocode-overlay");
        if (helper.empty())
            return Error::missing(
                "cocode-overlay, which gives a child its environment's overlay, "
                "is not installed beside this program");
        std::vector<std::string> wrapped = {helper.string()};
        for (const auto& m : options.overlays)
            wrapped.insert(wrapped.end(), {m.lower.string(), m.upper.string(), m.work.string(),
                                           m.target.string()});
        wrapped.push_back("--");
        wrapped.push_back(program->string());
        wrapped.insert(wrapped.end(), words.begin() + 1, words.end());
        words = std::move(wrapped);
        program = std::move(helper);
    }
    std::vector<char*> args;
    for (const auto& a : words) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    char** envp = environ;
    if (options.environment) {
        for (const auto& e : *options.environment) env.push_back(const_cast<char*>(e.c_str()));
        env.push_back(nullptr);
        envp = env.data();
    }
    SpawnAttributes attributes(options.group);
    pid_t pid = -1;
    std::lock_guard lock(children_mutex());
    const int rc =
        ::posix_spawn(&pid, program->c_str(), actions.get(), attributes.get(), args.data(), envp);
    if (rc != 0) return Error::from_errno("cannot start " + options.argv[0], rc);
    started_children().insert(pid);
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
        child.err = ChildStream::append_to(probe / "said");  // cocode-overlay's one line
        if (FILE* f = std::fopen((probe / "lower" / "lowered").c_str(), "w")) std::fclose(f);
        auto pid = start_child(child);
        if (!pid) {
            why = pid.error().message;
        } else {
            (void)exited_by(*pid, std::chrono::steady_clock::now() + std::chrono::seconds(10));
            const int code = end_group(*pid, std::chrono::seconds(1));
            std::string said;
            if (FILE* f = std::fopen((probe / "said").c_str(), "r")) {
                char line[512] = {};
                if (std::fgets(line, sizeof line, f)) said = line;
                std::fclose(f);
            }
            while (!said.empty() && said.back() == '\n') said.pop_back();
            if (!said.empty())
                why = said;
            else if (code != 0 || !fs::exists(probe / "upper" / "written", ec) ||
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
    // A status that could not be had is no success.
    if (wait_child(pid, &status) != pid) return -1;
    return exit_code_of(status);
}

}  // namespace cocode
