#include "github/types.h"

#include <algorithm>

#include "core/json_text.h"

namespace cocode::github {
namespace {

using json = nlohmann::json;

// Bad data from GitHub (or any file read as GitHub's JSON) is a general error: nothing the
// user typed is wrong. The local issue store, which a person writes, says otherwise itself.
Error field_error(std::string_view where, std::string_view field, std::string_view expected) {
    return Error::general(std::string(where) + ": field '" + std::string(field) + "': expected " +
                          std::string(expected));
}

// A string field that may be absent or null ("" then); anything else is an error.
Result<std::string> optional_string(const json& value, const char* field, std::string_view where) {
    auto it = value.find(field);
    if (it == value.end() || it->is_null()) return std::string{};
    if (!it->is_string()) return field_error(where, field, "a string");
    return it->get<std::string>();
}

Result<std::string> login_of(const json& value, const char* field, std::string_view where) {
    auto it = value.find(field);
    if (it == value.end() || it->is_null()) return std::string{};
    if (!it->is_object()) return field_error(where, field, "an object with a login");
    return optional_string(*it, "login", std::string(where) + ": " + field);
}

// Whether a document's `user` is of GitHub's type Bot: a bot whose login lacks "[bot]" is one.
bool typed_bot(const json& value) {
    auto user = value.find("user");
    return user != value.end() && user->is_object() && user->value("type", "") == "Bot";
}

bool valid_name_part(std::string_view part) {
    return !part.empty() && part != "." && part != ".." &&
           std::all_of(part.begin(), part.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                      c == '.';
           });
}

}  // namespace

