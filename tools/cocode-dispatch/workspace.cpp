#include "workspace.h"

#include <algorithm>
#include <cstdio>

#include "core/files.h"
#include "core/redact.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "git/repository.h"
#include "github/types.h"
#include "issues/local_source.h"
#include "replay/run.h"
#include "run/run_folder.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

fs::path Workspace::runs_dir() const { return root / run::kRunsDir; }

std::string Workspace::project_id() const {
    if (auto repo = git::Repository::open(root)) {
        if (auto url = repo->remote_url("origin")) {
            if (auto remote = github::parse_remote_url(*url))
                return remote->repo.owner + "/" + remote->repo.name;
        }
    }
    return root.filename().string();
}

Workspace open_workspace(bool load_config) {
    auto repo = git::Repository::open(fs::current_path());
    if (!repo) throw Failure(Error::usage(repo.error().message));  // as git: exit 2
    Workspace ws;
    ws.root = repo->main_work_dir();
    if (ws.root.empty()) throw Failure(Error::usage("cocode needs a repository with a work tree"));
    if (load_config) ws.config = config::load_config(ws.root).value_or_throw();
    return ws;
}

std::vector<std::string> changes_agents_will_not_see(const Workspace& ws) {
    std::vector<std::string> out;
    auto repo = git::Repository::open(ws.root);
    if (!repo) return out;
    auto paths = repo->uncommitted_paths();
    if (!paths) return out;
    for (auto& path : *paths)
        if (path.rfind(".cocode/", 0) != 0) out.push_back(std::move(path));
    return out;
}

std::vector<std::string> completion_values(const std::string& name) {
    std::vector<std::string> out;
    auto repo = git::Repository::open(fs::current_path());
    if (!repo) return out;
    const fs::path root = repo->main_work_dir();
    if (name == "--agent") {
        if (auto config = config::load_config(root))
            for (const auto& agent : config->agents) out.push_back(agent.name);
        return out;
    }
    // An option's own choices (what its check takes).
    if (name == "--by") return {"agent", "model", "kind", "issue", "day"};
    if (name == "--source") return {"live", "replay", "all"};
    if (name == "shell") return {"bash", "zsh", "fish"};
    // Issue numbers of the local store, only where an issue or a run is named.
    if (name != "issue" && name != "number" && name != "which" && name != "run") return out;
    for (long number : issues::local_issue_numbers(root / issues::kLocalIssuesDir))
        out.push_back(std::to_string(number));
    const std::size_t issue_count = out.size();
    std::error_code ec;
    if (name == "which" || name == "run")  // status, logs, clean: run ids too
        for (const auto& entry : list_folder(root / run::kRunsDir, ec))
            if (entry.is_directory && is_run_id(entry.path.filename().string()))
                out.push_back(entry.path.filename().string());
    std::sort(out.begin() + static_cast<long>(issue_count), out.end());
    return out;
}

std::vector<run::RunRecord> select_runs(const Workspace& ws,
                                        const std::optional<std::string>& which, RunScope scope) {
    auto list = run::list_runs(ws.runs_dir());
    for (const auto& problem : list.problems) notice("warning: " + problem);
    std::vector<run::RunRecord> out;
    // Digits name an issue when some run is on that issue; otherwise they are the start of
    // a run id like any other ("2026" is this year's runs, `logs` and `clean` alike). Fewer
    // than a year's four are an issue whatever: `clean 2` with no run on issue 2 is no run,
    // never every run whose id starts with a 2.
    const bool digits = which && !which->empty() &&
                        which->find_first_not_of("0123456789") == std::string::npos &&
                        which->size() < 12;
    const bool by_issue =
        digits && (which->size() < 4 ||
                   std::any_of(list.runs.begin(), list.runs.end(), [&](const run::RunRecord& r) {
                       return r.issue == std::stol(*which);
                   }));
    for (auto& record : list.runs) {
        if (which && !which->empty()) {
            if (by_issue ? record.issue != std::stol(*which) : record.run_id.rfind(*which, 0) != 0)
                continue;
        }
        if (auto reconciled = run::reconcile(record); !reconciled)
            notice("warning: " + reconciled.error().message);
        out.push_back(record);
    }
    // A run id `replay run` printed: its run is in its replay's own repository.
    if (which && !which->empty() && out.empty() && !by_issue && scope == RunScope::with_replays)
        if (auto repo = git::Repository::open(ws.root)) {
            std::error_code ec;
            for (const auto& space : list_folder(replay::replay_runs_dir(repo->common_dir()), ec)) {
                for (auto& record : run::list_runs(space.path / "repo" / run::kRunsDir).runs) {
                    if (record.run_id.rfind(*which, 0) != 0) continue;
                    if (auto reconciled = run::reconcile(record); !reconciled)
                        notice("warning: " + reconciled.error().message);
                    out.push_back(record);
                }
            }
        }
    if (which && !which->empty() && out.empty())
        throw Failure(Error::usage("no run matches '" + *which + "' in " + ws.runs_dir().string()));
    return out;
}

void notice(std::string_view text) {
    // Pieces from issues and agents are made terminal-safe where they are put in; the whole
    // line again (it stays as it is) for any that were not, and for the Actions runner.
    std::fprintf(stderr, "cocode-dispatch: %s\n", terminal_safe(redact(text)).c_str());
}

github::GitHub& github_of(issues::IssueSource& source, const std::string& what) {
    if (github::GitHub* github = source.github_api()) return *github;
    throw Failure(Error::usage(what +
                               ": the pull request is on GitHub; this repository's issues are a "
                               "local folder (give --repo)"));
}

// --since: a number of days ("7d"), a duration ("12h"), or a day ("2026-11-20", UTC).
std::chrono::system_clock::time_point since_flag(const std::string& text) {
    using SystemClock = std::chrono::system_clock;
    const auto now = SystemClock::now();
    if (text.size() >= 2 && text.back() == 'd' && text.size() <= 6 &&
        text.find_first_not_of("0123456789") == text.size() - 1)
        return now - std::chrono::hours(24) * std::stoi(text.substr(0, text.size() - 1));
    if (text.size() == 10 && text[4] == '-' && text[7] == '-')
        if (auto day = parse_utc_timestamp(text + "T00:00:00Z")) return *day;
    if (auto duration = config::parse_duration(text)) return now - *duration;
    throw Failure(Error::usage("--since " + text +
                               ": expected a number of days (7d), a duration (12h) or a day "
                               "(2026-11-20)"));
}

}  // namespace cocode::dispatch_cli
