// The flags every command that talks to an issue source shares (cocode-dispatch, cocode-check):
// --repo, --issues, --api-url, --ca-bundle, timeouts, --per-page, --no-cache.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "issues/source.h"

namespace cocode::tool {

struct SourceFlags {
    issues::SourceOptions options;
    std::optional<std::string> issues_dir;
    std::optional<std::string> ca_bundle;

    // In a group of their own in the command's help, after its own options. `github_only`:
    // a command that reads GitHub alone (report's --published and --refresh, gate) has no
    // --issues.
    void add_to(CLI::App& command, bool github_only = false);
    // `tool` prefixes the notices the source prints (retries, rate-limit waits).
    issues::SourceOptions resolve(const char* tool) const;
    bool names_a_source() const { return issues_dir || options.repo; }
    // The same flags as command-line arguments, for a process of ours started with them.
    std::vector<std::string> as_args() const;
};

}  // namespace cocode::tool
