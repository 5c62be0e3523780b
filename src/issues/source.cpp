#include "issues/source.h"

#include <set>

#include "git/git_files.h"
#include "git/repository.h"
#include "github/auth.h"
#include "github/http.h"
#include "issues/github_source.h"
#include "issues/local_source.h"

namespace cocode::issues {

namespace fs = std::filesystem;

Result<std::unique_ptr<IssueSource>> open_source(const SourceOptions& options) {
    if (options.issues_dir && options.repo)
        return Error::usage("--issues and --repo name two different sources; give one");
    if (options.issues_dir) return open_local_source(*options.issues_dir);

    // Outside any repository libgit2 is not loaded at all (its start costs a listing ~3 ms).
    auto repo = git::may_be_in_repository(options.repo_dir)
                    ? git::Repository::open(options.repo_dir)
                    : Result<git::Repository>(
                          Error::general("not a git repository (nor any of its parents): " +
                                         fs::absolute(options.repo_dir).string()));
    std::optional<fs::path> work_dir;
    if (repo.ok() && !repo->work_dir().empty()) work_dir = repo->work_dir();

    std::optional<std::string> api_url = options.api_url;
    std::optional<github::RepoRef> ref;
    if (options.repo) {
        auto parsed = github::parse_repo_ref(*options.repo, "--repo");
        if (!parsed.ok()) return std::move(parsed).error();
        ref = std::move(parsed).value();
    } else {
        std::error_code ec;
        if (work_dir && fs::is_directory(*work_dir / kLocalIssuesDir, ec))
            return open_local_source(*work_dir / kLocalIssuesDir);
        if (!repo.ok())
            return Error::usage(
                "no issue source: give --repo OWNER/NAME or --issues DIR (not in a git "
                "repository, so there is no origin remote to read)");
        auto url = repo->remote_url("origin");
        if (!url.ok())
            return Error::usage("no issue source: give --repo OWNER/NAME or --issues DIR (" +
                                url.error().message + ")");
        auto remote = github::parse_remote_url(url.value());
        if (!remote)
            return Error::usage("no issue source: the origin remote '" + url.value() +
                                "' does not name a GitHub repository; give --repo OWNER/NAME");
        ref = remote->repo;
        // A GitHub Enterprise remote implies its API, unless one was named.
        if (!api_url && !github::getenv_string("GITHUB_API_URL") && remote->host != "github.com")
            api_url = "https://" + remote->host + "/api/v3";
    }

    auto base = github::resolve_api_url(api_url);
    if (!base.ok()) return std::move(base).error();
    github::HttpOptions http;
    http.base = std::move(base).value();
    http.ca_bundle = options.ca_bundle;
    if (options.connect_timeout_s)
        http.connect_timeout = std::chrono::seconds(*options.connect_timeout_s);
    if (options.read_timeout_s) http.read_timeout = std::chrono::seconds(*options.read_timeout_s);
    if (options.max_wait_s) http.max_wait = std::chrono::seconds(*options.max_wait_s);
    if (!options.no_cache && work_dir && repo->exclude("/.cocode/cache/").ok())
        http.cache_dir = *work_dir / ".cocode" / "cache" / "http";
    http.notice = options.notice;
    auto auth = github::resolve_auth(http.base);
    if (!auth.ok()) return std::move(auth).error();
    auto client = github::HttpClient::create(std::move(http), std::move(auth).value());
    if (!client.ok()) return std::move(client).error();
    auto source = github_source(std::move(client).value(), *ref);
    source->github_api()->set_page_size(options.per_page);
    return source;
}

Result<std::vector<github::Issue>> select_issues(IssueSource& source,
                                                 const std::vector<long>& numbers,
                                                 const std::vector<std::string>& labels) {
    std::vector<github::Issue> issues;
    std::set<long> seen;
    for (long number : numbers) {
        if (!seen.insert(number).second) continue;
        auto issue = source.get(number);
        if (!issue) return std::move(issue).error();
        issues.push_back(std::move(issue).value());
    }
    if (!labels.empty()) {
        github::IssueQuery query;
        query.labels = labels;
        auto listed = source.list(query);
        if (!listed) return std::move(listed).error();
        for (auto& issue : *listed)
            if (seen.insert(issue.number).second) issues.push_back(std::move(issue));
    }
    for (auto& issue : issues)
        if (issue.html_url.empty()) issue.html_url = source.issue_url(issue.number);
    return issues;
}

}  // namespace cocode::issues
