// Which run, if any, a commit belongs to.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "git/git_files.h"

namespace cocode::hook {

struct RunLocation {
    std::filesystem::path run_folder;
    std::string found_by;  // "JRUN_RUN_FOLDER" or the pointer file's path, for messages
};

// From `JRUN_RUN_FOLDER` when non-empty, else from the pointer file in the worktree's own git
// folder. nullopt: not in a run. An error: there is a run reference but it is unusable (a
// corrupt pointer, a folder that vanished), worth one line to the user.
Result<std::optional<RunLocation>> locate_run(const char* run_folder_env,
                                              const std::optional<git::GitDirs>& dirs);

// Writes the pointer file atomically (used by cocode-dispatch when it makes a worktree).
Result<void> write_run_pointer(const std::filesystem::path& worktree_git_dir,
                               const std::filesystem::path& run_folder);

}  // namespace cocode::hook
