#include "github/api.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "core/json_text.h"
#include "github/auth.h"

namespace cocode::github {
namespace {

using json = nlohmann::json;

constexpr int kUpsertRounds = 10;   // looks at the list, each after a longer pause
constexpr int kCreateAttempts = 4;  // a pull request create whose outcome was lost

// Marks which comments one call of upsert_comment made: an HTML comment no reader sees.
constexpr std::string_view kWriterPrefix = "<!-- cocode-writer: ";

std::string new_writer_line() {
    std::random_device random;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%08x%08x", random(), random());
    return std::string(kWriterPrefix) + buf + " -->";
}

// A comment's body without its writer line, and that line.
std::string content_of(const std::string& body) {
    std::size_t at = body.rfind(kWriterPrefix);
    if (at == std::string::npos) return body;
    std::size_t start = at > 0 && body[at - 1] == '\n' ? at - 1 : at;
    return body.substr(0, start);
}
std::string writer_line_of(const std::string& body) {
    std::size_t at = body.rfind(kWriterPrefix);
    return at == std::string::npos ? std::string() : body.substr(at);
}

// Two readings of a list of comments hold the same comments, in the same order.
bool same_comments(const std::vector<Comment>& a, const std::vector<Comment>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const Comment& x, const Comment& y) { return x.id == y.id; });
}

PullRequest pull_request_from_json(const json& value) {
    PullRequest pr;
    pr.number = json_value(value, "number", 0L);
    pr.html_url = json_value(value, "html_url", "");
    pr.title = json_value(value, "title", "");
    pr.body = json_value(value, "body", "");
    pr.state = json_value(value, "state", "");
    pr.draft = json_value(value, "draft", false);
    pr.created_at = json_value(value, "created_at", "");
    pr.closed_at = json_value(value, "closed_at", "");
    pr.merged_at = json_value(value, "merged_at", "");
    pr.merge_commit_sha = json_value(value, "merge_commit_sha", "");
    if (value.contains("base") && value["base"].is_object())
        pr.base_ref = json_value(value["base"], "ref", "");
    if (value.contains("head") && value["head"].is_object()) {
        const json& head = value["head"];
        pr.head_sha = json_value(head, "sha", "");
        pr.head_ref = json_value(head, "ref", "");
        if (head.contains("repo") && head["repo"].is_object())
            pr.head_repository = json_value(head["repo"], "full_name", "");
    }
    return pr;
}

}  // namespace

std::string GitHub::repo_path() const {
    return "/repos/" + percent_encode(repo_.owner) + "/" + percent_encode(repo_.name);
}

Result<Repository> GitHub::repository() {
    auto body = http_.get_json(repo_path());
    if (!body.ok()) return std::move(body).error();
    return repository_from_json(body.value(), "GET " + repo_path());
}

Result<Issue> GitHub::issue(long number) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number);
    auto body = http_.get_json(path);
    if (!body.ok()) return std::move(body).error();
    auto parsed = issue_from_json(body.value(), "GET " + path);
    if (!parsed.ok()) return Error::general(parsed.error().message);
    return parsed;
}

Result<std::vector<Issue>> GitHub::issues(const IssueQuery& query) {
    std::map<std::string, std::string> params;
    params["per_page"] = std::to_string(query.per_page.value_or(page_size_));
    if (query.state) params["state"] = *query.state;
    if (query.assignee) params["assignee"] = *query.assignee;
    if (!query.labels.empty()) {
        std::string joined;
        for (const auto& label : query.labels) joined += (joined.empty() ? "" : ",") + label;
        params["labels"] = joined;
    }
    return issues_at(repo_path() + "/issues?" + query_string(params), {});
}

Result<std::vector<Issue>> GitHub::issues_at(const std::string& path,
                                             const std::function<bool(const json&)>& more) {
    auto all = http_.get_all_pages(path, kIssueKeys, nullptr, more, kInnerKeys);
    if (!all.ok()) return std::move(all).error();
    std::vector<Issue> issues;
    for (const auto& item : all.value()) {
        auto issue = issue_from_json(item, "GET " + path);
        if (!issue.ok()) return Error::general(issue.error().message);
        if (!issue->is_pull_request) issues.push_back(std::move(issue).value());
    }
    return issues;
}

