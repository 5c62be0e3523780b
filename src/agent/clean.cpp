#include "agent/clean.h"

#include <algorithm>
#include <map>
#include <set>

#include "environment/store.h"
#include "git/agent_repo.h"
#include "git/repository.h"
#include "proc/environment.h"
#include "run/checking.h"
#include "run/seal.h"

namespace cocode::agent {
namespace fs = std::filesystem;

namespace {

std::string plural(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

bool present(const fs::path& path) {
    std::error_code ec;
    return fs::symlink_status(path, ec).type() != fs::file_type::not_found;
}

// A folder of a run's, by its seal: removed with everything in it, links as links.
CleanStep remove_folder(const fs::path& path, const std::string& what) {
    CleanStep step{what + " " + path.string(), false, ""};
    if (auto removed = remove_tree(path); !removed) {
        step.why = removed.error().message;
        return step;
    }
    step.removed = !present(path);
    if (!step.removed) step.why = "still there after removing it";
    return step;
}

// What cocode made for a run, from its seal (which the agent could not write) and the
// configuration: its branch, its base, and its worktree, `<worktree_root>/<pair>`; nullopt
// when there is no seal, or it names a branch that is not one of cocode's.
struct Made {
    std::string branch, base;
    fs::path worktree;
};
std::optional<Made> made_for(const fs::path& repo_root, const run::RunRecord& r,
                             const CleanOptions& options) {
    auto seal = run::read_seal(repo_root, r.folder.filename().string());
    if (!seal || !*seal) return std::nullopt;
    const std::string& branch = (*seal)->branch;
    const std::string name = branch.rfind(options.branch_prefix, 0) == 0
                                 ? branch.substr(options.branch_prefix.size())
                                 : std::string();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." ||
        options.worktree_root.empty())
        return std::nullopt;
    return Made{branch, (*seal)->base_commit, options.worktree_root / name};
}

void clean_run(git::Repository& repo, const Made& made, const CleanOptions& options,
               const std::vector<git::WorktreeInfo>& worktrees, std::vector<CleanStep>& steps) {
    run::RunRecord r;
    r.branch = made.branch;
    r.base_commit = made.base;
    r.worktree = made.worktree;
    const std::string name = r.worktree.filename().string();
    const bool has_branch = repo.branch_exists(r.branch);
    // The branch first: if its work exists nowhere else, the worktree stays with it.
    if (has_branch && !options.force) {
        auto unpushed = repo.unpushed_commits(r.branch, r.base_commit);
        if (!unpushed) {
            steps.push_back({"branch " + r.branch, false,
                             "cannot tell whether its commits are pushed (" +
                                 unpushed.error().message + "); kept (--force drops it)"});
            return;
        }
        if (*unpushed > 0) {
            steps.push_back({"branch " + r.branch, false,
                             "holds " + plural(*unpushed, "commit", "commits") +
                                 " on no other branch and not pushed; kept (--force drops it)"});
            return;
        }
    }
    const auto known = std::find_if(worktrees.begin(), worktrees.end(),
                                    [&](const git::WorktreeInfo& w) { return w.name == name; });
    // Cut off (its .git file lost, to a full disk or a hostile agent): git cannot look inside
    // any more; what is left are the run's files, by its record.
    const bool cut_off = present(r.worktree) && !present(r.worktree / ".git");
    if (cut_off) {
        steps.push_back(remove_folder(r.worktree, "worktree"));
        if (!steps.back().removed) return;
        // Its entry in .git/worktrees/ would keep the branch checked out.
        if (auto pruned = repo.prune_worktrees(); !pruned) {
            steps.push_back({"stale entries of .git/worktrees", false, pruned.error().message});
            return;
        }
    } else if (known != worktrees.end()) {
        CleanStep step{"worktree " + r.worktree.string(), false, ""};
        if (auto ok = repo.remove_worktree(name, options.force, r.worktree); !ok) {
            step.why = ok.error().message + " (--force removes it anyway)";
            steps.push_back(step);
            return;
        }
        step.removed = !present(r.worktree);
        if (!step.removed) step.why = "still there after removing it";
        steps.push_back(step);
        if (!step.removed) return;
    } else if (present(r.worktree)) {
        // The agent's own repository (git/agent_repo.h) says, in the sandbox, whether the
        // worktree holds work it never committed.
        if (!options.force) {
            std::string why;
            if (!options.runner) {
                why = "cannot tell whether it holds uncommitted work";
            } else if (auto status =
                           git::agent_git(options.runner, r.worktree,
                                          "git status --porcelain --untracked-files=normal",
                                          allowlisted_environment(current_environment(), {}), {},
                                          {run::pair_sandbox(repo.main_work_dir() / run::kRunsDir,
                                                             r.worktree.filename().string())
                                               .git()});
                       !status) {
                why = "cannot tell whether it holds uncommitted work (" + status.error().message +
                      ")";
            } else if (!status->empty()) {
                why = "holds uncommitted work";
            }
            if (!why.empty()) {
                steps.push_back({"worktree " + r.worktree.string(), false,
                                 why + "; kept (--force removes it)"});
                return;
            }
        }
        steps.push_back(remove_folder(r.worktree, "worktree"));
        if (!steps.back().removed) return;
    }
    if (has_branch) {
        CleanStep step{"branch " + r.branch, false, ""};
        if (auto ok = repo.delete_branch(r.branch); !ok)
            step.why = ok.error().message;
        else
            step.removed = !repo.branch_exists(r.branch);
        if (!step.removed && step.why.empty()) step.why = "still there after deleting it";
        steps.push_back(step);
    }
}

}  // namespace

std::vector<CleanStep> clean(const fs::path& repo_root, const std::vector<run::RunRecord>& runs,
                             const std::vector<run::RunRecord>& all_runs,
                             const CleanOptions& options) {
    std::vector<CleanStep> steps;
    auto repo = git::Repository::open(repo_root);
    if (!repo) {
        steps.push_back({"repository " + repo_root.string(), false, repo.error().message});
        return steps;
    }
    auto worktrees = repo->worktrees();
    if (!worktrees) {
        steps.push_back({"worktrees of " + repo_root.string(), false, worktrees.error().message});
        return steps;
    }
    // A pair's worktree and branch are its live run's while one is going, whichever of the
    // pair's runs was named (an earlier, ended one shares them): none of it is cleaned.
    // Its agent going, or its check (whose verify runs in a clean tree of the branch).
    std::map<std::string, const run::RunRecord*> live;
    for (const auto& r : all_runs)
        if (run::is_active(r.status) || run::checking_now(repo_root, r.run_id))
            if (const auto made = made_for(repo_root, r, options)) live[made->branch] = &r;
    std::set<std::string> branches_done;
    for (const auto& r : runs) {
        const auto made = made_for(repo_root, r, options);
        if (!made) {
            steps.push_back({"run " + r.run_id, false,
                             "has no seal saying what cocode made for it; its worktree and "
                             "branch are left (remove them by hand)"});
            continue;
        }
        if (!branches_done.insert(made->branch).second) continue;
        if (const auto going = live.find(made->branch); going != live.end()) {
            const run::RunRecord& g = *going->second;
            steps.push_back({"run " + g.run_id, false,
                             "is " +
                                 (run::is_active(g.status) ? std::string(run::status_name(g.status))
                                                           : std::string("being checked")) +
                                 " (its dispatcher is pid " + std::to_string(g.supervisor_pid) +
                                 "); `cocode-dispatch stop " + g.run_id +
                                 "` ends it, then clean removes its worktree and branch (`clean "
                                 "--stop` does both)"});
            continue;
        }
        clean_run(*repo, *made, options, *worktrees, steps);
    }

    // What a run's agent wrote over its environment (its overlay's upper folder), once its
    // worktree is gone.
    for (const auto& r : runs) {
        const auto made = made_for(repo_root, r, options);
        const fs::path view = repo->common_dir() / "cocode" / "views" / r.folder.filename();
        if (!made || run::is_active(r.status) || present(made->worktree) || !present(view))
            continue;
        auto removed = remove_tree(view);
        steps.push_back({"environment overlay " + view.string(), removed.ok(),
                         removed ? "" : removed.error().message});
    }

    // A pair's own HOME and /tmp in the sandbox, once its worktree is gone.
    for (const auto& r : runs) {
        const auto made = made_for(repo_root, r, options);
        if (!made) continue;
        const fs::path own =
            run::pair_sandbox(repo_root / run::kRunsDir, made->worktree.filename().string()).folder;
        if (run::is_active(r.status) || present(made->worktree) || !present(own)) continue;
        auto removed = remove_tree(own);
        steps.push_back({"the agent's HOME, /tmp and repository " + own.string(), removed.ok(),
                         removed ? "" : removed.error().message});
    }

    // Half-made state. A worktree a run recorded whose `.git` file is gone is only files now.
    for (const auto& r : all_runs) {
        const auto made = made_for(repo_root, r, options);
        if (!made || run::is_active(r.status)) continue;
        std::error_code ec;
        if (fs::is_directory(fs::symlink_status(made->worktree, ec)) &&
            !present(made->worktree / ".git"))
            steps.push_back(remove_folder(made->worktree, "worktree"));
    }
    // Entries of .git/worktrees/ whose folder is gone.
    if (auto pruned = repo->prune_worktrees()) {
        for (const auto& name : *pruned)
            steps.push_back({"stale entry .git/worktrees/" + name, true, ""});
    } else {
        steps.push_back({"stale entries of .git/worktrees", false, pruned.error().message});
    }
    // Run folders a start cut short was still making (kMakingPrefix), and run folders without
    // run-info from older versions, which made them in place. Old enough to be nobody's work.
    const fs::path runs_dir = repo_root / run::kRunsDir;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (const auto& entry : list_folder(runs_dir, ec)) {
        const fs::path folder = entry.path;
        const std::string name = folder.filename().string();
        const bool making = name.rfind(run::kMakingPrefix, 0) == 0 &&
                            is_run_id(name.substr(std::string_view(run::kMakingPrefix).size()));
        if (!entry.is_directory || !(making || is_run_id(name))) continue;
        if (!making && present(folder / "run-info.yaml")) continue;
        const auto modified = fs::last_write_time(folder, ec);
        if (ec || now - modified < options.half_made_age) continue;
        steps.push_back(remove_folder(folder, making ? "run folder a start did not finish"
                                                     : "run folder without run-info.yaml"));
    }
    return steps;
}

}  // namespace cocode::agent
