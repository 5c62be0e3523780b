#include "proc/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/files.h"
#include "proc/spawn.h"

extern char** environ;

namespace cocode {
namespace fs = std::filesystem;

namespace {

// PATH's folders in order, an empty entry being the current folder, as execvp reads them.
std::vector<fs::path> path_folders() {
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::vector<fs::path> out;
    while (true) {
        const std::size_t colon = rest.find(':');
        const std::string_view dir = rest.substr(0, colon);
        out.emplace_back(dir.empty() ? std::string_view(".") : dir);
        if (colon == std::string_view::npos) return out;
        rest.remove_prefix(colon + 1);
    }
}

}  // namespace

std::optional<fs::path> find_in_path(const std::string& name) {
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) == 0) {
            std::error_code ec;
            auto absolute = fs::absolute(name, ec);
            return ec ? fs::path(name) : absolute;
        }
        return std::nullopt;
    }
    for (const fs::path& dir : path_folders()) {
        const fs::path candidate = dir / name;
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            std::error_code ec;
            auto absolute = fs::absolute(candidate, ec);
            return ec ? candidate : absolute;
        }
    }
    return std::nullopt;
}

std::string why_not_found(const std::string& name) {
    std::error_code ec;
    const auto not_executable = [](const fs::path& file) {
        return "is not executable (chmod +x " + file.string() + ")";
    };
    if (name.find('/') != std::string::npos) {
        if (!fs::exists(name, ec)) return "not found";
        if (fs::is_directory(name, ec)) return "is a folder, not a program";
        return not_executable(name);
    }
    for (const fs::path& dir : path_folders()) {
        const fs::path candidate = dir / name;
        if (fs::is_regular_file(candidate, ec))
            return "is in " + dir.string() + " but " + not_executable(candidate);
    }
    return "not found in PATH";
}

namespace {

struct Pipe {
    UniqueFd read, write;
    static Result<Pipe> make() {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) return Error::from_errno("cannot create a pipe", errno);
        return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
    }
};

class SpawnActions {
  public:
    SpawnActions() { posix_spawn_file_actions_init(&actions_); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
    posix_spawn_file_actions_t* get() { return &actions_; }

  private:
    posix_spawn_file_actions_t actions_;
};

}  // namespace

Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const CommandOptions& options) {
    if (argv.empty()) return Error::usage("run_command: empty command line");
    auto program = find_in_path(argv[0]);
    if (!program) return Error::missing(argv[0] + ": " + why_not_found(argv[0]));

    auto in = Pipe::make();
    auto out = Pipe::make();
    auto err = Pipe::make();
    if (!in) return std::move(in).error();
    if (!out) return std::move(out).error();
    if (!err) return std::move(err).error();

    SpawnActions actions;
    posix_spawn_file_actions_adddup2(actions.get(), in->read.get(), 0);
    posix_spawn_file_actions_adddup2(actions.get(), out->write.get(), 1);
    posix_spawn_file_actions_adddup2(actions.get(), err->write.get(), 2);
    if (options.cwd) posix_spawn_file_actions_addchdir_np(actions.get(), options.cwd->c_str());
    close_inherited_fds(actions.get());

    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env_ptrs;
    char** envp = environ;
    if (options.environment) {
        for (const std::string& e : *options.environment)
            env_ptrs.push_back(const_cast<char*>(e.c_str()));
        env_ptrs.push_back(nullptr);
        envp = env_ptrs.data();
    }

    pid_t pid = -1;
    SpawnAttributes attributes(false);
    int rc =
        ::posix_spawn(&pid, program->c_str(), actions.get(), attributes.get(), args.data(), envp);
    if (rc != 0) return Error::from_errno("cannot start " + argv[0], rc);
    in->read = UniqueFd();
    out->write = UniqueFd();
    err->write = UniqueFd();

    CommandResult result;
    std::string_view pending_input = options.input;
    if (pending_input.empty()) in->write = UniqueFd();
    // SIGPIPE from a child that stops reading early must not kill us.
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);

    while (out->read.valid() || err->read.valid() || in->write.valid()) {
        pollfd fds[3];
        nfds_t n = 0;
        auto add = [&](UniqueFd& fd, short events) {
            if (fd.valid()) fds[n++] = pollfd{fd.get(), events, 0};
        };
        add(out->read, POLLIN);
        add(err->read, POLLIN);
        add(in->write, POLLOUT);
        if (::poll(fds, n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (nfds_t k = 0; k < n; ++k) {
            if (fds[k].revents == 0) continue;
            if (fds[k].fd == in->write.get()) {
                ssize_t w = ::write(in->write.get(), pending_input.data(), pending_input.size());
                if (w > 0) pending_input.remove_prefix(static_cast<std::size_t>(w));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0 || pending_input.empty()) in->write = UniqueFd();
                continue;
            }
            UniqueFd& src = fds[k].fd == out->read.get() ? out->read : err->read;
            std::string& sink = fds[k].fd == out->read.get() ? result.out : result.err;
            char buf[65536];
            ssize_t r = ::read(src.get(), buf, sizeof buf);
            if (r > 0)
                sink.append(buf, static_cast<std::size_t>(r));
            else if (r == 0 || errno != EINTR)
                src = UniqueFd();
        }
    }
    ::sigaction(SIGPIPE, &previous, nullptr);

    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return Error::from_errno("waitpid " + argv[0], errno);
    }
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.exit_code = 128 + WTERMSIG(status);
    return result;
}

}  // namespace cocode
