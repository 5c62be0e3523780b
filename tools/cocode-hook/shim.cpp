// cocode-hook-shim: the program `cocode-hook install` copies into the hooks folder as
// `post-commit` (or `pre-push`). Git starts it on every commit, the user's own included, so
// it is built to decide in a few system calls whether there is anything to do:
//
//   - not in a cocode run and no chained hook: exit 0;
//   - not in a run, a chained hook: become the chained hook (exec);
//   - post-commit in a run (JRUN_RUN_FOLDER, or the run pointer in this worktree's git folder):
//     record READY here, in this process (hook::post_commit, the code cocode-hook runs), then
//     become the chained hook if there is one; when git's files do not hold the new commit (a
//     packed object, a reftable), hand over to `cocode-hook post-commit`, which asks git;
//   - pre-push: become (or run, then chain) `cocode-hook pre-push`.
//
// It is linked statically, with only the recording code of src/ (no libgit2, no CLI parser), so
// that starting it costs no dynamic loading: a commit in a run is one program start after git's,
// not two (docs/performance.md). It never fails a commit: a missing cocode-hook, or anything
// the recording finds wrong, is one line on stderr. `cocode-dispatch run` reinstalls it when it
// differs from its own, so the recording code in a hooks folder is the dispatcher's.
//
// It is the one program of cocode that starts processes itself (fork, exec) rather than through
// src/proc's start_child: that would link the process layer into what every commit of the user's
// pays for, for an exec that needs none of it.
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>

#include "core/redact.h"
#include "hook/hook_files.h"
#include "hook/post_commit.h"

namespace hf = cocode::hook_files;