Result<RepoRef> parse_repo_ref(std::string_view text, std::string_view what) {
    auto slash = text.find('/');
    if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos ||
        !valid_name_part(text.substr(0, slash)) || !valid_name_part(text.substr(slash + 1)))
        return Error::usage(std::string(what) + ": '" + std::string(text) + "' is not OWNER/NAME");
    return RepoRef{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

std::optional<RemoteRepo> parse_remote_url(std::string_view url) {
    std::string_view host_part;
    std::string_view path;
    if (auto sep = url.find("://"); sep != std::string_view::npos) {
        auto rest = url.substr(sep + 3);
        auto slash = rest.find('/');
        if (slash == std::string_view::npos) return std::nullopt;
        host_part = rest.substr(0, slash);
        path = rest.substr(slash + 1);
    } else if (auto colon = url.find(':'); colon != std::string_view::npos) {
        host_part = url.substr(0, colon);  // scp-like: git@host:owner/name.git
        path = url.substr(colon + 1);
    } else {
        return std::nullopt;
    }
    if (auto at = host_part.rfind('@'); at != std::string_view::npos)
        host_part.remove_prefix(at + 1);
    if (auto colon = host_part.find(':'); colon != std::string_view::npos)
        host_part = host_part.substr(0, colon);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    if (path.size() > 4 && path.substr(path.size() - 4) == ".git") path.remove_suffix(4);
    auto repo = parse_repo_ref(path, "remote");
    if (host_part.empty() || !repo.ok()) return std::nullopt;
    return RemoteRepo{std::string(host_part), std::move(repo).value()};
}

Result<Issue> issue_from_json(const json& value, std::string_view where) {
    if (!value.is_object())
        return Error::general(std::string(where) + ": expected an issue object");
    Issue issue;
    auto number = value.find("number");
    if (number == value.end() || !number->is_number_integer() || number->get<long>() <= 0)
        return field_error(where, "number", "a positive integer");
    issue.number = number->get<long>();
    auto title = value.find("title");
    if (title == value.end() || !title->is_string()) return field_error(where, "title", "a string");
    issue.title = title->get<std::string>();
    for (auto [field, target] : {std::pair{"body", &issue.body},
                                 {"state", &issue.state},
                                 {"html_url", &issue.html_url},
                                 {"created_at", &issue.created_at},
                                 {"updated_at", &issue.updated_at}}) {
        auto text = optional_string(value, field, where);
        if (!text.ok()) return std::move(text).error();
        *target = std::move(text).value();
    }
    if (issue.state.empty()) issue.state = "open";
    if (issue.state != "open" && issue.state != "closed")
        return field_error(where, "state", "\"open\" or \"closed\"");
    auto author = login_of(value, "user", where);
    if (!author.ok()) return std::move(author).error();
    issue.author = std::move(author).value();
    issue.author_is_bot = typed_bot(value);

    if (auto labels = value.find("labels"); labels != value.end() && !labels->is_null()) {
        if (!labels->is_array()) return field_error(where, "labels", "an array");
        for (const auto& label : *labels) {
            // GitHub returns label objects; accept plain names too (hand-written local files).
            if (label.is_string()) {
                issue.labels.push_back(label.get<std::string>());
            } else if (label.is_object() && label.contains("name") && label["name"].is_string()) {
                issue.labels.push_back(label["name"].get<std::string>());
            } else {
                return field_error(where, "labels", "label objects with a name, or strings");
            }
        }
    }
    if (auto assignees = value.find("assignees");
        assignees != value.end() && !assignees->is_null()) {
        if (!assignees->is_array()) return field_error(where, "assignees", "an array");
        for (const auto& assignee : *assignees) {
            if (!assignee.is_object() || !assignee.contains("login") ||
                !assignee["login"].is_string())
                return field_error(where, "assignees", "user objects with a login");
            issue.assignees.push_back(assignee["login"].get<std::string>());
        }
    }
    if (auto comments = value.find("comments"); comments != value.end()) {
        if (!comments->is_number_integer()) return field_error(where, "comments", "an integer");
        issue.comments = comments->get<long>();
    }
    issue.is_pull_request = value.contains("pull_request") && !value["pull_request"].is_null();
    return issue;
}

bool CollaboratorPermission::can_write() const {
    for (const char* allowed : {"admin", "maintain", "write"})
        if (role_name == allowed) return true;
    return permission == "admin" || permission == "write";
}

Result<Review> review_from_json(const json& value, std::string_view where) {
    if (!value.is_object()) return Error::general(std::string(where) + ": expected a review");
    Review review;
    auto id = value.find("id");
    if (id == value.end() || !id->is_number_integer())
        return field_error(where, "id", "an integer");
    review.id = id->get<long long>();
    for (auto [field, target] : {std::pair{"state", &review.state},
                                 {"body", &review.body},
                                 {"submitted_at", &review.submitted_at},
                                 {"commit_id", &review.commit_id}}) {
        auto text = optional_string(value, field, where);
        if (!text.ok()) return std::move(text).error();
        *target = std::move(text).value();
    }
    auto author = login_of(value, "user", where);
    if (!author.ok()) return std::move(author).error();
    review.author = std::move(author).value();
    review.author_is_bot = typed_bot(value);
    return review;
}

Result<ReviewComment> review_comment_from_json(const json& value, std::string_view where) {
    if (!value.is_object())
        return Error::general(std::string(where) + ": expected a review comment");
    ReviewComment comment;
    auto id = value.find("id");
    if (id == value.end() || !id->is_number_integer())
        return field_error(where, "id", "an integer");
    comment.id = id->get<long long>();
    for (auto [field, target] : {std::pair{"pull_request_review_id", &comment.review_id},
                                 {"in_reply_to_id", &comment.in_reply_to}}) {
        auto number = value.find(field);
        if (number == value.end() || number->is_null()) continue;
        if (!number->is_number_integer()) return field_error(where, field, "an integer");
        *target = number->get<long long>();
    }
    if (auto line = value.find("line"); line != value.end() && !line->is_null()) {
        if (!line->is_number_integer()) return field_error(where, "line", "an integer");
        comment.line = line->get<int>();
    }
    for (auto [field, target] : {std::pair{"path", &comment.path},
                                 {"diff_hunk", &comment.diff_hunk},
                                 {"body", &comment.body},
                                 {"created_at", &comment.created_at}}) {
        auto text = optional_string(value, field, where);
        if (!text.ok()) return std::move(text).error();
        *target = std::move(text).value();
    }
    auto author = login_of(value, "user", where);
    if (!author.ok()) return std::move(author).error();
    comment.author = std::move(author).value();
    comment.author_is_bot = typed_bot(value);
    return comment;
}

Result<Comment> comment_from_json(const json& value, std::string_view where) {
    if (!value.is_object())
        return Error::general(std::string(where) + ": expected a comment object");
    Comment comment;
    auto id = value.find("id");
    if (id == value.end() || !id->is_number_integer())
        return field_error(where, "id", "an integer");
    comment.id = id->get<long long>();
    for (auto [field, target] : {std::pair{"body", &comment.body},
                                 {"html_url", &comment.html_url},
                                 {"created_at", &comment.created_at},
                                 {"updated_at", &comment.updated_at}}) {
        auto text = optional_string(value, field, where);
        if (!text.ok()) return std::move(text).error();
        *target = std::move(text).value();
    }
    auto author = login_of(value, "user", where);
    if (!author.ok()) return std::move(author).error();
    comment.author = std::move(author).value();
    auto association = optional_string(value, "author_association", where);
    if (!association.ok()) return std::move(association).error();
    comment.author_association = std::move(association).value();
    comment.author_is_bot = typed_bot(value);
    // …/issues/<n>: the number the issues API knows it by (a pull request's too).
    auto issue_url = optional_string(value, "issue_url", where);
    if (!issue_url.ok()) return std::move(issue_url).error();
    if (const auto slash = issue_url->rfind('/'); slash != std::string::npos) {
        const std::string number = issue_url->substr(slash + 1);
        if (!number.empty() && number.size() < 10 &&
            number.find_first_not_of("0123456789") == std::string::npos)
            comment.issue = std::stol(number);
    }
    comment.on_pull_request = comment.html_url.find("/pull/") != std::string::npos;
    return comment;
}

Result<IssueEvent> issue_event_from_json(const json& value, std::string_view where) {
    if (!value.is_object()) return Error::general(std::string(where) + ": expected an event");
    IssueEvent e;
    auto id = value.find("id");
    if (id == value.end() || !id->is_number_integer())
        return field_error(where, "id", "an integer");
    e.id = id->get<long long>();
    auto kind = value.find("event");
    if (kind == value.end() || !kind->is_string()) return field_error(where, "event", "a string");
    e.event = kind->get<std::string>();
    if (auto label = value.find("label"); label != value.end() && label->is_object()) {
        auto name = optional_string(*label, "name", std::string(where) + ": label");
        if (!name.ok()) return std::move(name).error();
        e.label = std::move(name).value();
    }
    auto created = optional_string(value, "created_at", where);
    if (!created.ok()) return std::move(created).error();
    e.created_at = std::move(created).value();
    auto actor = login_of(value, "actor", where);
    if (!actor.ok()) return std::move(actor).error();
    e.actor = std::move(actor).value();
    if (auto who = value.find("actor"); who != value.end() && who->is_object())
        e.actor_is_bot = who->value("type", "") == "Bot";
    return e;
}

Result<Repository> repository_from_json(const json& value, std::string_view where) {
    if (!value.is_object()) return Error::general(std::string(where) + ": expected a repository");
    Repository repo;
    for (auto [field, target] : {std::pair{"full_name", &repo.full_name},
                                 {"default_branch", &repo.default_branch},
                                 {"html_url", &repo.html_url}}) {
        auto text = optional_string(value, field, where);
        if (!text.ok()) return std::move(text).error();
        *target = std::move(text).value();
    }
    if (repo.default_branch.empty()) return field_error(where, "default_branch", "a branch name");
    repo.is_private = json_value(value, "private", false);
    return repo;
}

json to_json(const Issue& issue) {
    return {{"number", issue.number},
            {"title", issue.title},
            {"state", issue.state},
            {"labels", issue.labels},
            {"assignees", issue.assignees},
            {"author", issue.author},
            {"url", issue.html_url},
            {"created_at", issue.created_at},
            {"updated_at", issue.updated_at},
            {"comments", issue.comments},
            {"body", issue.body}};
}

json to_json(const Comment& comment) {
    return {{"id", comment.id},
            {"author", comment.author},
            {"url", comment.html_url},
            {"created_at", comment.created_at},
            {"updated_at", comment.updated_at},
            {"body", comment.body}};
}

bool bot_account(std::string_view login, bool typed_bot) {
    return typed_bot || (login.size() > 5 && login.substr(login.size() - 5) == "[bot]");
}

bool matches(const Issue& issue, const IssueQuery& query) {
    if (issue.is_pull_request) return false;
    std::string state = query.state.value_or("open");
    if (state != "all" && issue.state != state) return false;
    for (const auto& label : query.labels) {
        if (std::find(issue.labels.begin(), issue.labels.end(), label) == issue.labels.end())
            return false;
    }
    if (query.assignee) {
        if (*query.assignee == "none") return issue.assignees.empty();
        if (*query.assignee == "*") return !issue.assignees.empty();
        return std::find(issue.assignees.begin(), issue.assignees.end(), *query.assignee) !=
               issue.assignees.end();
    }
    return true;
}

std::string comment_marker(std::string_view key) {
    return "<!-- cocode:" + std::string(key) + " -->";
}

}  // namespace cocode::github
