// Where issues come from and where reports go: GitHub over HTTPS, or a local folder of
// GitHub-shaped JSON (the embedded default for the demo, first runs and offline work).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "github/api.h"
#include "github/types.h"

namespace cocode::issues {

using github::Comment;
using github::Issue;
using github::IssueQuery;

class IssueSource {
  public:
    virtual ~IssueSource() = default;
    // "github owner/name (https://api.github.com)" or "local folder .cocode/issues".
    virtual std::string describe() const = 0;
    // The local store: no remote, so a commit status needs no pushed commit.
    virtual bool local() const { return false; }
    // The REST API behind a GitHub source, for what only GitHub has (permissions, reactions on
    // comments); nullptr for the local store.
    virtual github::GitHub* github_api() { return nullptr; }
    // Where a person finds issue `number` when the issue itself does not say (html_url):
    // the file of the local store, as a file:// URL.
    virtual std::string issue_url(long number) const = 0;
    virtual Result<std::vector<Issue>> list(const IssueQuery& query) = 0;
    virtual Result<Issue> get(long number) = 0;
    virtual Result<std::vector<Comment>> comments(long number) = 0;
    // One comment per marker, ever: updated in place when it exists (github::comment_marker),
    // to `merge` of its text when given (github::GitHub::upsert_comment).
    virtual Result<Comment> upsert_comment(long number, const std::string& marker,
                                           const std::string& body,
                                           const github::GitHub::CommentEdit& merge = {}) = 0;
    // Read, change and write comment `id` of issue `number` (github::GitHub::edit_comment);
    // nullopt when it is gone. The local store does it under its lock.
    virtual Result<std::optional<Comment>> edit_comment(
        long number, long long id, const github::GitHub::CommentEdit& edit) = 0;
    virtual Result<std::vector<std::string>> add_labels(long number,
                                                        const std::vector<std::string>& labels) = 0;
    virtual Result<void> remove_label(long number, const std::string& label) = 0;
    // A commit status on `sha` (GitHub's statuses API). The local store keeps the latest per
    // (sha, context) in statuses.json beside the issues.
    virtual Result<void> set_status(const std::string& sha, const github::CommitStatus& status) = 0;
    // Opens a pull request for spec.head, or updates the title and body of the one already
    // open for it. nullopt when the source has no pull requests (the local store).
    virtual Result<std::optional<github::PullRequest>> upsert_pull_request(
        const github::PullRequestSpec& spec) = 0;
};

// How the tools pick a source (cocode-dispatch issues …, run, …):
//   --issues DIR          the local folder DIR;
//   --repo OWNER/NAME     GitHub;
//   neither               `.cocode/issues/` of the repository when it exists, else GitHub
//                         with the `origin` remote's owner/name (and, for a GitHub
//                         Enterprise remote, https://<host>/api/v3 unless an API URL is given).
struct SourceOptions {
    std::optional<std::filesystem::path> issues_dir;
    std::optional<std::string> repo;
    std::filesystem::path repo_dir = ".";  // where to look for .cocode/ and origin
    std::optional<std::string> api_url;
    std::optional<std::filesystem::path> ca_bundle;
    std::optional<int> connect_timeout_s;
    std::optional<int> read_timeout_s;
    std::optional<int> max_wait_s;
    int per_page = 100;  // items per page of every list GitHub is asked for (1-100)
    bool no_cache = false;
    std::function<void(std::string_view)> notice;
};

Result<std::unique_ptr<IssueSource>> open_source(const SourceOptions& options);

// The issues a command works on: each of `numbers` (once, in order), then every open issue
// carrying all of `labels` (when any are given) not named already; each with its html_url
// (the source's own for the local store). Empty when only labels were given and none matched.
Result<std::vector<github::Issue>> select_issues(IssueSource& source,
                                                 const std::vector<long>& numbers,
                                                 const std::vector<std::string>& labels);

}  // namespace cocode::issues
