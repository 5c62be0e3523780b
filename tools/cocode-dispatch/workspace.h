// What every dispatch subcommand starts from: the repository's main worktree, its
// configuration, and its runs.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "issues/source.h"
#include "run/run_folder.h"

namespace cocode::dispatch_cli {

struct Workspace {
    std::filesystem::path root;  // the main worktree, absolute
    config::Config config;
    std::filesystem::path runs_dir() const;
    std::string project_id() const;  // owner/name of origin when on GitHub, else the folder
};

// From the current folder (any worktree of the repository, linked ones included).
Workspace open_workspace(bool load_config = true);

// The runs `which` names: a run id (or a unique prefix of one), an issue number (all its
// runs), or every run when empty. Runs whose dispatcher is gone are reconciled first, so
// what is returned is the truth, and written so. `with_replays`: a run id found nowhere else
// is looked for among the replays' runs (each in its replay's repository), for `logs` and
// `status` of the ids `replay run` prints.
enum class RunScope { here, with_replays };
std::vector<run::RunRecord> select_runs(const Workspace& ws,
                                        const std::optional<std::string>& which,
                                        RunScope scope = RunScope::here);

// Changes in the main worktree that are not committed (cocode's own .cocode/ aside): agents
// start from the last commit and will not see them. Empty when there are none or git
// cannot tell.
std::vector<std::string> changes_agents_will_not_see(const Workspace& ws);

// What the shell completion offers for an option or positional of cocode-dispatch: agent
// names from the configuration (--agent), issue numbers from the local issue store, run ids.
// Empty outside a repository or when nothing can be read.
std::vector<std::string> completion_values(const std::string& name);

// --since: a number of days ("7d"), a duration ("12h"), or a day ("2026-11-20", UTC), back
// from now; a usage error naming what it takes.
std::chrono::system_clock::time_point since_flag(const std::string& text);

// One line to stderr, prefixed with the tool's name, redacted.
void notice(std::string_view text);

// The REST API behind `source`, for what happens on a pull request; a usage error naming
// `what` ("gate", "continue --event") when the issues are a local folder.
github::GitHub& github_of(issues::IssueSource& source, const std::string& what);

}  // namespace cocode::dispatch_cli
