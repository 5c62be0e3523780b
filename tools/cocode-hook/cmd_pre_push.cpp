// cocode-hook pre-push: the gate. For each pushed branch that is a cocode run's, or whose
// pushed commits carry the ready marker, cocode-check judges it (nothing published); a FAIL
// stops the push with the report on stderr. Any other push costs one `git rev-list`.
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.h"
#include "common/executables.h"
#include "config/config.h"
#include "core/error.h"
#include "core/redact.h"
#include "git/git_files.h"
#include "hook/pre_push.h"
#include "proc/command.h"

namespace cocode::hook_cli {
namespace fs = std::filesystem;

namespace {

// The main worktree (where .cocode/ lives) of the repository git runs us in, read from git's
// files: two `git rev-parse` would be most of what the gate costs an unrelated push.
fs::path main_root() {
    const fs::path cwd = fs::current_path();
    auto dirs = git::locate_git_dirs(cwd, std::getenv("GIT_DIR"));
    if (dirs && dirs->common_dir.filename() == ".git") return dirs->common_dir.parent_path();
    return cwd;
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
    const hook::GateRules rules{config->branch_prefix, config->ready_marker};
    auto view = hook::repository_view(root);
    const fs::path check_tool = tool::sibling_executable("cocode-check");
    int code = 0;
    std::string line;
    while (std::getline(std::cin, line)) {
        auto ref = hook::parse_pushed_ref(line);
        if (!ref) continue;
        auto decided = hook::decide_push(*ref, remote, rules, *view);
        if (!decided) {
            std::fprintf(stderr,
                         "cocode-hook: %s: cannot tell what the push sends (%s); the push is "
                         "stopped (git push --no-verify skips the check)\n",
                         ref->local_ref.c_str(), redact(decided.error().message).c_str());
            code = 1;
            continue;
        }
        if (!decided->check) continue;
        const std::string name = ref->local_ref.substr(11);
        std::vector<std::string> args = {check_tool.string()};
        args.insert(args.end(), decided->check_args.begin(), decided->check_args.end());
        std::fprintf(stderr, "cocode-hook: checking %s (%s) before the push\n", name.c_str(),
                     decided->why.c_str());
        std::fflush(stderr);
        // The report goes to stderr, where git shows a hook's words.
        auto checked = run_command(args);
        if (!checked) {
            std::fprintf(stderr, "cocode-hook: %s\n", checked.error().message.c_str());
            code = 1;
            continue;
        }
        if (checked->exit_code == 0) {
            std::fprintf(stderr, "cocode-hook: %s: PASS\n", name.c_str());
            continue;
        }
        std::fputs(checked->out.c_str(), stderr);
        std::fputs(checked->err.c_str(), stderr);
        std::fprintf(stderr,
                     "cocode-hook: %s: %s; the push is stopped (git push --no-verify skips the "
                     "check)\n",
                     name.c_str(), checked->exit_code == 1 ? "FAIL" : "could not be checked");
        code = 1;
    }
    return code;
}

}  // namespace cocode::hook_cli
