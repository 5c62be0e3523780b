#include "protocol/executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>

#include "core/files.h"
#include "core/utf8.h"
#include "git/cli.h"
#include "proc/command.h"
#include "proc/process_tree.h"
#include "proc/spawn.h"

namespace cocode::protocol {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

Error rejected(const std::string& why) { return Error::general("REJECTED: " + why); }

bool within(const fs::path& path, const fs::path& root) {
    auto rel = path.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
}

bool is_git_folder(const std::string& part) {
    std::string lower = part;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower == ".git";
}

// What a model is shown of a file or of a command's output: valid UTF-8 cut at a character.
std::size_t utf8_cut(std::string_view text, std::size_t at) {
    at = std::min(at, text.size());
    while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
        --at;
    return at;
}

// Keeps the head and the tail of what is longer than `cap`: a failing build says why at the end.
std::string cap_text(std::string text, std::size_t cap, std::uint64_t total) {
    if (text.size() <= cap && total <= text.size()) return text;
    const std::size_t head = utf8_cut(text, cap / 4);
    std::size_t tail_start = text.size() > cap - head ? text.size() - (cap - head) : 0;
    while (tail_start < text.size() &&
           (static_cast<unsigned char>(text[tail_start]) & 0xC0) == 0x80)
        ++tail_start;
    return text.substr(0, head) + "\n[… " +
           std::to_string(total - head - (text.size() - tail_start)) + " bytes cut …]\n" +
           text.substr(tail_start);
}

std::string quoted(const std::string& text) {
    std::string first = text.substr(0, text.find('\n'));
    if (first.size() > 200) first = first.substr(0, utf8_cut(first, 200)) + "…";
    return "'" + first +
           (first.size() < text.size() && text.find('\n') != std::string::npos ? " …'" : "'");
}

std::atomic<unsigned> command_counter{0};

}  // namespace

Result<fs::path> resolve_in_workspace(const fs::path& root, const std::string& relative) {
    if (relative.empty()) return rejected("Path is empty");
    if (relative.find('\0') != std::string::npos) return rejected("Path holds a NUL character");
    const fs::path rel(relative);
    if (rel.is_absolute())
        return rejected("Path is outside workspace ('" + relative + "' is absolute)");
    std::deque<std::string> parts;
    for (const auto& part : rel) parts.push_back(part.string());
    fs::path current = root;
    int links = 0;
    while (!parts.empty()) {
        std::string part = std::move(parts.front());
        parts.pop_front();
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (current == root)
                return rejected("Path is outside workspace ('" + relative + "' leaves it)");
            current = current.parent_path();
            continue;
        }
        if (is_git_folder(part))
            return rejected("Path is inside .git ('" + relative + "'); git's files are not yours");
        fs::path next = current / part;
        struct stat st {};
        if (::lstat(next.c_str(), &st) != 0) {
            current = std::move(next);  // not there (yet): what follows is only names
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            if (++links > 40) return rejected("Path has too many symbolic links");
            std::error_code ec;
            fs::path target = fs::canonical(next, ec);
            if (ec)
                return rejected("Path goes through a symbolic link that leads nowhere ('" +
                                (next.lexically_relative(root)).string() + "')");
            if (target != root && !within(target, root))
                return rejected("Path is outside workspace (the symbolic link '" +
                                next.lexically_relative(root).string() + "' leads out of it)");
            for (const auto& inside : target.lexically_relative(root))
                if (is_git_folder(inside.string()))
                    return rejected("Path leads into .git ('" + relative + "')");
            current = std::move(target);
            continue;
        }
        current = std::move(next);
    }
    if (current != root && !within(current, root))
        return rejected("Path is outside workspace ('" + relative + "')");
    return current;
}

std::vector<std::string> list_workspace(const fs::path& root) {
    std::vector<std::string> out;
    // Outside a repository (or with a git that fails) the folder is walked instead.
    auto listed = git::run_git(root, {"ls-files", "-z", "-co", "--exclude-standard"});
    if (listed.ok() && listed->exit_code == 0) {
        std::string_view rest = listed->out;
        while (!rest.empty()) {
            const std::size_t nul = rest.find('\0');
            std::string_view rel = rest.substr(0, nul);
            rest.remove_prefix(nul == std::string_view::npos ? rest.size() : nul + 1);
            // A conflicted path is listed once per stage.
            if (!rel.empty() && (out.empty() || out.back() != rel)) out.emplace_back(rel);
        }
        return out;
    }
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() == ".git") {
            it.disable_recursion_pending();
            continue;
        }
        if (!it->is_directory(ec)) out.push_back(it->path().lexically_relative(root).string());
    }
    return out;
}