namespace {

// A page of a list sorted newest first ends after `seen` (by the items' `key`): the next page
// may hold something newer than what an earlier read saw.
std::function<bool(const json&)> newer_than(const std::string& seen, const char* key) {
    return [seen, key](const json& items) {
        if (seen.empty()) return true;
        if (items.empty() || !items.back().is_object()) return false;
        const auto at = items.back().find(key);
        return at != items.back().end() && at->is_string() && at->get<std::string>() > seen;
    };
}

}  // namespace

Result<std::vector<Issue>> GitHub::issues_changed(const std::string& since,
                                                  const std::string& seen) {
    const std::string path = repo_path() + "/issues?" +
                             query_string({{"state", "all"},
                                           {"since", since},
                                           {"sort", "updated"},
                                           {"direction", "desc"},
                                           {"per_page", std::to_string(page_size_)}});
    return issues_at(path, newer_than(seen, "updated_at"));
}

Result<std::vector<Comment>> GitHub::comments(long number) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) +
                             "/comments?per_page=" + std::to_string(page_size_);
    // Deletions stop (a claim is deleted once, when it lapses or is handed back), so a few
    // readings settle; more than that is a list that will not hold still.
    constexpr int kReadings = 8;
    std::vector<Comment> previous;
    for (int reading = 1; reading <= kReadings; ++reading) {
        int pages = 0;
        auto all = http_.get_all_pages(path, kCommentKeys, &pages, {}, kInnerKeys);
        if (!all.ok()) return std::move(all).error();
        std::vector<Comment> comments;
        for (const auto& item : all.value()) {
            auto comment = comment_from_json(item, "GET " + path);
            if (!comment.ok()) return Error::general(comment.error().message);
            comments.push_back(std::move(comment).value());
        }
        // One page is one view; several agree with the reading before when the same comments
        // are listed in the same order.
        if (pages <= 1 || (reading > 1 && same_comments(comments, previous))) return comments;
        previous = std::move(comments);
    }
    return Error::general("GitHub: GET " + path + ": the comments changed under each of " +
                          std::to_string(kReadings) +
                          " readings of their pages; no reading can be trusted to hold them all");
}

Result<std::optional<Comment>> GitHub::create_comment_or_unknown(long number,
                                                                 const std::string& body,
                                                                 std::string& failure) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/comments";
    auto response = http_.request("POST", path, json{{"body", body}}, Replay::unless_sent);
    if (!response.ok()) return std::move(response).error();
    if (response->outcome_unknown || response->status >= 500) {
        failure = response->outcome_unknown
                      ? response->failure
                      : "GitHub: POST " + path + ": " + std::to_string(response->status);
        return std::optional<Comment>();
    }
    auto created = json_body("POST", path, std::move(response), http_.auth());
    if (!created.ok()) return std::move(created).error();
    auto comment = comment_from_json(created.value(), "POST " + path);
    if (!comment.ok()) return std::move(comment).error();
    return std::optional<Comment>(std::move(comment).value());
}

Result<std::vector<IssueEvent>> GitHub::issue_events(long number) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) +
                             "/events?per_page=" + std::to_string(page_size_);
    auto all = http_.get_all_pages(path, kIssueEventKeys, nullptr, {}, kInnerKeys);
    if (!all.ok()) return std::move(all).error();
    std::vector<IssueEvent> events;
    for (const auto& item : all.value()) {
        auto event = issue_event_from_json(item, "GET " + path);
        if (!event.ok()) return std::move(event).error();
        events.push_back(std::move(event).value());
    }
    return events;
}

Result<Comment> GitHub::create_comment(long number, const std::string& body) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/comments";
    auto created = json_body("POST", path,
                             http_.request("POST", path, json{{"body", body}}, Replay::unless_sent),
                             http_.auth());
    if (!created.ok()) return std::move(created).error();
    return comment_from_json(created.value(), "POST " + path);
}

Result<Comment> GitHub::update_comment(long long comment_id, const std::string& body) {
    auto updated = update_comment_if_present(comment_id, body);
    if (!updated.ok()) return std::move(updated).error();
    if (!*updated)
        return Error::general("GitHub: PATCH " + repo_path() + "/issues/comments/" +
                              std::to_string(comment_id) + ": 404 the comment is gone");
    return std::move(**updated);
}

