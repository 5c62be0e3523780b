#include "hook/pre_push.h"

#include <sstream>

#include "git/cli.h"
#include "git/git_files.h"
#include "run/states.h"

namespace cocode::hook {
namespace fs = std::filesystem;

namespace {

bool all_zeros(const std::string& sha) { return sha.find_first_not_of('0') == std::string::npos; }

class RepositoryView : public PushView {
  public:
    explicit RepositoryView(fs::path root) : root_(std::move(root)) {}

    std::optional<run::RunRecord> run_of(const std::string& branch) override {
        std::optional<run::RunRecord> found;
        for (auto& record : run::list_runs(root_ / run::kRunsDir).runs)
            if (record.branch == branch) found = record;
        return found;
    }

    Result<std::string> marked_commit(const std::string& local_sha, const std::string& remote_sha,
                                      const std::string& remote,
                                      const std::string& marker) override {
        // Most pushes are not cocode's and send a few loose commits on top of what the remote
        // has: a walk of those answers "no marker" without starting git.
        if (auto dirs = git::locate_git_dirs(root_, nullptr)) {
            auto stops = all_zeros(remote_sha) ? git::remote_tips(dirs->common_dir, remote)
                                               : std::vector<std::string>{remote_sha};
            if (stops && git::loose_walk_finds(dirs->common_dir, local_sha, *stops, marker) ==
                             std::optional<bool>(false))
                return std::string();
        }
        return git::git_line(
            {}, {"rev-list", "-n", "1", "--fixed-strings", "--grep=" + marker, local_sha, "--not",
                 all_zeros(remote_sha) ? "--remotes=" + remote : remote_sha});
    }

    Result<std::string> new_branch_base(const std::string& local_sha,
                                        const std::string& remote) override {
        auto oldest =
            git::git_line({}, {"rev-list", "--reverse", local_sha, "--not", "--remotes=" + remote});
        if (!oldest) return std::move(oldest).error();
        // A root commit has no parent: git exits 1 with nothing to say.
        auto parent = git::run_git({}, {"rev-parse", "--verify", "--quiet", *oldest + "^"});
        if (!parent) return std::move(parent).error();
        return parent->exit_code == 0 ? first_line(parent->out) : std::string();
    }

  private:
    fs::path root_;
};

}  // namespace

std::optional<PushedRef> parse_pushed_ref(const std::string& line) {
    std::istringstream fields(line);
    PushedRef ref;
    if (!(fields >> ref.local_ref >> ref.local_sha >> ref.remote_ref >> ref.remote_sha))
        return std::nullopt;
    return ref;
}

std::unique_ptr<PushView> repository_view(const fs::path& root) {
    return std::make_unique<RepositoryView>(root);
}

Result<GateDecision> decide_push(const PushedRef& ref, const std::string& remote,
                                 const GateRules& rules, PushView& view) {
    GateDecision d;
    // A deletion, or anything but a branch (tags): not checked.
    if (all_zeros(ref.local_sha) || ref.local_ref.rfind("refs/heads/", 0) != 0) return d;
    const std::string branch = ref.local_ref.substr(11);
    auto run = rules.branch_prefix.empty() || branch.rfind(rules.branch_prefix, 0) != 0
                   ? std::nullopt
                   : view.run_of(branch);
    d.check = true;
    // A run that ended is judged as a run: its own rules, base and marker.
    if (run && !run::is_active(run->status)) {
        d.check_args = {"--run", run->run_id};
        d.why = "run " + run->run_id;
        return d;
    }
    std::string base;
    if (run) {
        base = run->base_commit;
        d.why =
            "run " + run->run_id + " (still " + std::string(run::status_name(run->status)) + ")";
    } else {
        auto marked = view.marked_commit(ref.local_sha, ref.remote_sha, remote, rules.ready_marker);
        if (!marked) return std::move(marked).error();
        if (marked->empty()) return GateDecision{};  // not cocode's work: untouched
        d.why = "the ready marker in the pushed commits";
        if (!all_zeros(ref.remote_sha)) {
            base = ref.remote_sha;
        } else {
            // A new branch: from the parent of its oldest commit no remote has.
            auto parent = view.new_branch_base(ref.local_sha, remote);
            if (!parent) return std::move(parent).error();
            base = *parent;
        }
        if (base.empty()) return GateDecision{};  // nothing to compare with: a root commit
    }
    // The verify commands run in a clean tree of exactly the pushed commit, whatever is
    // checked out here (check/clean_tree.h).
    d.check_args = {"--worktree", ".", "--base", base, "--head", ref.local_sha, "--branch", branch};
    if (run)
        d.check_args.insert(d.check_args.end(),
                            {"--issue", std::to_string(run->issue), "--agent", run->agent});
    return d;
}

}  // namespace cocode::hook
