// cocode-hook pre-push: the gate. For each pushed branch that is a cocode run's, or whose
// pushed commits carry the ready marker, cocode-check judges it (nothing published); a FAIL
// stops the push with the report on stderr. Any other push costs one `git rev-list`.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.h"
#include "common/executables.h"
#include "config/config.h"
#include "core/error.h"
#include "git/git_files.h"
#include "proc/command.h"
#include "run/run_folder.h"

namespace cocode::hook_cli {
namespace fs = std::filesystem;

namespace {

bool all_zeros(const std::string& sha) { return sha.find_first_not_of('0') == std::string::npos; }

std::optional<std::string> git_line(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv);
    if (!r || r->exit_code != 0) return std::nullopt;
    return first_line(r->out);
}

// The main worktree (where .cocode/ lives) of the repository git runs us in, read from git's
// files: two `git rev-parse` would be most of what the gate costs an unrelated push.
fs::path main_root() {
    const fs::path cwd = fs::current_path();
    auto dirs = git::locate_git_dirs(cwd, std::getenv("GIT_DIR"));
    if (dirs && dirs->common_dir.filename() == ".git") return dirs->common_dir.parent_path();
    return cwd;
}

// The newest run whose branch this is.
std::optional<run::RunRecord> run_of(const fs::path& root, const std::string& branch) {
    std::optional<run::RunRecord> found;
    for (auto& record : run::list_runs(root / run::kRunsDir).runs)
        if (record.branch == branch) found = record;
    return found;
}

}  // namespace

int run_pre_push(const std::string& remote) {
    const fs::path root = main_root();
    auto config = config::load_config(root);
    if (!config) {
        std::fprintf(stderr, "cocode-hook: %s; the push is not checked\n",
                     config.error().message.c_str());
        return 0;
    }
    const fs::path check_tool = tool::sibling_executable("cocode-check");
    int code = 0;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream fields(line);
        std::string local_ref, local_sha, remote_ref, remote_sha;
        if (!(fields >> local_ref >> local_sha >> remote_ref >> remote_sha)) continue;
        if (all_zeros(local_sha) || local_ref.rfind("refs/heads/", 0) != 0) continue;
        const std::string branch = local_ref.substr(11);

        std::vector<std::string> args = {check_tool.string()};
        std::string why;
        auto run = config->branch_prefix.empty() || branch.rfind(config->branch_prefix, 0) != 0
                       ? std::nullopt
                       : run_of(root, branch);
        if (run && !run::is_active(run->status)) {
            args.insert(args.end(), {"--run", run->run_id});
            why = "run " + run->run_id;
        } else {
            // What this push sends: past what the remote has, else past every remote branch.
            std::vector<std::string> range = {
                "rev-list", "-n",   "1", "--fixed-strings", "--grep=" + config->ready_marker,
                local_sha,  "--not"};
            if (all_zeros(remote_sha))
                range.push_back("--remotes=" + remote);
            else
                range.push_back(remote_sha);
            std::string base;
            if (run) {
                base = run->base_commit;
                why = "run " + run->run_id + " (still " +
                      std::string(run::status_name(run->status)) + ")";
            } else if (git_line(range).value_or("").empty()) {
                continue;  // not cocode's work: untouched
            } else {
                why = "the ready marker in the pushed commits";
                if (!all_zeros(remote_sha)) {
                    base = remote_sha;
                } else {
                    // A new branch: from the parent of its oldest commit no remote has.
                    auto oldest = run_command({"git", "rev-list", "--reverse", local_sha, "--not",
                                               "--remotes=" + remote});
                    std::string first =
                        oldest && oldest->exit_code == 0 ? first_line(oldest->out) : "";
                    base = git_line({"rev-parse", "--verify", "--quiet", first + "^"}).value_or("");
                }
                if (base.empty()) continue;  // nothing to compare with: a root commit
            }
            args.insert(args.end(), {"--worktree", ".", "--base", base, "--head", local_sha,
                                     "--branch", branch});
            // The verify commands test the files checked out here; they are not the pushed
            // ones when another branch is pushed.
            if (git_line({"rev-parse", "HEAD"}).value_or("") != local_sha)
                args.push_back("--no-verify");
            if (run)
                args.insert(args.end(),
                            {"--issue", std::to_string(run->issue), "--agent", run->agent});
        }
        std::fprintf(stderr, "cocode-hook: checking %s (%s) before the push\n", branch.c_str(),
                     why.c_str());
        std::fflush(stderr);
        // The report goes to stderr, where git shows a hook's words.
        auto checked = run_command(args);
        if (!checked) {
            std::fprintf(stderr, "cocode-hook: %s\n", checked.error().message.c_str());
            code = 1;
            continue;
        }
        if (checked->exit_code == 0) {
            std::fprintf(stderr, "cocode-hook: %s: PASS\n", branch.c_str());
            continue;
        }
        std::fputs(checked->out.c_str(), stderr);
        std::fputs(checked->err.c_str(), stderr);
        std::fprintf(stderr,
                     "cocode-hook: %s: %s; the push is stopped (git push --no-verify skips the "
                     "check)\n",
                     branch.c_str(), checked->exit_code == 1 ? "FAIL" : "could not be checked");
        code = 1;
    }
    return code;
}

}  // namespace cocode::hook_cli