Result<std::optional<Comment>> GitHub::update_comment_if_present(long long comment_id,
                                                                 const std::string& body) {
    const std::string path = repo_path() + "/issues/comments/" + std::to_string(comment_id);
    auto response = http_.request("PATCH", path, json{{"body", body}});
    if (response.ok() && response->status == 404) return std::optional<Comment>();
    auto updated = json_body("PATCH", path, std::move(response), http_.auth());
    if (!updated.ok()) return std::move(updated).error();
    auto comment = comment_from_json(updated.value(), "PATCH " + path);
    if (!comment.ok()) return std::move(comment).error();
    return std::optional<Comment>(std::move(comment).value());
}

Result<void> GitHub::delete_comment(long long comment_id) {
    const std::string path = repo_path() + "/issues/comments/" + std::to_string(comment_id);
    auto response = http_.request("DELETE", path);
    if (!response.ok()) return std::move(response).error();
    // Gone already (another writer deleted the same duplicate): what was wanted.
    if (response->ok() || response->status == 404) return {};
    return response_error("DELETE", path, response.value(), http_.auth());
}

Result<std::optional<Comment>> GitHub::comment(long long comment_id) {
    const std::string path = repo_path() + "/issues/comments/" + std::to_string(comment_id);
    auto response = http_.request("GET", path);
    if (response.ok() && response->status == 404) return std::optional<Comment>();
    auto body = json_body("GET", path, std::move(response), http_.auth());
    if (!body.ok()) return std::move(body).error();
    auto parsed = comment_from_json(body.value(), "GET " + path);
    if (!parsed.ok()) return std::move(parsed).error();
    return std::optional<Comment>(std::move(parsed).value());
}

Result<std::optional<Comment>> GitHub::edit_comment(long long comment_id, const CommentEdit& edit) {
    auto current = comment(comment_id);
    if (!current.ok() || !*current) return current;
    const std::string& body = (*current)->body;
    const std::string text = edit(content_of(body)), keep = writer_line_of(body);
    if (text == content_of(body)) return current;
    return update_comment_if_present(comment_id, keep.empty() ? text : text + "\n" + keep);
}

Result<Comment> GitHub::upsert_comment(long number, const std::string& marker,
                                       const std::string& body_in, const CommentEdit& merge) {
    const std::string content =
        body_in.find(marker) == std::string::npos ? marker + "\n" + body_in : body_in;
    const std::string writer = new_writer_line();
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/comments";
    bool posted = false;
    std::optional<long long> my_id;  // the comment this call made, when GitHub said which
    int unseen = 0;                  // looks since a create whose answer was lost
    std::string last_failure = "GitHub's list of comments never showed the one just made";
    for (int round = 0; round < kUpsertRounds; ++round) {
        if (round > 0) {
            const auto delay = std::chrono::milliseconds(100LL << std::min(round - 1, 5));
            if (auto paused = http_.pause(delay, last_failure); !paused)
                return std::move(paused).error();
        }
        auto listed = comments(number);
        if (!listed.ok()) return std::move(listed).error();
        std::vector<Comment> marked;
        for (auto& c : listed.value())
            if (c.body.find(marker) != std::string::npos) marked.push_back(std::move(c));
        std::sort(marked.begin(), marked.end(),
                  [](const Comment& a, const Comment& b) { return a.id < b.id; });
        const bool mine_visible = std::any_of(marked.begin(), marked.end(), [&](const Comment& c) {
            return c.body.find(writer) != std::string::npos;
        });
        if (posted && !mine_visible) {
            // A list behind our write is waited for (only we delete ours).
            if (my_id) continue;
            // Which comment a create with a lost answer made (if any) only its mark can tell.
            if (++unseen < kUpsertRounds / 2) continue;
        }
        if (marked.empty()) {
            auto created = create_comment_or_unknown(number, content + "\n" + writer, last_failure);
            if (!created.ok()) return std::move(created).error();
            posted = true;
            unseen = 0;
            my_id.reset();
            if (*created) my_id = (*created)->id;
            continue;  // look again: another writer may have been first
        }
        // The oldest marked comment is the one. Comment ids grow in the order comments are
        // made, and a list that shows a comment shows every one made before it: a writer that
        // sees its own comment sees every older one, so it deletes its own unless it is the
        // oldest — and the oldest's writer never deletes it.
        const Comment& oldest = marked.front();
        for (std::size_t i = 1; i < marked.size(); ++i)
            if (marked[i].body.find(writer) != std::string::npos)
                if (auto gone = delete_comment(marked[i].id); !gone) return std::move(gone).error();
        const std::string next = merge ? merge(content_of(oldest.body)) : content;
        if (content_of(oldest.body) == next) return oldest;
        // Its writer line stays: its writer finds it by that.
        const std::string keep = writer_line_of(oldest.body);
        return update_comment(oldest.id, keep.empty() ? next : next + "\n" + keep);
    }
    return Error::general(last_failure + " (gave up after " + std::to_string(kUpsertRounds) +
                          " looks; a duplicate, if one was made, is removed by the next publish)");
}