std::optional<std::uint64_t> size_in(const fs::path& root, const std::string& relative) {
    struct stat st {};
    if (::lstat((root / relative).c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
    return static_cast<std::uint64_t>(st.st_size);
}

std::string workspace_listing(const fs::path& root, std::size_t limit) {
    return render_listing(list_workspace(root), limit,
                          [&](const std::string& relative) { return size_in(root, relative); });
}

ShellResult run_shell(const std::string& command, const fs::path& cwd,
                      const std::vector<std::string>& environment,
                      std::chrono::milliseconds timeout, std::size_t cap,
                      std::chrono::milliseconds grace) {
    ShellResult result;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        result.output = "cannot create a pipe: " + std::string(std::strerror(errno));
        return result;
    }
    UniqueFd read_end(fds[0]), write_end(fds[1]);

    // Every process the command starts carries this tag, even one that leaves the group.
    const std::string tag = "COCODE_COMMAND_ID=" + std::to_string(::getpid()) + "-" +
                            std::to_string(++command_counter) + "-" +
                            std::to_string(Clock::now().time_since_epoch().count());
    ChildOptions child;
    child.argv = shell_argv(command);
    child.environment = environment;
    child.environment->push_back(tag);
    child.cwd = cwd;
    child.out = ChildStream::descriptor(write_end.get());
    child.err = ChildStream::descriptor(write_end.get());
    child.group = ChildOptions::Group::own_session;
    auto started = start_child(child);
    write_end = UniqueFd();
    if (!started) {
        result.output = started.error().message;
        return result;
    }
    const pid_t pid = *started;
    const RunMarks marks{stamp_of(pid), tag};
    ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);

    std::string output;
    auto drain = [&] {
        char buf[65536];
        while (true) {
            const ssize_t r = ::read(read_end.get(), buf, sizeof buf);
            if (r > 0) {
                result.output_bytes += static_cast<std::uint64_t>(r);
                // Head kept whole; past twice the cap only a rolling tail.
                output.append(buf, static_cast<std::size_t>(r));
                if (output.size() > 4 * cap + sizeof buf) {
                    const std::size_t head = cap / 4;
                    output.erase(head, output.size() - head - cap);
                }
                continue;
            }
            if (r == 0) return true;  // every writer gone
            return false;             // EAGAIN, EINTR
        }
    };

    const auto deadline = Clock::now() + timeout;
    int status = 0;
    bool exited = false, eof = false;
    while (!exited || !eof) {
        if (!exited) {
            const pid_t w = ::waitpid(pid, &status, WNOHANG);
            exited = w == pid;
        }
        if (exited) {
            // The shell is done; what it left behind holding the pipe is ended now.
            eof = drain();
            break;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            break;
        }
        pollfd p{read_end.get(), POLLIN, 0};
        // Woken by output or by the pipe's end; the shell's exit is seen at least every 50 ms.
        ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 50)));
        if (!eof) eof = drain();
    }
    // Nothing the command started outlives it: its group and everything carrying its tag.
    stop_run_blocking(marks, result.timed_out ? grace : std::chrono::milliseconds(200));
    if (!exited) {
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    drain();
    // Orphans a subreaper adopted from the command are reaped here.
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    result.exit_code = exit_code_of(status);
    result.output = cap_text(std::move(output), cap, result.output_bytes);
    return result;
}

Executor::Executor(ExecutorOptions options) : options_(std::move(options)) {}

Execution Executor::execute(const std::vector<Command>& commands) {
    Execution out;
    for (const auto& command : commands) {
        Outcome outcome = execute_one(command);
        if (command.kind == CommandKind::read_file && outcome.success)
            out.read_requests.push_back(command.path);
        out.results.push_back(std::move(outcome));
        if (command.kind == CommandKind::done) {
            out.done = true;
            out.summary = command.body;
            break;
        }
    }
    return out;
}

