// The replay set (docs/report.md, "The replay set"): tasks mined from the repository's own
// history — a change that touched code and tests, its parent the base, its test files hidden
// from the agent, its verify commands split into those that must go from failing to passing
// (FAIL_TO_PASS) and those that must keep passing (PASS_TO_PASS). A task is a folder a team
// can commit, share or export: `.cocode/replay/tasks/<id>/task.json` and the hidden tests as a
// patch. The decisions here are pure, tabled in tests/unit/replay_test.cpp.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "git/history.h"
#include "git/repository.h"

namespace cocode::replay {

inline constexpr char kTasksDir[] = ".cocode/replay/tasks";
inline constexpr char kTaskFile[] = "task.json";
inline constexpr char kHiddenTestsFile[] = "hidden-tests.patch";

// What the agent is told: the issue the change closes, else its pull request's description,
// else its commit message.
struct Statement {
    std::string title;
    std::string body;
    std::string source;  // "issue #3", "pull request #12", "commit message"
};

struct Task {
    std::string id;      // the change's commit, its first 12 hex digits
    std::string commit;  // the change
    std::string base;    // its parent
    Statement statement;
    std::vector<std::string> hidden_tests;  // the change's test files
    // Verify commands by name: failing at the base with the hidden tests and passing at the
    // change; passing at both; and those left out because a run of them flipped.
    std::vector<std::string> fail_to_pass;
    std::vector<std::string> pass_to_pass;
    std::vector<std::string> flaky;
    std::vector<config::VerifyCommand> verify;  // every command named above, as mined
    std::string kind;                           // the work's kind (check/scorecard.h): "fix/S"
    int lines = 0;                              // added and removed
    std::string mined_at;
};

nlohmann::json task_json(const Task& task);
// A task.json read; `where` names it in errors (exit 2: a file people edit and share).
Result<Task> task_from_json(const nlohmann::json& value, const std::string& where);

// Writes the task's folder whole or not at all (made aside, then renamed in).
Result<void> write_task(const std::filesystem::path& tasks_dir, const Task& task,
                        const std::string& hidden_tests_patch);
// Every task of the folder, by id; an unreadable one is an error naming its file.
Result<std::vector<Task>> list_tasks(const std::filesystem::path& tasks_dir);

// What a change may become.
struct MineLimits {
    int max_lines = 1000;  // added and removed
    int max_files = 50;
    std::vector<std::string> paths;  // globs: the change must touch a file of code matching one
};

// Why `commit` (with its first-parent diff `files`) is no task — a merge, rename-only,
// binary-only, over a limit, no test or no code touched, no path of `--paths` — or "" when it
// may be one; then `tests` holds its test files.
std::string why_no_task(const git::HistoryCommit& commit, const std::vector<git::FileChange>& files,
                        const MineLimits& limits, std::vector<std::string>& tests);

// The issue a commit message says it closes ("Fixes #12", "closes #3", "Resolves #7"), and the
// pull request it merged ("Merge pull request #12 from …", a squash's "… (#12)").
std::optional<long> closed_issue(std::string_view message);
std::optional<long> merged_pull(std::string_view message);
Statement statement_of_message(std::string_view message);

// A verify command's runs, pass or not, at the base with the hidden tests and at the change.
struct CommandRuns {
    std::string name;
    std::vector<bool> at_base;
    std::vector<bool> at_change;
};
struct TestSplit {
    std::vector<std::string> fail_to_pass, pass_to_pass, flaky;
    std::string why_not;  // "" when it is a task
};
// A command failing at the change every time means the change does not pass its own tests,
// however it did at the base. Else a command whose runs at one commit disagree is flaky: left
// out. Then FAIL_TO_PASS and PASS_TO_PASS; no FAIL_TO_PASS means its tests do not fail at its
// base: no task either way.
TestSplit split_tests(const std::vector<CommandRuns>& runs);

// Which command to run once more at the change and at the base, after `runs` (each at most
// `repeats` long). While some command may still go from failing to passing, every command
// runs `repeats` times at both. Once none can, there is no task, and only a command that has
// failed at the change every time yet runs again there (it names the reason); the rest is
// not run. A change whose tests pass at its base is decided in two runs, not six, and
// split_tests says of the runs made what it would have said of all of them.
struct NextRuns {
    std::vector<bool> at_change, at_base;  // per command
    bool any() const;
};
NextRuns runs_still_needed(const std::vector<CommandRuns>& runs, int repeats);

}  // namespace cocode::replay
