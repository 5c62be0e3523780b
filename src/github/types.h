// What cocode reads from and writes to GitHub, typed. Parsed from GitHub's JSON shapes, which
// the local issue store (src/issues/) uses too, so both sources yield the same values.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::github {

struct RepoRef {
    std::string owner;
    std::string name;
    std::string full() const { return owner + "/" + name; }
};

// "OWNER/NAME". `what` names the source in the error ("--repo").
Result<RepoRef> parse_repo_ref(std::string_view text, std::string_view what);

// A remote URL that points at GitHub (or GitHub Enterprise): https://host/o/r(.git),
// git@host:o/r(.git), ssh://git@host[:port]/o/r(.git). `host` is set to the web host.
struct RemoteRepo {
    std::string host;
    RepoRef repo;
};
std::optional<RemoteRepo> parse_remote_url(std::string_view url);

struct Repository {
    std::string full_name;
    std::string default_branch;
    std::string html_url;
    bool is_private = false;
};

struct Issue {
    long number = 0;
    std::string title;
    std::string body;   // "" when GitHub says null
    std::string state;  // "open" or "closed"
    std::vector<std::string> labels;
    std::vector<std::string> assignees;
    std::string author;
    std::string html_url;
    std::string created_at;
    std::string updated_at;
    long comments = 0;
    bool is_pull_request = false;  // the issues API lists pull requests too
    bool author_is_bot = false;    // its user's `type` is "Bot" (whatever its login says)
};

struct Comment {
    long long id = 0;
    std::string body;
    std::string author;
    std::string html_url;
    std::string created_at;
    std::string updated_at;
    std::string author_association;  // OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
    bool author_is_bot = false;      // a GitHub App's or another bot's account
    long issue = 0;                  // the issue (or pull request) it is on, from issue_url
    bool on_pull_request = false;    // its html_url is a pull request's
};

// One entry of an issue's events (GET /issues/{n}/events), the kinds cocode reads.
struct IssueEvent {
    long long id = 0;   // grows in the order events happen
    std::string event;  // labeled, unlabeled, closed, …
    std::string label;  // for labeled / unlabeled
    std::string created_at;
    std::string actor;          // who did it (its login)
    bool actor_is_bot = false;  // a GitHub App's or another bot's account
};

// Who last changed a part of an issue's text, and when (GitHub's time, ISO 8601).
struct TextEdit {
    std::string by;  // a login
    bool bot = false;
    std::string at;
};
// The last edit of an issue's body and the last rename of its title; nullopt: never.
struct IssueEdits {
    std::optional<TextEdit> body;
    std::optional<TextEdit> title;
};

struct CollaboratorPermission {
    std::string permission;  // admin, write, read, none
    std::string role_name;   // admin, maintain, write, triage, read, or a custom role
    // write, maintain, admin (by role), or a base permission of write or admin.
    bool can_write() const;
};

struct CommitStatus {
    std::string state;  // error, failure, pending, success
    std::string context;
    std::string description;
    std::string target_url;
    long long id = 0;
};

// A review of a pull request (GET /pulls/{n}/reviews).
struct Review {
    long long id = 0;
    std::string author;
    std::string state;  // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
    std::string body;
    std::string submitted_at;
    std::string commit_id;       // the head it was given on: a later push makes an approval stale
    bool author_is_bot = false;  // its user's `type` is "Bot" (Copilot's reviews are)
};

// A review comment: on a line of the diff (GET /pulls/{n}/comments). A thread is its first
// comment and those that reply to it (`in_reply_to`).
struct ReviewComment {
    long long id = 0;
    long long review_id = 0;
    long long in_reply_to = 0;  // 0: the thread's first comment
    std::string author;
    std::string path;
    std::optional<int> line;  // in the diff's new side; none when the line is outdated
    std::string diff_hunk;
    std::string body;
    std::string created_at;
    bool author_is_bot = false;  // its user's `type` is "Bot"
};

// A check run on a commit (GET /commits/{ref}/check-runs). A GitHub Actions job's check run
// has the job's id.
struct CheckRun {
    long long id = 0;
    std::string name;
    std::string status;      // queued, in_progress, completed
    std::string conclusion;  // success, failure, timed_out, cancelled, … ("" while running)
    std::string app;         // the app's slug: "github-actions" for a workflow's job
    std::string html_url;
};

