#include "hook/post_commit.h"

#include "core/redact.h"
#include "hook/ready.h"
#include "hook/run_locator.h"

namespace cocode::hook {

std::optional<HeadCommit> head_from_files(const std::optional<git::GitDirs>& dirs) {
    if (!dirs) return std::nullopt;
    auto id = git::read_head_id(*dirs);
    if (!id) return std::nullopt;
    auto message = git::read_loose_commit_message(dirs->common_dir, *id);
    if (!message || !*message) return std::nullopt;
    return HeadCommit{std::move(id).value(), std::move(**message)};
}

namespace {

PostCommitOutcome failed(const std::string& message) {
    return {PostCommitOutcome::Kind::failed,
            "cocode-hook: " + redact(message) + "; the commit stands"};
}

}  // namespace

PostCommitOutcome post_commit(const PostCommitEnv& env, const HeadFallback* fallback,
                              SystemTime now) {
    auto dirs = git::locate_git_dirs(env.cwd, env.git_dir);
    auto run = locate_run(env.run_folder, dirs);
    if (!run) return failed(run.error().message);
    if (!*run) return {};  // not a cocode run

    auto head = head_from_files(dirs);
    if (!head) {
        if (!fallback) return {PostCommitOutcome::Kind::head_elsewhere, {}};
        auto asked = (*fallback)(dirs);
        if (!asked) return failed("cannot read the new commit: " + asked.error().message);
        head = std::move(asked).value();
    }
    std::optional<std::string> marker;
    if (env.ready_marker && *env.ready_marker) marker = env.ready_marker;

    auto recorded = record_ready((*run)->run_folder, head->id, head->message, marker, now);
    if (!recorded) return failed("readiness not recorded: " + recorded.error().message);
    PostCommitOutcome outcome{PostCommitOutcome::Kind::done, {}};
    if (recorded->outcome == ReadyOutcome::recorded)
        outcome.line =
            "cocode: run " + recorded->run_id + " is ready for check at " + head->id.substr(0, 12);
    return outcome;
}

}  // namespace cocode::hook
