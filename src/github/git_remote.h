// The token cocode holds for GitHub, given to git for the repository's origin: pushes and
// fetches (a base branch, an agent's branch for a round, a merged pull request's outcome)
// work in a clone that keeps no credential of its own (actions/checkout with
// persist-credentials: false, which every example workflow sets: docs/security.md).
#pragma once

#include <filesystem>

#include "git/cli.h"

namespace cocode::github {

// git's options for talking to origin from `dir`: GITHUB_TOKEN (else GH_TOKEN) through a
// credential helper reading a pipe — never in git's environment, its command line or a file —
// when origin is an https:// URL of the GitHub the API resolves to (token_goes_to); none for
// any other origin, which pushes and fetches with its own credentials or none.
git::GitOptions origin_git_options(const std::filesystem::path& dir);

}  // namespace cocode::github
