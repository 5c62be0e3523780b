// The REST operations cocode uses, on one repository, each with a typed result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "github/http.h"
#include "github/types.h"

namespace cocode::github {

class GitHub {
  public:
    GitHub(HttpClient& http, RepoRef repo) : http_(http), repo_(std::move(repo)) {}

    const RepoRef& repo() const { return repo_; }
    // Items per page of every list of issues, comments and events (1-100; `--per-page`).
    // A commit's statuses are read newest first, one page of 100: the newest is what counts.
    void set_page_size(int items) { page_size_ = items; }
    int page_size() const { return page_size_; }
    HttpClient& http() { return http_; }
    const HttpClient& http() const { return http_; }

    Result<Repository> repository();
    Result<Issue> issue(long number);
    // Every matching issue, all pages; pull requests are left out.
    Result<std::vector<Issue>> issues(const IssueQuery& query);
    // The issues (open and closed, pull requests left out) updated at or after `since`, the
    // newest change first; a next page is read only while a page ends with a change newer than
    // `seen` (the newest change an earlier call returned): when nothing changed, one
    // conditional request, answered 304 at no rate limit, whatever the number of issues.
    Result<std::vector<Issue>> issues_changed(const std::string& since, const std::string& seen);
    // Every comment, oldest first, as one view of the issue at one moment: a list of more
    // than one page is read again until two readings in a row agree, so that a comment
    // deleted from an earlier page between page reads (which moves the next page's first
    // comment onto the page already read) cannot hide one (docs/self-hosted.md).
    Result<std::vector<Comment>> comments(long number);
    // The issue's events, oldest first, all pages.
    Result<std::vector<IssueEvent>> issue_events(long number);
    Result<Comment> create_comment(long number, const std::string& body);
    // A create that may be lost: nullopt when it may or may not have landed (the connection
    // failed after sending, or a 5xx), with `failure` saying why; only a list can tell then.
    Result<std::optional<Comment>> create_comment_or_unknown(long number, const std::string& body,
                                                             std::string& failure);
    Result<Comment> update_comment(long long comment_id, const std::string& body);
    // nullopt when the comment is gone (404).
    Result<std::optional<Comment>> update_comment_if_present(long long comment_id,
                                                             const std::string& body);
    // The one comment carrying `marker` (see comment_marker) gets `body`; created when there
    // is none. Writers that race — on one machine or many, with no lock between them —
    // converge on exactly one: each creates only when it sees none, waits until the list
    // shows its own, keeps the oldest marked comment and deletes every newer one
    // (docs/github.md, "One comment, from any number of writers"). A create whose outcome is
    // unknown (reset, 5xx) is never repeated blindly: the list says whether it landed.
    // `body` gets the marker prepended when it lacks it. With `merge`, a comment that is there
    // (another writer's, or this call's after another wrote it) gets `merge` of its text
    // instead — nothing written when that is its text — rather than `body` over it.
    using CommentEdit = std::function<std::string(const std::string& text)>;
    Result<Comment> upsert_comment(long number, const std::string& marker, const std::string& body,
                                   const CommentEdit& merge = {});
    // A comment that is already gone is not an error.
    Result<void> delete_comment(long long comment_id);
    // One comment, read by its id (GET /issues/comments/{id}): as it is now, where a list of
    // the issue's comments may lag behind the latest writes. nullopt when it is gone.
    Result<std::optional<Comment>> comment(long long comment_id);
    // Read, change, write one comment by its id: `edit` gets its text (without the mark an
    // upsert_comment in progress finds its own by, which stays) and returns the new text.
    // nullopt when the comment is gone. Not atomic: GitHub has no compare-and-swap on
    // comments, so a writer that edits in between may be overwritten (see check/progress.h).
    Result<std::optional<Comment>> edit_comment(long long comment_id, const CommentEdit& edit);
    // Returns the issue's labels after the change.
    Result<std::vector<std::string>> add_labels(long number,
                                                const std::vector<std::string>& labels);
    // A label the issue does not have is not an error.
    Result<void> remove_label(long number, const std::string& label);
    // content: +1, -1, laugh, confused, heart, hooray, rocket, eyes. GitHub keeps one per user.
    Result<void> add_reaction(long number, const std::string& content);
    // On an issue comment (a command picked up: eyes). Safe to replay, as above.
    Result<void> add_comment_reaction(long long comment_id, const std::string& content);
    // On a review comment (a pull request's diff). GitHub has no reactions on a review itself.
    Result<void> add_review_comment_reaction(long long comment_id, const std::string& content);
    // What `login` may do in the repository: GitHub's role name (admin, maintain, write,
    // triage, read, or a custom role's name) and its base permission (admin, write, read,
    // none). A login GitHub does not know as a collaborator is {"none", "none"}.
    Result<CollaboratorPermission> collaborator_permission(const std::string& login);
    // The login the token acts as (GET /user): "" when GitHub does not say (an App's
    // installation token acts as no user).
    Result<std::string> token_login();
    // The repository's issue and pull request comments updated at or after `since` (ISO 8601),
    // oldest first. They are asked for newest first (GET /issues/comments?since=…&sort=created
    // &direction=desc, a conditional request: an unchanged list costs no rate limit), and a
    // next page is read only while a page ends with a comment made after `seen` (the newest
    // an earlier call returned; "": every page).
    Result<std::vector<Comment>> comments_since(const std::string& since,
                                                const std::string& seen = "");
    // Who last edited the issue's body and renamed its title, and when: asked of GitHub's
    // GraphQL API (<api>/graphql; /api/graphql on a GitHub Enterprise Server), as REST does
    // not say who edited a body.
    Result<IssueEdits> issue_edits(long number);
    Result<CommitStatus> create_status(const std::string& sha, const CommitStatus& status);
    // The statuses of a commit, newest first (the first page: GitHub keeps 1,000 per context).
    Result<std::vector<CommitStatus>> statuses(const std::string& sha);
    Result<void> create_label(const std::string& name, const std::string& color,
                              const std::string& description);
    // Opens the pull request, or returns the open one that already has this head.
    Result<PullRequest> create_pull_request(const PullRequestSpec& spec);
    // Every review of pull request `number`, and every comment of them on its diff, oldest first.
    Result<std::vector<Review>> reviews(long number);
    Result<std::vector<ReviewComment>> review_comments(long number);
    // The check runs of commit `sha` (the first 100), a GitHub Actions job's steps, and the
    // last `max_bytes` of its log. GitHub answers the log with a redirect to where it is
    // stored, another host: asked there without any token.
    Result<std::vector<CheckRun>> check_runs(const std::string& sha);
    Result<std::vector<JobStep>> job_steps(long long job_id);
    Result<std::string> job_log_tail(long long job_id, std::size_t max_bytes);
    // A reply in the thread of review comment `comment_id` on pull request `number`. Not
    // replayed once sent: the caller finds a reply whose answer was lost by its words.
    Result<ReviewComment> reply_to_review_comment(long number, long long comment_id,
                                                  const std::string& body);
    Result<PullRequest> update_pull_request(long number, const std::string& title,
                                            const std::string& body);
    Result<PullRequest> pull_request(long number);
    // The open pull requests, newest first (the first 100).
    Result<std::vector<PullRequest>> open_pull_requests();
    // The open pull request whose head is `head` (a branch, or owner:branch), if there is one.
    Result<std::optional<PullRequest>> open_pull_request_for(const std::string& head);
    // Every pull request whose head is `head`, open or closed, newest first (a conditional
    // request: an unchanged list costs no rate limit).
    Result<std::vector<PullRequest>> pull_requests_for(const std::string& head);

  private:
    std::string repo_path() const;
    // The issues of the list at `path` (pull requests left out), read as get_all_pages reads
    // it with `more`.
    Result<std::vector<Issue>> issues_at(const std::string& path,
                                         const std::function<bool(const nlohmann::json&)>& more);
    // POSTs a reaction to `path` (a .../reactions address).
    Result<void> react(const std::string& path, const std::string& content);

    HttpClient& http_;
    RepoRef repo_;
    int page_size_ = 100;
};

}  // namespace cocode::github
