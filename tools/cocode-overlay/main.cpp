// cocode-overlay: starts a program in a mount namespace of its own with overlay mounts made
// first — how a prepared environment reaches an agent or a verify command copy-on-write
// (docs/environments.md). proc/spawn's start_child runs it when a child asks for overlays.
//
//   cocode-overlay LOWER UPPER WORK TARGET [LOWER UPPER WORK TARGET]... -- PROGRAM [ARG]...
//
// A program of its own, exec'd fresh, rather than the mounts made in a child forked from the
// tool: the tools are not dumpable (their GitHub token out of a same-user process's reach:
// proc/environment.h), a fork inherits that, and a process that is not dumpable may not write
// its own uid_map. This one holds no secret: its environment is the child's.
//
// The namespace is made with the capability where there is one (root), else in a user
// namespace of its own that maps only our own user and group, with overlayfs's `userxattr`.
// The mounts are private: nothing reaches the host's namespace. Then PROGRAM replaces this
// process (same pid, group, session and descriptors). A failure is one line on stderr and exit
// 126, before PROGRAM starts.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "cocode-overlay: %s: %s\n", what.c_str(), std::strerror(errno));
    std::exit(126);
}

bool write_all(const char* path, const std::string& text) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// overlayfs reads a backslash as escaping the next character (`,`, `:`, `\`).
std::string escaped(const char* path) {
    std::string out;
    for (const char* c = path; *c; ++c) {
        if (*c == ',' || *c == ':' || *c == '\\') out += '\\';
        out += *c;
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    int end = 1;
    while (end < argc && std::strcmp(argv[end], "--") != 0) ++end;
    if (end >= argc - 1 || (end - 1) % 4 != 0) {
        std::fprintf(stderr,
                     "cocode-overlay: usage: cocode-overlay LOWER UPPER WORK TARGET... -- "
                     "PROGRAM [ARG]...\n");
        return 2;
    }
    bool user_namespace = false;
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWNS) != 0) {
        if (errno != EPERM || ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            fail("no mount namespace of its own");
        user_namespace = true;
        if (!(write_all("/proc/self/setgroups", "deny") &&
              write_all("/proc/self/uid_map",
                        std::to_string(uid) + " " + std::to_string(uid) + " 1\n") &&
              write_all("/proc/self/gid_map",
                        std::to_string(gid) + " " + std::to_string(gid) + " 1\n")))
            fail("cannot map its user namespace");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        fail("cannot make its mounts private");
    for (int i = 1; i < end; i += 4) {
        const std::string data =
            std::string(user_namespace ? "userxattr," : "") + "lowerdir=" + escaped(argv[i]) +
            ",upperdir=" + escaped(argv[i + 1]) + ",workdir=" + escaped(argv[i + 2]);
        if (::mount("overlay", argv[i + 3], "overlay", 0, data.c_str()) != 0)
            fail(std::string("the kernel refused the overlay of ") + argv[i] + " at " +
                 argv[i + 3]);
    }
    // Its folder entered again by name: one inside a target is the overlay now, not the
    // folder under it that the child was started in.
    if (char* cwd = ::getcwd(nullptr, 0)) {
        if (::chdir(cwd) != 0) fail(std::string("cannot enter ") + cwd);
        std::free(cwd);
    }
    ::execv(argv[end + 1], argv + end + 1);
    fail(std::string("cannot start ") + argv[end + 1]);
}
