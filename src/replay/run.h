// `cocode-dispatch replay run` (docs/report.md, "The replay set"): each (task, agent) as a
// normal cocode run at the task's base — in a repository of its own that holds the base and
// its history and nothing after it (no later commit, tree or blob in its objects, packs, refs,
// reflogs or stash), while the main repository is hidden from the agent's sandbox. The task's
// verify commands judge it, each first putting the hidden tests in the clean tree of the
// agent's commit: PASS only when every FAIL_TO_PASS and PASS_TO_PASS command passes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "replay/task.h"

namespace cocode::replay {

// Where a replay's repositories are: <git common dir>/cocode/replay/runs/<name>/repo.
std::filesystem::path replay_runs_dir(const std::filesystem::path& common_dir);

struct ReplaySpace {
    std::filesystem::path folder;  // <runs dir>/<name>: the patch and its script, beside repo
    std::filesystem::path repo;    // the task's own repository, at its base, on branch main
    long issue = 1;                // the issue the agent is told, in repo/.cocode/issues/
};

// Makes the space of one replay named `name` of `task` (whose folder is `task_dir`), from the
// main repository at `main_root`: the repository (the base and its history, fetched), the
// issue (the statement, labelled with the task's type of work), the configuration (the main
// one, its base branch `main`, its verify commands the task's) and the hidden tests' patch
// with the script that puts them in.
Result<ReplaySpace> make_replay_space(const std::filesystem::path& main_root, const Task& task,
                                      const std::filesystem::path& task_dir,
                                      const std::string& name);

// What a replay's agent must not see — its answer is on the same disk: the main repository,
// and its git folder wherever that is (a linked worktree's is outside it).
std::vector<std::string> hidden_from_replays(const std::filesystem::path& main_root,
                                             const std::filesystem::path& common_dir);

// `replay run`'s exit code from its runs' (in order): a missing dependency (3) said by any,
// else the first that failed, else 0.
int replay_exit_code(const std::vector<int>& codes);

// The agent's program, where the replay's repository `repo` has it: a script the main
// repository (at `main_root`) does not track (the README's `.cocode/fix.sh`) is copied in where
// `run` would find it, as it is in the main worktree (a regular file, no link followed). A
// program outside the repository, or tracked (the task has it as it was), is left. An error
// (missing dependency) when the replay could not reach it: the main repository is hidden.
Result<void> bring_program(const std::filesystem::path& main_root, const std::string& agent,
                           const std::vector<std::string>& argv, const std::filesystem::path& repo);

// The script a task's verify commands run first, in the clean tree of the agent's commit: each
// hidden test file as the base had it (or none), then the patch — whatever the agent did to
// those files, the tests are the change's.
std::string hidden_tests_script(const std::string& base, const std::vector<std::string>& at_base,
                                const std::vector<std::string>& new_files,
                                const std::filesystem::path& patch);

}  // namespace cocode::replay
