#include "common/source_flags.h"

#include <cstdio>

#include "core/redact.h"

namespace cocode::tool {

void SourceFlags::add_to(CLI::App& command) {
    command.add_option("--repo", options.repo,
                       "GitHub repository OWNER/NAME (default: the origin remote's)");
    command.add_option("--issues", issues_dir,
                       "a local folder of <number>.json issues instead of GitHub");
    command.add_option("--api-url", options.api_url,
                       "GitHub API base (default: $GITHUB_API_URL, else https://api.github.com)");
    command.add_option("--ca-bundle", ca_bundle,
                       "PEM file of CA certificates to trust besides the system's");
    command.add_option("--connect-timeout", options.connect_timeout_s, "seconds (default 10)")
        ->check(CLI::Range(1, 600));
    command.add_option("--read-timeout", options.read_timeout_s, "seconds (default 30)")
        ->check(CLI::Range(1, 3600));
    command
        .add_option("--max-wait", options.max_wait_s,
                    "seconds all retries and rate-limit waits may add up to (default 300)")
        ->check(CLI::Range(0, 86400));
    command.add_option("--per-page", per_page, "items per page when listing (1-100, default 100)")
        ->check(CLI::Range(1, 100));
    command.add_flag("--no-cache", options.no_cache, "do not use or fill .cocode/cache/");
}

issues::SourceOptions SourceFlags::resolve(const char* tool) const {
    issues::SourceOptions resolved = options;
    if (issues_dir) resolved.issues_dir = *issues_dir;
    if (ca_bundle) resolved.ca_bundle = *ca_bundle;
    resolved.notice = [tool](std::string_view text) {
        std::fprintf(stderr, "%s: %s\n", tool, redact(text).c_str());
    };
    return resolved;
}

}  // namespace cocode::tool
