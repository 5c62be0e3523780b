// `cocode-hook post-commit`: git (through the shim) runs it after a commit in a cocode run.
// The commit always stands: whatever goes wrong is one line on stderr and exit 0.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "commands.h"
#include "core/redact.h"
#include "git/cli.h"
#include "git/git_files.h"
#include "hook/hook_files.h"
#include "hook/ready.h"
#include "hook/run_locator.h"

namespace cocode::hook_cli {
namespace fs = std::filesystem;

namespace {

struct HeadCommit {
    std::string id;
    std::string message;
};

// HEAD's id and message from the files git just wrote; the git CLI when they are not in a
// form we read (a packed object, a reftable).
Result<HeadCommit> read_head(const std::optional<git::GitDirs>& dirs) {
    HeadCommit head;
    if (dirs) {
        if (auto id = git::read_head_id(*dirs)) {
            head.id = std::move(id).value();
            auto message = git::read_loose_commit_message(dirs->common_dir, head.id);
            if (message && *message) {
                head.message = std::move(**message);
                return head;
            }
        }
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

void warn(const std::string& message) {
    std::fprintf(stderr, "cocode-hook: %s; the commit stands\n", redact(message).c_str());
}

}  // namespace

int run_post_commit() {
    std::error_code ec;
    fs::path cwd = fs::current_path(ec);
    auto dirs = git::locate_git_dirs(cwd, std::getenv("GIT_DIR"));
    auto run = hook::locate_run(std::getenv(hook_files::kRunFolderEnv), dirs);
    if (!run) {
        warn(run.error().message);
        return 0;
    }
    if (!*run) return 0;  // not a cocode run: nothing to do, nothing to say

    auto head = read_head(dirs);
    if (!head) {
        warn("cannot read the new commit: " + head.error().message);
        return 0;
    }
    std::optional<std::string> env_marker;
    if (const char* m = std::getenv("COCODE_READY_MARKER"); m && *m) env_marker = m;

    auto recorded = hook::record_ready((*run)->run_folder, head->id, head->message, env_marker,
                                       std::chrono::system_clock::now());
    if (!recorded) {
        warn("readiness not recorded: " + recorded.error().message);
        return 0;
    }
    if (recorded->outcome == hook::ReadyOutcome::recorded) {
        std::fprintf(stderr, "cocode: run %s is ready for check at %.12s\n",
                     recorded->run_id.c_str(), head->id.c_str());
    }
    return 0;
}

}  // namespace cocode::hook_cli
