// cocode-dispatch clean: remove runs' worktrees and branches, never work that exists nowhere
// else unless --force.
#include <cstdio>
#include <set>

#include "commands.h"
#include "git/repository.h"
#include "proc/command.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

namespace {

// Commits on the branch after its base that no remote-tracking ref holds.
int unpushed_commits(const fs::path& root, const run::RunRecord& r) {
    std::vector<std::string> argv = {"git",      "-C",      root.string(),
                                     "rev-list", "--count", "refs/heads/" + r.branch};
    if (!r.base_commit.empty()) argv.push_back("^" + r.base_commit);
    argv.push_back("--not");
    argv.push_back("--remotes");
    auto result = run_command(argv);
    if (!result || result->exit_code != 0) return 0;
    return std::atoi(result->out.c_str());
}

}  // namespace

int run_clean(const CleanArgs& args) {
    if (!args.all && !args.which)
        throw Failure(Error::usage("clean: name a RUN or an ISSUE, or give --all"));
    if (args.all && args.which) throw Failure(Error::usage("clean: --all takes no RUN or ISSUE"));
    Workspace ws = open_workspace(false);
    auto runs = select_runs(ws, args.all ? std::nullopt : args.which);
    auto repo = git::Repository::open(ws.root).value_or_throw();
    const auto worktrees = repo.worktrees().value_or_throw();
    std::set<std::string> branches_done;
    int refused = 0, removed = 0;
    for (const auto& r : runs) {
        if (r.branch.empty() || !branches_done.insert(r.branch).second) continue;
        if (run::is_active(r.status)) {
            std::fprintf(stderr, "cocode-dispatch: %s is still %s; not cleaned\n", r.run_id.c_str(),
                         std::string(run::status_name(r.status)).c_str());
            ++refused;
            continue;
        }
        const bool has_branch = repo.branch_exists(r.branch);
        if (has_branch && !args.force) {
            if (int n = unpushed_commits(ws.root, r); n > 0) {
                std::fprintf(stderr,
                             "cocode-dispatch: %s holds %d commit%s not pushed anywhere; kept "
                             "(--force drops it)\n",
                             r.branch.c_str(), n, n == 1 ? "" : "s");
                ++refused;
                continue;
            }
        }
        std::string name = r.worktree.filename().string();
        std::error_code ec;
        bool registered = std::any_of(worktrees.begin(), worktrees.end(),
                                      [&](const git::WorktreeInfo& w) { return w.name == name; });
        if (registered) {
            if (auto ok = repo.remove_worktree(name, args.force); !ok) {
                std::fprintf(stderr, "cocode-dispatch: %s: %s (--force removes it anyway)\n",
                             r.worktree.c_str(), ok.error().message.c_str());
                ++refused;
                continue;
            }
        } else if (fs::exists(r.worktree, ec)) {
            fs::remove_all(r.worktree, ec);
        }
        if (has_branch) repo.delete_branch(r.branch).value_or_throw();
        std::printf("removed %s and branch %s\n", r.worktree.c_str(), r.branch.c_str());
        ++removed;
    }
    (void)repo.prune_worktrees();
    if (removed == 0 && refused == 0) std::printf("nothing to clean\n");
    return refused > 0 ? static_cast<int>(ExitCode::general) : 0;
}

}  // namespace cocode::dispatch_cli
