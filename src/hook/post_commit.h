// What git's post-commit hook does in a cocode run: the commit just made is recorded as READY
// when its message carries the marker. One function for both programs that do it: the shim git
// starts (which reads the commit from git's files only and hands over to cocode-hook when they
// do not hold it) and `cocode-hook post-commit` (which can also ask the git CLI).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/result.h"
#include "core/run_id.h"
#include "git/git_files.h"

namespace cocode::hook {

// What git hands a hook, and the run's environment.
struct PostCommitEnv {
    std::filesystem::path cwd;           // git starts hooks at the top of the work tree
    const char* git_dir = nullptr;       // GIT_DIR (set by git in linked worktrees)
    const char* run_folder = nullptr;    // JRUN_RUN_FOLDER
    const char* ready_marker = nullptr;  // COCODE_READY_MARKER
};

struct HeadCommit {
    std::string id;
    std::string message;
};

// HEAD's id and message from the files git has just written; nullopt when they are not in a
// form read here (a packed object, a reftable).
std::optional<HeadCommit> head_from_files(const std::optional<git::GitDirs>& dirs);

// Reads HEAD some other way when its files do not hold it (cocode-hook asks the git CLI).
using HeadFallback = std::function<Result<HeadCommit>(const std::optional<git::GitDirs>&)>;

struct PostCommitOutcome {
    enum class Kind {
        not_in_run,      // nothing to do, nothing to say
        done,            // recorded, or nothing to record
        head_elsewhere,  // HEAD is not in git's files and there was no fallback
        failed,          // said in `line`; the commit stands all the same
    };
    Kind kind = Kind::not_in_run;
    std::string line;  // the one line for stderr (redacted), empty for none
};

// One post-commit: finds the run (JRUN_RUN_FOLDER, else the worktree's run pointer), reads the
// new commit (from git's files, else through `fallback` when given) and records READY when it
// carries the marker. Never throws for what it finds on disk: that is a `failed` line.
PostCommitOutcome post_commit(const PostCommitEnv& env, const HeadFallback* fallback,
                              SystemTime now);

}  // namespace cocode::hook
