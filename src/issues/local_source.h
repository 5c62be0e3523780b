// The local issue store: a folder of `<number>.json` files in GitHub's issue shape. Comments
// go to `<number>.comments.json`, an array in GitHub's comment shape, rewritten atomically
// under a lock with the same one-comment-per-marker rule as GitHub.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "issues/source.h"

namespace cocode::issues {

// Where a repository keeps its local store, relative to its main worktree.
inline constexpr char kLocalIssuesDir[] = ".cocode/issues";

// A missing folder is a usage error naming it.
Result<std::unique_ptr<IssueSource>> open_local_source(const std::filesystem::path& dir);

// The issue numbers the store at `dir` holds (its `<number>.json` files), ascending; none when
// it cannot be read. No file is parsed: for shell completion.
std::vector<long> local_issue_numbers(const std::filesystem::path& dir);

}  // namespace cocode::issues
