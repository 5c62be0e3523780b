#include "common/source_flags.h"

#include <cstdio>

#include "common/cli_errors.h"
#include "core/redact.h"

namespace cocode::tool {

void SourceFlags::add_to(CLI::App& command, bool github_only) {
    const std::string group = github_only ? "GitHub" : "Issues: GitHub, or a folder";
    command
        .add_option("--repo", options.repo,
                    "GitHub repository OWNER/NAME (default: the origin remote's)")
        ->group(group);
    if (!github_only)
        command
            .add_option("--issues", issues_dir,
                        "a local folder of <number>.json issues instead of GitHub")
            ->group(group);
    command
        .add_option("--api-url", options.api_url,
                    "GitHub API base (default: $GITHUB_API_URL, else https://api.github.com)")
        ->group(group);
    command
        .add_option("--ca-bundle", ca_bundle,
                    "PEM file of CA certificates to trust besides the system's")
        ->group(group);
    command.add_option("--connect-timeout", options.connect_timeout_s, "seconds (default 10)")
        ->check(tool::whole_number(1, 600))
        ->group(group);
    command.add_option("--read-timeout", options.read_timeout_s, "seconds (default 30)")
        ->check(tool::whole_number(1, 3600))
        ->group(group);
    command
        .add_option("--max-wait", options.max_wait_s,
                    "seconds all retries and rate-limit waits may add up to (default 300)")
        ->check(tool::whole_number(0, 86400))
        ->group(group);
    command
        .add_option("--per-page", options.per_page,
                    "items per page when listing (1-100, default 100)")
        ->check(tool::whole_number(1, 100))
        ->group(group);
    command.add_flag("--no-cache", options.no_cache, "do not use or fill .cocode/cache/")
        ->group(group);
}

std::vector<std::string> SourceFlags::as_args() const {
    std::vector<std::string> out;
    auto add = [&](const char* flag, const std::optional<std::string>& value) {
        if (value) out.insert(out.end(), {flag, *value});
    };
    auto add_number = [&](const char* flag, const std::optional<int>& value) {
        if (value) out.insert(out.end(), {flag, std::to_string(*value)});
    };
    add("--repo", options.repo);
    add("--issues", issues_dir);
    add("--api-url", options.api_url);
    add("--ca-bundle", ca_bundle);
    add_number("--connect-timeout", options.connect_timeout_s);
    add_number("--read-timeout", options.read_timeout_s);
    add_number("--max-wait", options.max_wait_s);
    out.insert(out.end(), {"--per-page", std::to_string(options.per_page)});
    if (options.no_cache) out.push_back("--no-cache");
    return out;
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
