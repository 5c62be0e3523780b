#include "github/api.h"

namespace cocode::github {
namespace {

using json = nlohmann::json;

constexpr int kUpsertAttempts = 4;

PullRequest pull_request_from_json(const json& value) {
    PullRequest pr;
    pr.number = value.value("number", 0L);
    pr.html_url = value.value("html_url", "");
    pr.state = value.value("state", "");
    pr.draft = value.value("draft", false);
    return pr;
}

const Comment* find_marked(const std::vector<Comment>& comments, const std::string& marker) {
    for (const auto& comment : comments) {
        if (comment.body.find(marker) != std::string::npos) return &comment;
    }
    return nullptr;
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
    params["per_page"] = std::to_string(query.per_page);
    if (query.state) params["state"] = *query.state;
    if (query.assignee) params["assignee"] = *query.assignee;
    if (!query.labels.empty()) {
        std::string joined;
        for (const auto& label : query.labels) joined += (joined.empty() ? "" : ",") + label;
        params["labels"] = joined;
    }
    const std::string path = repo_path() + "/issues?" + query_string(params);
    auto all = http_.get_all_pages(path);
    if (!all.ok()) return std::move(all).error();
    std::vector<Issue> issues;
    for (const auto& item : all.value()) {
        auto issue = issue_from_json(item, "GET " + path);
        if (!issue.ok()) return Error::general(issue.error().message);
        if (!issue->is_pull_request) issues.push_back(std::move(issue).value());
    }
    return issues;
}

Result<std::vector<Comment>> GitHub::comments(long number) {
    const std::string path =
        repo_path() + "/issues/" + std::to_string(number) + "/comments?per_page=100";
    auto all = http_.get_all_pages(path);
    if (!all.ok()) return std::move(all).error();
    std::vector<Comment> comments;
    for (const auto& item : all.value()) {
        auto comment = comment_from_json(item, "GET " + path);
        if (!comment.ok()) return Error::general(comment.error().message);
        comments.push_back(std::move(comment).value());
    }
    return comments;
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
    const std::string path = repo_path() + "/issues/comments/" + std::to_string(comment_id);
    auto updated =
        json_body("PATCH", path, http_.request("PATCH", path, json{{"body", body}}), http_.auth());
    if (!updated.ok()) return std::move(updated).error();
    return comment_from_json(updated.value(), "PATCH " + path);
}

Result<Comment> GitHub::upsert_comment(long number, const std::string& marker,
                                       const std::string& body_in) {
    const std::string body =
        body_in.find(marker) == std::string::npos ? marker + "\n" + body_in : body_in;
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/comments";
    std::string last_failure;
    for (int attempt = 0; attempt < kUpsertAttempts; ++attempt) {
        auto existing = comments(number);
        if (!existing.ok()) return std::move(existing).error();
        if (const Comment* found = find_marked(existing.value(), marker)) {
            if (found->body == body) return *found;
            return update_comment(found->id, body);
        }
        auto response = http_.request("POST", path, json{{"body", body}}, Replay::unless_sent);
        if (!response.ok()) return std::move(response).error();
        if (response->outcome_unknown) {
            // It may have landed: look again before creating anything.
            last_failure = response->failure;
            continue;
        }
        auto created = json_body("POST", path, std::move(response), http_.auth());
        if (!created.ok()) return std::move(created).error();
        return comment_from_json(created.value(), "POST " + path);
    }
    return Error::general(last_failure + " (gave up after " + std::to_string(kUpsertAttempts) +
                          " attempts; no duplicate comment was made)");
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

Result<void> GitHub::add_reaction(long number, const std::string& content) {
    const std::string path = repo_path() + "/issues/" + std::to_string(number) + "/reactions";
    // GitHub answers 200 with the existing reaction when it is there: safe to replay.
    auto result = json_body("POST", path, http_.request("POST", path, json{{"content", content}}),
                            http_.auth());
    if (!result.ok()) return std::move(result).error();
    return {};
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
        status.state = item.value("state", "");
        status.context = item.value("context", "");
        if (item.contains("description") && item["description"].is_string())
            status.description = item["description"].get<std::string>();
        if (item.contains("target_url") && item["target_url"].is_string())
            status.target_url = item["target_url"].get<std::string>();
        status.id = item.value("id", 0LL);
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

Result<PullRequest> GitHub::create_pull_request(const PullRequestSpec& spec) {
    const std::string path = repo_path() + "/pulls";
    json body = {{"title", spec.title},
                 {"head", spec.head},
                 {"base", spec.base},
                 {"body", spec.body},
                 {"draft", spec.draft}};
    for (int attempt = 0; attempt < kUpsertAttempts; ++attempt) {
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
