// The history the replay set is mined from (docs/report.md, "The replay set"): the first-parent
// walk of a branch, and a commit composed of one commit's tree with some paths as another has
// them (a base with the change's tests), which no ref points at.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace cocode::git {

struct HistoryCommit {
    std::string id;
    std::vector<std::string> parents;
    std::chrono::system_clock::time_point time;  // the committer's
    std::string message;
};

// `git log --first-parent` of `revision` in `dir`: at most `limit` commits, newest first, none
// older than `since` when given.
Result<std::vector<HistoryCommit>> first_parent_history(
    const std::filesystem::path& dir, const std::string& revision, std::size_t limit,
    std::optional<std::chrono::system_clock::time_point> since);

// Every commit of `range` ("A..B"), newest first, as above.
Result<std::vector<HistoryCommit>> commits_in(const std::filesystem::path& dir,
                                              const std::string& range);

// `git log`'s text as the above asks for it (%H %P %ct %B, fields split by 0x1f, records ended
// by 0x1e), read.
std::vector<HistoryCommit> parse_history(std::string_view log);

// A commit of `base`'s tree with each of `paths` as commit `from` has it (removed where `from`
// has none), `base` its parent, `message` its message; no ref, index or worktree touched.
Result<std::string> commit_with_paths_from(const std::filesystem::path& dir,
                                           const std::string& base, const std::string& from,
                                           const std::vector<std::string>& paths,
                                           const std::string& message);

}  // namespace cocode::git