namespace {

// What each file command does to the workspace: its summary when it succeeds, else why not.
// `path` is resolved inside the workspace already; `st` is its lstat when `exists`.
using FileResult = Result<std::string>;

FileResult create_in_workspace(const Command& command, const fs::path& path, bool exists,
                               const struct stat& st, std::size_t max_size) {
    const std::string& rel = command.path;
    if (command.body.size() > max_size)
        return Error::general("'" + rel + "' would be " + std::to_string(command.body.size()) +
                              " bytes, over the limit of " + std::to_string(max_size));
    if (exists && S_ISDIR(st.st_mode)) return Error::general("'" + rel + "' is a folder");
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return Error::general("cannot make the folder of '" + rel + "': " + ec.message());
    // A rename over the path: a link put there meanwhile is replaced, not followed.
    const mode_t mode = exists && S_ISREG(st.st_mode) ? (st.st_mode & 07777) : 0644;
    if (auto written = write_file_atomic(path, command.body, mode, Durability::none); !written)
        return Error::general("cannot write '" + rel + "': " + written.error().message);
    return (exists ? "Overwrote '" : "Created '") + rel + "' (" +
           std::to_string(command.body.size()) + " bytes)";
}

// Lines start..end of `text` (1-based, inclusive; end = start - 1 inserts) replaced by `body`.
FileResult replace_lines(std::string_view text, const Command& command) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1));
        text.remove_prefix(lines.back().size());
    }
    const long count = static_cast<long>(lines.size());
    if (command.start_line > count + 1 || command.end_line > count ||
        command.end_line < command.start_line - 1)
        return Error::general("Invalid line range " + std::to_string(command.start_line) + "-" +
                              std::to_string(command.end_line) + ": '" + command.path + "' has " +
                              std::to_string(count) + " lines");
    std::string edited;
    for (long i = 0; i < command.start_line - 1; ++i)
        edited.append(lines[static_cast<std::size_t>(i)]);
    if (!edited.empty() && edited.back() != '\n') edited.push_back('\n');
    edited += command.body;
    for (long i = command.end_line; i < count; ++i)
        edited.append(lines[static_cast<std::size_t>(i)]);
    return edited;
}

FileResult edit_in_workspace(const Command& command, const fs::path& path, bool exists,
                             const struct stat& st, std::size_t max_size) {
    const std::string& rel = command.path;
    if (!exists) return Error::general("File '" + rel + "' not found");
    if (!S_ISREG(st.st_mode)) return Error::general("'" + rel + "' is not a regular file");
    auto text = read_file(path, max_size);
    if (!text) return Error::general("cannot read '" + rel + "': " + text.error().message);
    auto edited = replace_lines(*text, command);
    if (!edited) return edited;
    if (edited->size() > max_size)
        return Error::general("'" + rel + "' would be over the limit of " +
                              std::to_string(max_size) + " bytes");
    if (auto written = write_file_atomic(path, *edited, st.st_mode & 07777, Durability::none);
        !written)
        return Error::general("cannot write '" + rel + "': " + written.error().message);
    const long replaced = command.end_line - command.start_line + 1;
    const long added =
        static_cast<long>(std::count(command.body.begin(), command.body.end(), '\n'));
    return "Edited '" + rel + "': lines " + std::to_string(command.start_line) + "-" +
           std::to_string(command.end_line) + " (" + std::to_string(replaced) + ") replaced by " +
           std::to_string(added) + " lines";
}

FileResult delete_in_workspace(const Command& command, const fs::path& path, bool exists,
                               const struct stat& st) {
    const std::string& rel = command.path;
    if (!exists) return Error::general("File '" + rel + "' not found");
    if (S_ISDIR(st.st_mode))
        return Error::general("'" + rel + "' is a folder; only files are deleted");
    std::error_code ec;
    if (!fs::remove(path, ec) || ec)
        return Error::general("cannot delete '" + rel + "': " + ec.message());
    return "Deleted '" + rel + "'";
}