Result<std::vector<std::string>> GitHub::add_labels(long number,
                                                    const std::vector<std::string>& labels) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/labels";
    // Adding labels an issue has changes nothing: safe to replay.
    auto result = json_body("POST", path, http_.request("POST", path, json{{"labels", labels}}),
                            http_.auth());
    if (!result.ok()) return std::move(result).error();
    std::vector<std::string> names;
    if (result->is_array()) {
        for (const auto& label : result.value()) {
            if (label.is_object() && label.contains("name") && label["name"].is_string())
                names.push_back(label["name"].get<std::string>());
        }
    }
    return names;
}

Result<void> GitHub::remove_label(long number, const std::string& label) {
    const std::string path =
        repo_path() + "/issues/" + std::to_string(number) + "/labels/" + percent_encode(label);
    auto response = http_.request("DELETE", path);
    if (!response.ok()) return std::move(response).error();
    if (response->ok() || response->status == 404) return {};
    return response_error("DELETE", path, response.value(), http_.auth());
}

Result<void> GitHub::react(const std::string& path, const std::string& content) {
    // GitHub answers 200 with the existing reaction when it is there: safe to replay.
    auto result = json_body("POST", path, http_.request("POST", path, json{{"content", content}}),
                            http_.auth());
    if (!result.ok()) return std::move(result).error();
    return {};
}

Result<void> GitHub::add_reaction(long number, const std::string& content) {
    return react(repo_path() + "/issues/" + std::to_string(number) + "/reactions", content);
}

Result<void> GitHub::add_comment_reaction(long long comment_id, const std::string& content) {
    return react(repo_path() + "/issues/comments/" + std::to_string(comment_id) + "/reactions",
                 content);
}

Result<CollaboratorPermission> GitHub::collaborator_permission(const std::string& login) {
    const std::string path =
        repo_path() + "/collaborators/" + percent_encode(login) + "/permission";
    auto response = http_.request("GET", path);
    if (!response.ok()) return std::move(response).error();
    if (response->status == 404) return CollaboratorPermission{"none", "none"};
    auto body = json_body("GET", path, std::move(response), http_.auth());
    if (!body.ok()) return std::move(body).error();
    CollaboratorPermission out;
    out.permission = body->value("permission", "none");
    out.role_name = body->value("role_name", out.permission);
    return out;
}

Result<std::string> GitHub::token_login() {
    auto response = http_.request("GET", "/user");
    if (!response.ok()) return std::move(response).error();
    if (response->status == 401 || response->status == 403) return std::string();
    auto body = json_body("GET", "/user", std::move(response), http_.auth());
    if (!body.ok()) return std::move(body).error();
    return body->value("login", std::string());
}

Result<std::vector<Comment>> GitHub::comments_since(const std::string& since,
                                                    const std::string& seen) {
    const std::string path = repo_path() + "/issues/comments?sort=created&direction=desc&since=" +
                             percent_encode(since) + "&per_page=" + std::to_string(page_size_);
    auto all = http_.get_all_pages(path, kCommentKeys, nullptr, newer_than(seen, "created_at"),
                                   kInnerKeys);
    if (!all.ok()) return std::move(all).error();
    std::vector<Comment> comments;
    for (auto item = all->rbegin(); item != all->rend(); ++item) {
        auto comment = comment_from_json(*item, "GET " + path);
        if (!comment.ok()) return std::move(comment).error();
        comments.push_back(std::move(comment).value());
    }
    return comments;
}

