// Carrying out a model's commands in a worktree, distrusting every one of them
// (docs/protocols.md): paths resolved canonically inside the root (absolute paths, `..`
// escapes, symbolic links that lead out, dangling links and .git refused with `REJECTED:`),
// writes capped in size and made without following a final link, commands run with
// /bin/sh -c in their own process group with the agent's environment minus its secrets, ended
// at their timeout with everything they started, their output capped.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "protocol/textproto.h"

namespace cocode::protocol {

// `relative` resolved inside `root` (which must be canonical), following symbolic links, or an
// Error whose message is the REJECTED: text the model sees.
Result<std::filesystem::path> resolve_in_workspace(const std::filesystem::path& root,
                                                   const std::string& relative);

// The workspace's files, relative: git's view (tracked, and untracked but not ignored) when it
// is a git worktree, else every file below it but .git.
std::vector<std::string> list_workspace(const std::filesystem::path& root);

// A file's size by lstat, nullopt when it is not there: render_listing's size_of.
std::optional<std::uint64_t> size_in(const std::filesystem::path& root,
                                     const std::string& relative);

// The CONTEXT section's listing of the worktree at `root` (list_workspace, render_listing).
std::string workspace_listing(const std::filesystem::path& root, std::size_t limit);

struct ShellResult {
    int exit_code = -1;  // 128+N for signal N
    bool timed_out = false;
    std::string output;              // stdout and stderr interleaved, capped
    std::uint64_t output_bytes = 0;  // all it wrote
};

// `/bin/sh -c command` in `cwd`, in a process group of its own with exactly `environment`
// plus a tag of its own; at `timeout` its group and every process carrying the tag get
// SIGTERM, then SIGKILL after `grace`; when the shell exits, whatever it left running is
// ended the same way. Output beyond `cap` characters is read and dropped.
ShellResult run_shell(const std::string& command, const std::filesystem::path& cwd,
                      const std::vector<std::string>& environment,
                      std::chrono::milliseconds timeout, std::size_t cap,
                      std::chrono::milliseconds grace = std::chrono::seconds(2));

struct ExecutorOptions {
    std::filesystem::path root;  // the worktree
    std::chrono::milliseconds command_timeout{std::chrono::seconds(30)};
    std::size_t output_cap = 4000;                         // characters of a command's output
    std::uint64_t max_file_size = std::uint64_t{1} << 20;  // a file written or shown
    std::vector<std::string> environment;        // for RUN_COMMAND: the agent's, without secrets
    std::function<void(std::string_view)> show;  // MESSAGE bodies, and a line per command
};

// One inbox's commands, in order, up to DONE.
struct Execution {
    std::vector<Outcome> results;
    std::vector<std::string> read_requests;  // READ_FILE paths, for the next outbox
    bool done = false;
    std::string summary;  // DONE's
};

class Executor {
  public:
    explicit Executor(ExecutorOptions options);
    Execution execute(const std::vector<Command>& commands);
    Outcome execute_one(const Command& command);

    // The files asked for, read now (each capped at max_file_size, binary files not shown).
    std::vector<RequestedFile> read_requested(const std::vector<std::string>& paths) const;

    const ExecutorOptions& options() const { return options_; }

  private:
    ExecutorOptions options_;
};

}  // namespace cocode::protocol