FileResult read_file_later(const Command& command, bool exists, const struct stat& st) {
    const std::string& rel = command.path;
    if (!exists) return Error::general("File '" + rel + "' not found");
    if (!S_ISREG(st.st_mode)) return Error::general("'" + rel + "' is not a regular file");
    return "'" + rel + "' (" + std::to_string(st.st_size) + " bytes) will be in the next message";
}

bool is_file_command(CommandKind kind) {
    return kind == CommandKind::create_file || kind == CommandKind::edit_file ||
           kind == CommandKind::delete_file || kind == CommandKind::read_file;
}

}  // namespace

Outcome Executor::execute_one(const Command& command) {
    Outcome out;
    out.command =
        std::string(command.kind == CommandKind::error ? command.name : command_name(command.kind));
    auto show = [&](std::string_view line) {
        if (options_.show) options_.show(line);
    };
    auto finish = [&](const Result<std::string>& result) {
        out.success = result.ok();
        out.summary = result.ok() ? *result : result.error().message;
        show((out.success ? "[OK] " : "[FAILED] ") + out.command + ": " + out.summary);
        return out;
    };
    if (command.kind == CommandKind::error)
        return finish(Error::general("Parse error: " + command.error));
    if (is_file_command(command.kind)) {
        auto resolved = resolve_in_workspace(options_.root, command.path);
        if (!resolved) return finish(std::move(resolved).error());
        const fs::path path = std::move(resolved).value();
        if (path == options_.root)
            return finish(
                Error::general("'" + command.path + "' is the workspace itself, not a file"));
        struct stat st {};
        const bool exists = ::lstat(path.c_str(), &st) == 0;
        switch (command.kind) {
            case CommandKind::create_file:
                return finish(
                    create_in_workspace(command, path, exists, st, options_.max_file_size));
            case CommandKind::edit_file:
                return finish(edit_in_workspace(command, path, exists, st, options_.max_file_size));
            case CommandKind::delete_file:
                return finish(delete_in_workspace(command, path, exists, st));
            default:
                return finish(read_file_later(command, exists, st));
        }
    }
    switch (command.kind) {
        case CommandKind::run_command: {
            show("$ " + command.body);
            ShellResult r = run_shell(command.body, options_.root, options_.environment,
                                      options_.command_timeout, options_.output_cap);
            out.output = r.output;
            if (r.timed_out)
                return finish(
                    Error::general("Ran " + quoted(command.body) + ": timed out after " +
                                   std::to_string(options_.command_timeout.count() / 1000) +
                                   " s; it and everything it started were stopped"));
            if (r.exit_code != 0)
                return finish(Error::general("Ran " + quoted(command.body) + " (exit code " +
                                             std::to_string(r.exit_code) + ")"));
            return finish("Ran " + quoted(command.body) + " (exit code 0)");
        }
        case CommandKind::message:
            show("MESSAGE: " + command.body);
            return finish(std::string("Shown to the user"));
        case CommandKind::done:
            return finish(std::string("Task marked complete"));
        default:
            return finish(Error::general("unknown command"));
    }
}

std::vector<RequestedFile> Executor::read_requested(const std::vector<std::string>& paths) const {
    std::vector<RequestedFile> out;
    for (const auto& rel : paths) {
        RequestedFile f;
        f.path = rel;
        auto resolved = resolve_in_workspace(options_.root, rel);
        if (!resolved) {
            f.note = resolved.error().message;
            out.push_back(std::move(f));
            continue;
        }
        std::error_code ec;
        const auto size = fs::file_size(*resolved, ec);
        if (ec) {
            f.note = "cannot read it: " + ec.message();
            out.push_back(std::move(f));
            continue;
        }
        auto text = read_file(*resolved, std::max<std::uint64_t>(size, 1));
        if (!text) {
            f.note = "cannot read it: " + text.error().message;
        } else if (text->find('\0') != std::string::npos) {
            f.note = "a binary file of " + std::to_string(size) + " bytes; not shown";
        } else if (text->size() > options_.max_file_size) {
            text->resize(utf8_cut(*text, options_.max_file_size));
            f.note = "cut at " + std::to_string(text->size()) + " of " + std::to_string(size) +
                     " bytes; RUN_COMMAND with sed -n 'N,Mp' shows the rest";
            f.content = std::move(*text);
        } else {
            f.content = std::move(*text);
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace cocode::protocol