Result<IssueEdits> GitHub::issue_edits(long number) {
    static constexpr const char* kQuery =
        "query($owner: String!, $name: String!, $number: Int!) {"
        " repository(owner: $owner, name: $name) { issue(number: $number) {"
        " lastEditedAt editor { login __typename }"
        " timelineItems(last: 1, itemTypes: [RENAMED_TITLE_EVENT]) {"
        " nodes { ... on RenamedTitleEvent { createdAt actor { login __typename } } } } } } }";
    const json request = {
        {"query", kQuery},
        {"variables", {{"owner", repo_.owner}, {"name", repo_.name}, {"number", number}}}};
    const std::string path = "/graphql";
    auto body = json_body("POST", path, http_.request("POST", path, request), http_.auth());
    if (!body) return std::move(body).error();
    const std::string where = "POST " + path + " (issue #" + std::to_string(number) + ")";
    if (body->contains("errors") && (*body)["errors"].is_array() && !(*body)["errors"].empty())
        return Error::general(where + ": " + (*body)["errors"][0].value("message", "an error"));
    const json* issue = nullptr;
    if (auto data = body->find("data"); data != body->end() && data->is_object())
        if (auto repo = data->find("repository"); repo != data->end() && repo->is_object())
            if (auto i = repo->find("issue"); i != repo->end() && i->is_object()) issue = &*i;
    if (!issue) return Error::general(where + ": expected data.repository.issue");
    auto edit_of = [](const json& actor, const json& at) -> std::optional<TextEdit> {
        if (!at.is_string()) return std::nullopt;
        TextEdit edit;
        edit.at = at.get<std::string>();
        if (actor.is_object()) {
            edit.by = actor.value("login", "");
            edit.bot = actor.value("__typename", "") == "Bot";
        }
        return edit;
    };
    IssueEdits edits;
    edits.body = edit_of(issue->value("editor", json()), issue->value("lastEditedAt", json()));
    const json timeline = issue->value("timelineItems", json::object());
    if (timeline.is_object() && timeline.contains("nodes") && timeline["nodes"].is_array() &&
        !timeline["nodes"].empty() && timeline["nodes"].back().is_object()) {
        const json& renamed = timeline["nodes"].back();
        edits.title = edit_of(renamed.value("actor", json()), renamed.value("createdAt", json()));
    }
    return edits;
}

Result<CommitStatus> GitHub::create_status(const std::string& sha, const CommitStatus& status) {
    const std::string path = repo_path() + "/statuses/" + sha;
    json body = {{"state", status.state}, {"context", status.context}};
    if (!status.description.empty()) body["description"] = status.description.substr(0, 140);
    if (!status.target_url.empty()) body["target_url"] = status.target_url;
    // The newest status of a context wins, so a replay changes nothing a reader sees.
    auto result = json_body("POST", path, http_.request("POST", path, body), http_.auth());
    if (!result.ok()) return std::move(result).error();
    CommitStatus created = status;
    created.id = result->value("id", 0LL);
    created.state = result->value("state", status.state);
    return created;
}

Result<std::vector<CommitStatus>> GitHub::statuses(const std::string& sha) {
    const std::string path = repo_path() + "/commits/" + sha + "/statuses?per_page=100";
    auto list = http_.get_json(path);
    if (!list.ok()) return std::move(list).error();
    std::vector<CommitStatus> out;
    if (!list->is_array()) return Error::general("GitHub: GET " + path + ": expected an array");
    for (const auto& item : *list) {
        CommitStatus status;
        status.state = json_value(item, "state", "");
        status.context = json_value(item, "context", "");
        status.description = json_value(item, "description", "");
        status.target_url = json_value(item, "target_url", "");
        status.id = json_value(item, "id", 0LL);
        out.push_back(std::move(status));
    }
    return out;
}

Result<void> GitHub::create_label(const std::string& name, const std::string& color,
                                  const std::string& description) {
    const std::string path = repo_path() + "/labels";
    json body = {{"name", name}, {"color", color}};
    if (!description.empty()) body["description"] = description;
    auto result = json_body("POST", path, http_.request("POST", path, body, Replay::unless_sent),
                            http_.auth());
    if (!result.ok()) return std::move(result).error();
    return {};
}