// A GitHub Actions job's steps (GET /actions/jobs/{id}).
struct JobStep {
    int number = 0;
    std::string name;
    std::string conclusion;
};

struct PullRequestSpec {
    std::string title;
    std::string head;  // branch (or owner:branch)
    std::string base;
    std::string body;
    bool draft = true;
};

struct PullRequest {
    long number = 0;
    std::string title;
    std::string body;             // its description
    std::string head_sha;         // the commit its branch is at, when GitHub says
    std::string head_ref;         // its branch
    std::string head_repository;  // OWNER/NAME the branch is in (another for a fork's)
    std::string html_url;
    std::string state;
    bool draft = false;
    bool created = false;  // opened by this call, not found open already
    // What became of it (GitHub's times, ISO 8601; "" while it has not happened).
    std::string base_ref;  // the branch it would merge into
    std::string created_at;
    std::string closed_at;         // closed, merged or not
    std::string merged_at;         // merged
    std::string merge_commit_sha;  // once merged: the commit on the base that carries it
};

// Which issues to list. Unset fields are not sent (GitHub's defaults apply: open issues).
struct IssueQuery {
    std::vector<std::string> labels;      // all must match
    std::optional<std::string> state;     // open, closed, all
    std::optional<std::string> assignee;  // a login, "none" or "*"
    std::optional<int> per_page;          // unset: the client's page size (GitHub::page_size)
    // A local store's issue file that does not read: told here and left out of the list when
    // set (`issues list` shows the others); unset, it fails the listing (a run must not go on
    // without an issue it was asked for).
    std::function<void(const Error&)> on_unreadable;
};

// `where` names the document in errors: "issues/12.json", "GET /repos/o/r/issues/12".
Result<Issue> issue_from_json(const nlohmann::json& value, std::string_view where);
Result<Comment> comment_from_json(const nlohmann::json& value, std::string_view where);
Result<IssueEvent> issue_event_from_json(const nlohmann::json& value, std::string_view where);
Result<Repository> repository_from_json(const nlohmann::json& value, std::string_view where);
Result<Review> review_from_json(const nlohmann::json& value, std::string_view where);
Result<ReviewComment> review_comment_from_json(const nlohmann::json& value, std::string_view where);

// The top-level keys each of the above reads: a list page keeps only these (parse_list_page).
// A key read but missing here would read as absent; tests/unit/github_types_test.cpp holds
// each list against GitHub's full example.
inline constexpr std::string_view kIssueKeys[] = {
    "number",     "title", "body",   "state",     "html_url", "created_at",
    "updated_at", "user",  "labels", "assignees", "comments", "pull_request"};
// What cocode reads of the objects nested in those items: a user's or actor's login and type,
// a label's name (an issue's pull_request object stays, empty: only its presence is read).
inline constexpr std::string_view kInnerKeys[] = {"login", "type", "name"};
inline constexpr std::string_view kCommentKeys[] = {
    "id",         "body", "html_url",           "created_at",
    "updated_at", "user", "author_association", "issue_url"};
inline constexpr std::string_view kIssueEventKeys[] = {"id", "event", "label", "created_at",
                                                       "actor"};
inline constexpr std::string_view kReviewKeys[] = {"id",   "user",         "state",
                                                   "body", "submitted_at", "commit_id"};
inline constexpr std::string_view kReviewCommentKeys[] = {"id",
                                                          "pull_request_review_id",
                                                          "in_reply_to_id",
                                                          "user",
                                                          "path",
                                                          "line",
                                                          "diff_hunk",
                                                          "body",
                                                          "created_at"};

// The shape `issues list --json` prints: what cocode sees of an issue.
nlohmann::json to_json(const Issue& issue);
nlohmann::json to_json(const Comment& comment);

// True when `issue` passes `query` (for sources that filter themselves).
bool matches(const Issue& issue, const IssueQuery& query);

// A bot's account: its user type is "Bot", or its login ends in "[bot]" (an App's). No default
// for `typed_bot`: every caller says what GitHub typed the account (a `Bot` whose login lacks
// `[bot]`, as Copilot's reviews are, is a bot on every path).
bool bot_account(std::string_view login, bool typed_bot);

// The hidden HTML marker that identifies cocode's comment for `key` (e.g. "issue-12/claude").
std::string comment_marker(std::string_view key);

}  // namespace cocode::github
