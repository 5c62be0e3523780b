// Running a program to completion and capturing what it prints: the git CLI, the tools
// themselves in tests. (Supervising long-lived agents is a different job; see proc/ later.)
#pragma once

#include <filesystem>
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
};

struct CommandOptions {
    std::optional<std::filesystem::path> cwd;
    // When set, the child's whole environment ("NAME=value" entries); else ours.
    std::optional<std::vector<std::string>> environment;
    std::string input;  // written to the child's stdin, then closed
};

// Starts argv[0] (looked up in PATH when it has no '/') with posix_spawn and waits for it.
// A program that cannot be found is ExitCode::missing_dependency.
Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const CommandOptions& options = {});

// The first line of a command's output, without its newline.
inline std::string first_line(std::string_view text) {
    return std::string(text.substr(0, text.find('\n')));
}

// The absolute path of `name` in PATH, or nullopt.
std::optional<std::filesystem::path> find_in_path(const std::string& name);

// Why find_in_path(name) found nothing, for a person: "not found in PATH", "not found",
// "is a folder", "is not executable (chmod +x …)", "… is in /dir but not executable".
std::string why_not_found(const std::string& name);

}  // namespace cocode