namespace {

// Referenced so the linker keeps it: status and uninstall look for it in our binary.
extern "C" const char cocode_hook_shim_magic[] = "cocode-hook-shim:v1";
static_assert(sizeof(cocode_hook_shim_magic) == sizeof(hf::kShimMagic));

bool join(char* out, std::size_t size, const char* a, const char* b) {
    int n = std::snprintf(out, size, "%s%s", a, b);
    return n > 0 && static_cast<std::size_t>(n) < size;
}

bool exists(const char* path) {
    struct stat st;
    return ::lstat(path, &st) == 0;
}

// The worktree's own git folder, from GIT_DIR (git sets it for hooks of linked worktrees) or
// ./.git (git starts hooks at the top of the work tree): a folder, or a `gitdir:` file.
bool worktree_git_dir(char* out, std::size_t size) {
    const char* env = std::getenv("GIT_DIR");
    if (env && *env) return join(out, size, env, "");
    struct stat st;
    if (::stat(".git", &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) return join(out, size, ".git", "");
    int fd = ::open(".git", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[PATH_MAX + 16];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 8 || std::strncmp(buf, "gitdir: ", 8) != 0) return false;
    buf[n] = '\0';
    buf[std::strcspn(buf, "\r\n")] = '\0';
    return join(out, size, buf + 8, "");
}

bool in_cocode_run() {
    const char* folder = std::getenv(hf::kRunFolderEnv);
    if (folder && *folder) return true;
    char git_dir[PATH_MAX];
    char pointer[PATH_MAX + 32];
    return worktree_git_dir(git_dir, sizeof git_dir) &&
           std::snprintf(pointer, sizeof pointer, "%s/%s", git_dir, hf::kRunPointer) > 0 &&
           exists(pointer);
}

// cocode-hook: the path recorded at install, else PATH.
bool find_tool(const char* hooks_dir, char* out, std::size_t size, char* recorded,
               std::size_t rsize) {
    recorded[0] = '\0';
    char file[PATH_MAX];
    if (std::snprintf(file, sizeof file, "%s/%s", hooks_dir, hf::kToolFile) > 0) {
        int fd = ::open(file, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t n = ::read(fd, recorded, rsize - 1);
            ::close(fd);
            recorded[n > 0 ? n : 0] = '\0';
            recorded[std::strcspn(recorded, "\r\n")] = '\0';
            if (recorded[0] == '/' && ::access(recorded, X_OK) == 0)
                return join(out, size, recorded, "");
        }
    }
    const char* path = std::getenv("PATH");
    while (path && *path) {
        const char* colon = std::strchr(path, ':');
        std::size_t len = colon ? static_cast<std::size_t>(colon - path) : std::strlen(path);
        if (len > 0 &&
            std::snprintf(out, size, "%.*s/cocode-hook", static_cast<int>(len), path) > 0 &&
            ::access(out, X_OK) == 0)
            return true;
        if (!colon) break;
        path = colon + 1;
    }
    return false;
}

// A post-commit in a run, recorded in this process. False when the new commit is not in git's
// files and cocode-hook, which can ask git, must do it.
bool recorded_here() {
    namespace hook = cocode::hook;
    try {
        std::error_code ec;
        hook::PostCommitEnv env{std::filesystem::current_path(ec), std::getenv("GIT_DIR"),
                                std::getenv(hf::kRunFolderEnv), std::getenv("COCODE_READY_MARKER")};
        auto outcome = hook::post_commit(env, nullptr, std::chrono::system_clock::now());
        if (outcome.kind == hook::PostCommitOutcome::Kind::head_elsewhere) return false;
        if (!outcome.line.empty()) std::fprintf(stderr, "%s\n", outcome.line.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cocode-hook: readiness not recorded (%s); the commit stands\n",
                     cocode::redact(e.what()).c_str());
    }
    return true;
}

int wait_exit_code(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Both our tool and the chained hook may need the hook's standard input (pre-push reads the
// pushed refs there): keep a copy in memory to hand to each.
int buffered_stdin() {
    int fd = ::memfd_create("cocode-hook-stdin", MFD_CLOEXEC);
    if (fd < 0) return -1;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(0, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (::write(fd, buf, static_cast<std::size_t>(n)) != n) break;
    }
    ::lseek(fd, 0, SEEK_SET);
    return fd;
}

bool is_shell_name(const char* name, std::size_t len) {
    static const char* const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"};
    for (const char* shell : shells)
        if (std::strlen(shell) == len && std::strncmp(shell, name, len) == 0) return true;
    return false;
}

// Runs the chained hook. A shell script is sourced by its own shell with $0 set to the hook's
// real name: hooks such as husky's find their siblings and their user script through $0
// (`. "$(dirname "$0")/h"`, `basename "$0"`), which the renamed file would break.
void exec_chained(char* chained, char* self, int argc, char** argv) {
    char head[PATH_MAX + 64];
    int fd = ::open(chained, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? ::read(fd, head, sizeof head - 1) : -1;
    if (fd >= 0) ::close(fd);
    if (n > 2 && head[0] == '#' && head[1] == '!') {
        head[n] = '\0';
        head[std::strcspn(head, "\r\n")] = '\0';
        char* interp = head + 2 + std::strspn(head + 2, " \t");
        char* arg = interp + std::strcspn(interp, " \t");
        if (*arg) *arg++ = '\0';
        arg += std::strspn(arg, " \t");
        std::size_t arg_len = std::strcspn(arg, " \t");
        const char* base = std::strrchr(interp, '/');
        base = base ? base + 1 : interp;
        bool via_env = std::strcmp(base, "env") == 0 && is_shell_name(arg, arg_len);
        if (via_env || is_shell_name(base, std::strlen(base))) {
            if (via_env) arg[arg_len] = '\0';
            ::setenv("COCODE_CHAINED_HOOK", chained, 1);
            char* args[80];
            int k = 0;
            args[k++] = interp;
            if (*arg) args[k++] = arg;
            args[k++] = const_cast<char*>("-c");
            args[k++] = const_cast<char*>(". \"$COCODE_CHAINED_HOOK\"");
            args[k++] = self;
            for (int i = 1; i < argc && k < 79; ++i) args[k++] = argv[i];
            args[k] = nullptr;
            ::execv(interp, args);
        }
    }
    argv[0] = self;
    ::execv(chained, argv);
}

}  // namespace

int main(int argc, char** argv) {
    (void)cocode_hook_shim_magic[0];
    char self[PATH_MAX];
    if (argc < 1 || !argv[0] || !std::strchr(argv[0], '/')) {
        ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return 0;
        self[n] = '\0';
    } else if (!join(self, sizeof self, argv[0], "")) {
        return 0;
    }
    const char* slash = std::strrchr(self, '/');
    const char* hook_name = slash + 1;
    char hooks_dir[PATH_MAX];
    std::snprintf(hooks_dir, sizeof hooks_dir, "%.*s", static_cast<int>(slash - self), self);

    char chained[PATH_MAX + 32];
    bool has_chained = join(chained, sizeof chained, self, hf::kChainedSuffix) && exists(chained);
    const bool is_post_commit = std::strcmp(hook_name, "post-commit") == 0;
    // A post-commit in a run is recorded here, unless git's files do not hold the commit; every
    // other hook is cocode-hook's.
    const bool ask_tool = is_post_commit ? in_cocode_run() && !recorded_here() : true;

    int code = 0;
    if (ask_tool) {
        char tool[PATH_MAX], recorded[PATH_MAX];
        if (!find_tool(hooks_dir, tool, sizeof tool, recorded, sizeof recorded)) {
            std::fprintf(stderr,
                         "cocode-hook: not found (recorded: %s; not on PATH either); %s not "
                         "checked by cocode, git goes on\n",
                         recorded[0] ? recorded : "none",
                         is_post_commit ? "readiness" : "this push");
        } else {
            char* args[64];
            int n = 0;
            args[n++] = tool;
            args[n++] = const_cast<char*>(hook_name);
            for (int i = 1; i < argc && n < 63; ++i) args[n++] = argv[i];
            args[n] = nullptr;
            // Nothing chained: become cocode-hook, one fork and one wait fewer on every commit
            // in a run. Its exit code is then the hook's, as it would be after a wait.
            if (!has_chained) {
                ::execv(tool, args);
                std::fprintf(stderr, "cocode-hook: cannot run %s: %s\n", tool,
                             std::strerror(errno));
                return is_post_commit ? 0 : 1;
            }
            int input = buffered_stdin();
            pid_t pid = ::fork();
            if (pid == 0) {
                if (input >= 0) ::dup2(input, 0);
                ::execv(tool, args);
                std::fprintf(stderr, "cocode-hook: cannot run %s: %s\n", tool,
                             std::strerror(errno));
                ::_exit(is_post_commit ? 0 : 1);
            }
            code = pid > 0 ? wait_exit_code(pid) : 0;
            if (input >= 0) {
                ::lseek(input, 0, SEEK_SET);
                ::dup2(input, 0);
                ::close(input);
            }
            if (is_post_commit) code = 0;  // readiness bookkeeping never fails a commit
        }
    }
    if (code != 0 || !has_chained) return code;
    exec_chained(chained, self, argc, argv);
    std::fprintf(stderr, "cocode-hook: cannot run the chained hook %s: %s\n", chained,
                 std::strerror(errno));
    return 1;
}
