// `cocode-hook post-commit`: what the shim hands over to when the commit is not in git's files
// (a packed object, a reftable), and what a person can run by hand. The commit always stands:
// whatever goes wrong is one line on stderr and exit 0.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "git/cli.h"
#include "hook/hook_files.h"
#include "hook/post_commit.h"

namespace cocode::hook_cli {

namespace {

// HEAD through the git CLI, for what git's files do not show us.
Result<hook::HeadCommit> head_from_git(const std::optional<git::GitDirs>& dirs) {
    hook::HeadCommit head;
    if (dirs) {
        if (auto id = git::read_head_id(*dirs)) head.id = std::move(id).value();
    }
    auto shown = git::git_output({}, {"cat-file", "commit", head.id.empty() ? "HEAD" : head.id});
    if (!shown) return std::move(shown).error();
    if (head.id.empty()) {
        auto parsed = git::git_line({}, {"rev-parse", "HEAD"});
        if (!parsed) return std::move(parsed).error();
        head.id = std::move(*parsed);
    }
    head.message = git::commit_message_of(*shown);
    return head;
}

}  // namespace

int run_post_commit() {
    std::error_code ec;
    hook::PostCommitEnv env{std::filesystem::current_path(ec), std::getenv("GIT_DIR"),
                            std::getenv(hook_files::kRunFolderEnv),
                            std::getenv("COCODE_READY_MARKER")};
    const hook::HeadFallback ask_git = head_from_git;
    auto outcome = hook::post_commit(env, &ask_git, std::chrono::system_clock::now());
    if (!outcome.line.empty()) std::fprintf(stderr, "%s\n", outcome.line.c_str());
    return 0;
}

}  // namespace cocode::hook_cli
