// The local issue store: a folder of `<number>.json` files in GitHub's issue shape. Comments
// go to `<number>.comments.json`, an array in GitHub's comment shape, rewritten atomically
// under a lock with the same one-comment-per-marker rule as GitHub.
#pragma once

#include <filesystem>
#include <memory>

#include "issues/source.h"

namespace cocode::issues {

// A missing folder is a usage error naming it.
Result<std::unique_ptr<IssueSource>> open_local_source(const std::filesystem::path& dir);

}  // namespace cocode::issues
