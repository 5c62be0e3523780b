#include "proc/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/files.h"
#include "proc/spawn.h"

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

using Clock = std::chrono::steady_clock;

// Feeds `input` to the child and reads what it prints until both its outputs close or the
// deadline passes: false then.
bool exchange(Pipe& in, Pipe& out, Pipe& err, std::string_view input, CommandResult& result,
              std::optional<Clock::time_point> deadline,
              const std::function<void(std::string_view)>& on_err) {
    if (input.empty()) in.write = UniqueFd();
    while (out.read.valid() || err.read.valid() || in.write.valid()) {
        pollfd fds[3];
        nfds_t n = 0;
        auto add = [&](UniqueFd& fd, short events) {
            if (fd.valid()) fds[n++] = pollfd{fd.get(), events, 0};
        };
        add(out.read, POLLIN);
        add(err.read, POLLIN);
        add(in.write, POLLOUT);
        int wait_ms = -1;
        if (deadline) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
            if (left.count() <= 0) return false;
            wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
        }
        if (::poll(fds, n, wait_ms) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (nfds_t k = 0; k < n; ++k) {
            if (fds[k].revents == 0) continue;
            if (fds[k].fd == in.write.get()) {
                ssize_t w = ::write(in.write.get(), input.data(), input.size());
                if (w > 0) input.remove_prefix(static_cast<std::size_t>(w));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0 || input.empty()) in.write = UniqueFd();
                continue;
            }
            UniqueFd& src = fds[k].fd == out.read.get() ? out.read : err.read;
            std::string& sink = fds[k].fd == out.read.get() ? result.out : result.err;
            char buf[65536];
            ssize_t r = ::read(src.get(), buf, sizeof buf);
            if (r > 0) {
                sink.append(buf, static_cast<std::size_t>(r));
                if (on_err && &sink == &result.err)
                    on_err(std::string_view(buf, static_cast<std::size_t>(r)));
            } else if (r == 0 || errno != EINTR) {
                src = UniqueFd();
            }
        }
    }
    return true;
}

}  // namespace

Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const CommandOptions& options) {
    if (argv.empty()) return Error::usage("run_command: empty command line");
    auto in = Pipe::make();
    auto out = Pipe::make();
    auto err = Pipe::make();
    if (!in) return std::move(in).error();
    if (!out) return std::move(out).error();
    if (!err) return std::move(err).error();

    ChildOptions child;
    child.argv = argv;
    child.cwd = options.cwd;
    child.environment = options.environment;
    child.in = ChildStream::descriptor(in->read.get());
    child.out = ChildStream::descriptor(out->write.get());
    child.err = ChildStream::descriptor(err->write.get());
    // Written before the child starts, then only its end is left: a pipe holds 64 KiB.
    std::optional<Pipe> fd3;
    if (options.fd3_input) {
        if (options.fd3_input->size() > 4096)
            return Error::usage("run_command: descriptor 3's input is over 4 KiB");
        auto made = Pipe::make();
        if (!made) return std::move(made).error();
        fd3 = std::move(*made);
        if (::write(fd3->write.get(), options.fd3_input->data(), options.fd3_input->size()) !=
            static_cast<ssize_t>(options.fd3_input->size()))
            return Error::from_errno("cannot fill a pipe", errno);
        fd3->write = UniqueFd();
        child.fd3 = fd3->read.get();
    }
    // With a deadline it has a group of its own, so that what it started ends with it.
    if (options.deadline) child.group = ChildOptions::Group::own_group;
    const auto started = Clock::now();
    auto pid = start_child(child);
    if (!pid) return std::move(pid).error();
    in->read = UniqueFd();
    out->write = UniqueFd();
    err->write = UniqueFd();
    fd3.reset();

    // SIGPIPE from a child that stops reading early must not kill us.
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);
    CommandResult result;
    std::optional<Clock::time_point> deadline;
    if (options.deadline) deadline = started + *options.deadline;
    const bool in_time = exchange(*in, *out, *err, options.input, result, deadline, options.on_err);
    ::sigaction(SIGPIPE, &previous, nullptr);

    if (options.deadline) {
        result.timed_out = !in_time || !exited_by(*pid, *deadline);
        result.exit_code = end_group(*pid, std::chrono::milliseconds(200));
        return result;
    }
    int status = 0;
    if (wait_child(*pid, &status) != *pid) return Error::from_errno("waitpid " + argv[0], errno);
    result.exit_code = exit_code_of(status);
    return result;
}

std::string shell_quote(const std::string& word) {
    if (!word.empty() &&
        word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789-_./=:@%+,") == std::string::npos)
        return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& word : argv) out += (out.empty() ? "" : " ") + shell_quote(word);
    return out;
}

}  // namespace cocode
