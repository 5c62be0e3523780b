// The one door to git's command line: every git command cocode runs goes through here (libgit2
// does the rest, in repository.h; git's files are read in git_files.h). A command has its
// arguments, the folder it runs in (git -C), optionally its input and its whole environment,
// and a deadline after which it is ended with everything it started. A git that fails is an
// error naming the command, the folder and the first line of what git said — never an empty
// answer — unless the caller asks for git's exit code as the answer (check-ignore, a config
// key that may be unset).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "proc/command.h"

namespace cocode::git {

// A credential for one origin, handed to git by a credential helper of ours that reads it from
// a pipe (never from an environment, a command line or a file).
struct GitCredential {
    std::string url;  // "https://github.com": the only origin it is given to
    std::string username;
    std::string password;
};

struct GitOptions {
    std::string input;  // written to git's stdin
    // git's whole environment ("NAME=value" entries); else ours. cocode's secrets are taken
    // out of either (proc/environment.h): a git child never holds the GitHub token.
    std::optional<std::vector<std::string>> environment;
    // Whether git may run hooks and the file system monitor its configuration names: only for
    // an agent's own git (a built-in agent's commit, in its sandbox). cocode's git on the host
    // runs none: a hook or fsmonitor setting an agent left would run as the user.
    bool hooks = false;
    std::optional<GitCredential> credential;  // a push's
    // Generous: a fetch or a push of a large repository over a slow link.
    std::chrono::milliseconds deadline = std::chrono::minutes(10);
};

// `git -C dir args…` (`dir` empty: where we are), run to its end or its deadline, with
// GIT_TERMINAL_PROMPT=0 (it never waits for a password on a terminal), no hooks and no
// fsmonitor (unless `hooks`), and none of cocode's secrets in its environment: what it printed
// and its exit code, whatever that is. An error only when git cannot be started or ran past
// its deadline.
Result<CommandResult> run_git(const std::filesystem::path& dir,
                              const std::vector<std::string>& args, const GitOptions& options = {});

// What it printed when it exits 0; else an error: "git <args>: <git's first line> (in <dir>)".
Result<std::string> git_output(const std::filesystem::path& dir,
                               const std::vector<std::string>& args,
                               const GitOptions& options = {});

// The environment for cocode's git where it reads or writes files an agent wrote (a checkout
// of its commit, the index of its worktree): neither the user's nor the system's
// configuration, so that no filter, no LFS, no driver an attribute of the agent's names is
// defined, and none runs.
std::vector<std::string> environment_without_config();

// The first line of git_output, without its newline.
Result<std::string> git_line(const std::filesystem::path& dir, const std::vector<std::string>& args,
                             const GitOptions& options = {});

// Whether `text` is a full object id (40 hex digits, or 64 for SHA-256), as a value read from
// a run must be before it goes to git as a revision.
bool is_object_id(std::string_view text);

// The branch `branch` as origin has it (what a pull request on it shows): fetched into
// refs/remotes/origin/, and made a local branch there when there is none of that name yet (one
// that is there is left as it is). A round on a fresh runner (scale/pull_feedback.h). `fetch`:
// git's options for the fetch (the credential for origin: github/git_remote.h).
Result<void> branch_from_origin(const std::filesystem::path& dir, const std::string& branch,
                                const GitOptions& fetch = {});

// `git --version`'s line ("git version 2.39.5"); an error when git is missing (3) or fails.
Result<std::string> cli_version();

}  // namespace cocode::git
