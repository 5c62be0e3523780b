// Running a program to completion and capturing what it prints: git (through git/cli.h), the
// tools themselves in tests, a CLI's --version. Started through spawn.h like every process.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode {

struct CommandResult {
    int exit_code = -1;  // 128+N when killed by signal N, as a shell reports it
    std::string out;
    std::string err;
    bool timed_out = false;  // the deadline passed: it was ended, with its group
};

struct CommandOptions {
    std::optional<std::filesystem::path> cwd;
    // When set, the child's whole environment ("NAME=value" entries); else ours.
    std::optional<std::vector<std::string>> environment;
    std::string input;  // written to the child's stdin, then closed
    // When set, readable by the child on its descriptor 3, a pipe holding it (and nothing
    // else): what must reach a child and its own children but no environment, command line
    // or file (a credential for git's credential helper).
    std::optional<std::string> fd3_input;
    // When set, the child runs in a group of its own and is ended with it (SIGTERM, then
    // SIGKILL) once this much time has passed since it started.
    std::optional<std::chrono::milliseconds> deadline;
    // When set, given each piece of the child's stderr as it comes (it is kept in `err` too):
    // a parent that relays a child's progress as it goes.
    std::function<void(std::string_view)> on_err;
};

// Starts argv[0] (looked up in PATH when it has no '/') and waits for it.
// A program that cannot be found is ExitCode::missing_dependency.
Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const CommandOptions& options = {});

// The first line of a command's output, without its newline.
inline std::string first_line(std::string_view text) {
    return std::string(text.substr(0, text.find('\n')));
}

// A word as `sh -c` reads it back as itself: as it is when it needs no quotes, else in single
// quotes. And a command line of such words.
std::string shell_quote(const std::string& word);
std::string shell_command(const std::vector<std::string>& argv);

// The absolute path of `name` in PATH, or nullopt.
std::optional<std::filesystem::path> find_in_path(const std::string& name);

// Why find_in_path(name) found nothing, for a person: "not found in PATH", "not found",
// "is a folder", "is not executable (chmod +x …)", "… is in /dir but not executable".
std::string why_not_found(const std::string& name);

}  // namespace cocode