Result<void> GitHub::add_review_comment_reaction(long long comment_id, const std::string& content) {
    return react(repo_path() + "/pulls/comments/" + std::to_string(comment_id) + "/reactions",
                 content);
}

Result<PullRequest> GitHub::pull_request(long number) {
    auto body = http_.get_json(repo_path() + "/pulls/" + std::to_string(number));
    if (!body.ok()) return std::move(body).error();
    return pull_request_from_json(*body);
}

Result<std::vector<PullRequest>> GitHub::open_pull_requests() {
    auto list = http_.get_json(repo_path() + "/pulls?" +
                               query_string({{"state", "open"}, {"per_page", "100"}}));
    if (!list.ok()) return std::move(list).error();
    std::vector<PullRequest> out;
    if (list->is_array())
        for (const auto& item : *list) out.push_back(pull_request_from_json(item));
    return out;
}

Result<std::vector<PullRequest>> GitHub::pull_requests_for(const std::string& head) {
    std::string qualified = head.find(':') == std::string::npos ? repo_.owner + ":" + head : head;
    auto list = http_.get_json(
        repo_path() + "/pulls?" +
        query_string(
            {{"head", qualified}, {"state", "all"}, {"sort", "created"}, {"direction", "desc"}}));
    if (!list.ok()) return std::move(list).error();
    std::vector<PullRequest> out;
    if (list->is_array())
        for (const auto& item : *list) out.push_back(pull_request_from_json(item));
    return out;
}

Result<std::optional<PullRequest>> GitHub::open_pull_request_for(const std::string& head) {
    std::string qualified = head.find(':') == std::string::npos ? repo_.owner + ":" + head : head;
    const std::string path =
        repo_path() + "/pulls?" + query_string({{"head", qualified}, {"state", "open"}});
    auto list = http_.get_json(path);
    if (!list.ok()) return std::move(list).error();
    if (list->is_array() && !list->empty())
        return std::optional<PullRequest>(pull_request_from_json(list->front()));
    return std::optional<PullRequest>{};
}

namespace {

// Every item of a list, each read by `read`.
template <typename T, typename Read, std::size_t N>
Result<std::vector<T>> read_list(HttpClient& http, const std::string& path,
                                 const std::string_view (&keys)[N], Read read) {
    auto all = http.get_all_pages(path, keys);
    if (!all.ok()) return std::move(all).error();
    std::vector<T> out;
    for (const auto& item : all.value()) {
        auto one = read(item, "GET " + path);
        if (!one.ok()) return Error::general(one.error().message);
        out.push_back(std::move(one).value());
    }
    return out;
}

}  // namespace

Result<std::vector<Review>> GitHub::reviews(long number) {
    return read_list<Review>(http_,
                             repo_path() + "/pulls/" + std::to_string(number) +
                                 "/reviews?per_page=" + std::to_string(page_size_),
                             kReviewKeys, review_from_json);
}

Result<std::vector<ReviewComment>> GitHub::review_comments(long number) {
    return read_list<ReviewComment>(http_,
                                    repo_path() + "/pulls/" + std::to_string(number) +
                                        "/comments?per_page=" + std::to_string(page_size_),
                                    kReviewCommentKeys, review_comment_from_json);
}

Result<ReviewComment> GitHub::reply_to_review_comment(long number, long long comment_id,
                                                      const std::string& body) {
    const std::string path = repo_path() + "/pulls/" + std::to_string(number) + "/comments/" +
                             std::to_string(comment_id) + "/replies";
    auto created = json_body("POST", path,
                             http_.request("POST", path, json{{"body", body}}, Replay::unless_sent),
                             http_.auth());
    if (!created.ok()) return std::move(created).error();
    return review_comment_from_json(created.value(), "POST " + path);
}

Result<std::vector<CheckRun>> GitHub::check_runs(const std::string& sha) {
    const std::string path = repo_path() + "/commits/" + sha + "/check-runs?per_page=100";
    auto list = http_.get_json(path);
    if (!list.ok()) return std::move(list).error();
    const json runs = json_value(*list, "check_runs", json::array());
    if (!runs.is_array()) return Error::general("GitHub: GET " + path + ": no check_runs list");
    std::vector<CheckRun> out;
    for (const auto& run : runs) {
        if (!run.is_object() || !run.contains("id") || !run["id"].is_number_integer())
            return Error::general("GitHub: GET " + path + ": a check run without its id");
        CheckRun c;
        c.id = run["id"].get<long long>();
        c.name = json_value(run, "name", "");
        c.status = json_value(run, "status", "");
        c.conclusion = run.contains("conclusion") && run["conclusion"].is_string()
                           ? run["conclusion"].get<std::string>()
                           : "";
        c.html_url = json_value(run, "html_url", "");
        if (run.contains("app") && run["app"].is_object())
            c.app = json_value(run["app"], "slug", "");
        out.push_back(std::move(c));
    }
    return out;
}

Result<std::vector<JobStep>> GitHub::job_steps(long long job_id) {
    const std::string path = repo_path() + "/actions/jobs/" + std::to_string(job_id);
    auto job = http_.get_json(path);
    if (!job.ok()) return std::move(job).error();
    std::vector<JobStep> out;
    for (const auto& step : json_value(*job, "steps", json::array()))
        if (step.is_object())
            out.push_back({json_value(step, "number", 0), json_value(step, "name", ""),
                           step.contains("conclusion") && step["conclusion"].is_string()
                               ? step["conclusion"].get<std::string>()
                               : ""});
    return out;
}

Result<std::string> GitHub::job_log_tail(long long job_id, std::size_t max_bytes) {
    const std::string path = repo_path() + "/actions/jobs/" + std::to_string(job_id) + "/logs";
    auto answer = http_.request("GET", path);
    if (!answer.ok()) return std::move(answer).error();
    std::string text;
    if (answer->status == 200) {  // a redirect on GitHub's own host, already followed
        text = std::move(answer->body);
    } else if (answer->status == 302 || answer->status == 307) {
        // Where the log is stored: another host, which gets no token.
        const std::string location = answer->header("location");
        const std::size_t slash = location.find('/', location.find("://") + 3);
        auto origin = parse_base_url(location.substr(0, slash), "the job log's address");
        if (!origin.ok()) return std::move(origin).error();
        HttpOptions options = http_.options();
        options.base = *origin;
        options.service = "GitHub's log store";
        options.github_api = false;
        options.cache_dir.reset();
        auto store = HttpClient::create(std::move(options), anonymous_auth());
        if (!store.ok()) return std::move(store).error();
        auto log = (*store)->request(
            "GET", slash == std::string::npos ? std::string("/") : location.substr(slash));
        if (!log.ok()) return std::move(log).error();
        if (log->status != 200)
            return Error::general("GitHub's log store: GET " + origin->origin() + ": " +
                                  std::to_string(log->status));
        text = std::move(log->body);
    } else {
        return Error::general("GitHub: GET " + path + ": " + std::to_string(answer->status));
    }
    if (text.size() > max_bytes) text.erase(0, text.size() - max_bytes);
    return text;
}

Result<PullRequest> GitHub::create_pull_request(const PullRequestSpec& spec) {
    const std::string path = repo_path() + "/pulls";
    json body = {{"title", spec.title},
                 {"head", spec.head},
                 {"base", spec.base},
                 {"body", spec.body},
                 {"draft", spec.draft}};
    for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
        auto existing = open_pull_request_for(spec.head);
        if (!existing.ok()) return std::move(existing).error();
        if (existing->has_value()) return **existing;
        auto response = http_.request("POST", path, body, Replay::unless_sent);
        if (!response.ok()) return std::move(response).error();
        if (response->outcome_unknown) continue;
        auto created = json_body("POST", path, std::move(response), http_.auth());
        if (!created.ok()) return std::move(created).error();
        PullRequest pr = pull_request_from_json(created.value());
        pr.created = true;
        return pr;
    }
    return Error::general("GitHub: POST " + path +
                          ": no answer after several attempts (no duplicate was opened)");
}

Result<PullRequest> GitHub::update_pull_request(long number, const std::string& title,
                                                const std::string& body) {
    const std::string path = repo_path() + "/pulls/" + std::to_string(number);
    auto updated = json_body("PATCH", path,
                             http_.request("PATCH", path, json{{"title", title}, {"body", body}}),
                             http_.auth());
    if (!updated.ok()) return std::move(updated).error();
    return pull_request_from_json(updated.value());
}

}  // namespace cocode::github
