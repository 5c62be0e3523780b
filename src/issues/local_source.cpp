#include "issues/local_source.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"

namespace cocode::issues {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string github_time_now() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// An absolute path without throwing: the path itself when the current folder is gone.
fs::path absolute_path(const fs::path& path) {
    std::error_code ec;
    auto out = fs::absolute(path, ec);
    return ec ? path : out;
}

std::optional<long> number_of(const fs::path& file) {
    std::string name = file.filename().string();
    if (name.size() <= 5 || name.substr(name.size() - 5) != ".json") return std::nullopt;
    std::string stem = name.substr(0, name.size() - 5);
    if (stem.empty() || stem.size() > 12 ||
        !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stol(stem);
}

Result<json> parse_json_file(const fs::path& file, const std::string& text) {
    return parse_json_text(text, file.string(), "an issue object in GitHub's shape");
}

class LocalSource final : public IssueSource {
  public:
    explicit LocalSource(fs::path dir) : dir_(std::move(dir)) {}

    std::string describe() const override { return "local folder " + dir_.string(); }
    std::string issue_url(long number) const override {
        return "file://" + absolute_path(dir_ / (std::to_string(number) + ".json")).string();
    }

    Result<std::vector<Issue>> list(const IssueQuery& query) override {
        std::vector<Issue> issues;
        std::error_code ec;
        for (const auto& entry : list_folder(dir_, ec)) {
            if (!entry.is_regular_file || !number_of(entry.path)) continue;
            auto issue = load(entry.path);
            if (!issue.ok() && query.on_unreadable) {
                query.on_unreadable(issue.error());
                continue;
            }
            if (!issue.ok()) return std::move(issue).error();
            if (matches(issue.value(), query)) issues.push_back(std::move(issue).value());
        }
        if (ec) return Error::from_errno(dir_.string(), ec.value());
        // Newest first, as GitHub lists them.
        std::sort(issues.begin(), issues.end(),
                  [](const Issue& a, const Issue& b) { return a.number > b.number; });
        return issues;
    }

    Result<Issue> get(long number) override {
        fs::path file = issue_file(number);
        std::error_code ec;
        if (!fs::exists(file, ec))
            return Error::general("issue " + std::to_string(number) + ": not in " + describe() +
                                  " (no " + file.filename().string() + ")");
        return load(file);
    }

    Result<std::vector<Comment>> comments(long number) override {
        fs::path file = comments_file(number);
        std::error_code ec;
        if (!fs::exists(file, ec)) return std::vector<Comment>{};
        auto text = read_file(file);
        if (!text.ok()) return std::move(text).error();
        auto array = parse_comments(file, text.value());
        if (!array.ok()) return std::move(array).error();
        std::vector<Comment> comments;
        for (std::size_t i = 0; i < array->size(); ++i) {
            auto comment = github::comment_from_json(
                array.value()[i], file.string() + ": comment " + std::to_string(i + 1));
            // A file a person wrote: its mistakes are theirs to fix (exit 2).
            if (!comment.ok()) return Error::usage(comment.error().message);
            comments.push_back(std::move(comment).value());
        }
        return comments;
    }

    Result<Comment> upsert_comment(long number, const std::string& marker,
                                   const std::string& body_in,
                                   const github::GitHub::CommentEdit& merge) override {
        if (auto issue = get(number); !issue.ok()) return std::move(issue).error();
        const std::string body =
            body_in.find(marker) == std::string::npos ? marker + "\n" + body_in : body_in;
        const fs::path file = comments_file(number);
        json written;
        auto updated = update_file_locked(
            file, [&](const std::optional<std::string>& current) -> Result<std::string> {
                json array = json::array();
                if (current) {
                    auto parsed = parse_comments(file, *current);
                    if (!parsed.ok()) return std::move(parsed).error();
                    array = std::move(parsed).value();
                }
                long long next_id = 1;
                json* found = nullptr;
                for (auto& comment : array) {
                    if (comment.is_object() && comment.contains("id") &&
                        comment["id"].is_number_integer())
                        next_id = std::max(next_id, comment["id"].get<long long>() + 1);
                    if (!found && comment.is_object() && comment.contains("body") &&
                        comment["body"].is_string() &&
                        comment["body"].get<std::string>().find(marker) != std::string::npos)
                        found = &comment;
                }
                const std::string now = github_time_now();
                if (found) {
                    (*found)["body"] = merge ? merge((*found)["body"].get<std::string>()) : body;
                    (*found)["updated_at"] = now;
                    written = *found;
                } else {
                    const char* user = std::getenv("USER");
                    written = {{"id", next_id},
                               {"body", body},
                               {"html_url", "file://" + absolute_path(file).string() + "#comment-" +
                                                std::to_string(next_id)},
                               {"user", {{"login", user && *user ? user : "cocode"}}},
                               {"created_at", now},
                               {"updated_at", now}};
                    array.push_back(written);
                }
                return json_dump(array, 2) + "\n";
            });
        if (!updated.ok()) return std::move(updated).error();
        return github::comment_from_json(written, file.string());
    }

    Result<std::optional<Comment>> edit_comment(long number, long long id,
                                                const github::GitHub::CommentEdit& edit) override {
        const fs::path file = comments_file(number);
        std::error_code ec;
        if (!fs::exists(file, ec)) return std::optional<Comment>();
        std::optional<json> written;
        auto updated = update_file_locked(
            file, [&](const std::optional<std::string>& current) -> Result<std::string> {
                auto parsed = parse_comments(file, current.value_or("[]"));
                if (!parsed.ok()) return std::move(parsed).error();
                json array = std::move(parsed).value();
                for (auto& comment : array) {
                    if (!comment.is_object() || json_value(comment, "id", 0LL) != id) continue;
                    comment["body"] = edit(json_value(comment, "body", ""));
                    comment["updated_at"] = github_time_now();
                    written = comment;
                    break;
                }
                return json_dump(array, 2) + "\n";
            });
        if (!updated.ok()) return std::move(updated).error();
        if (!written) return std::optional<Comment>();
        auto comment = github::comment_from_json(*written, file.string());
        if (!comment.ok()) return std::move(comment).error();
        return std::optional<Comment>(std::move(comment).value());
    }

    bool local() const override { return true; }

    Result<void> set_status(const std::string& sha, const github::CommitStatus& status) override {
        const fs::path file = dir_ / "statuses.json";
        return update_file_locked(
            file, [&](const std::optional<std::string>& current) -> Result<std::string> {
                json array = json::array();
                if (current) {
                    auto parsed = parse_json_file(file, *current);
                    if (!parsed.ok()) return std::move(parsed).error();
                    if (!parsed->is_array())
                        return Error::usage(file.string() + ": expected an array of statuses");
                    array = std::move(parsed).value();
                }
                json entry = {{"sha", sha},
                              {"state", status.state},
                              {"context", status.context},
                              {"description", status.description},
                              {"target_url", status.target_url},
                              {"updated_at", github_time_now()}};
                auto same = std::find_if(array.begin(), array.end(), [&](const json& s) {
                    return s.is_object() && json_value(s, "sha", "") == sha &&
                           json_value(s, "context", "") == status.context;
                });
                if (same != array.end())
                    *same = entry;
                else
                    array.push_back(entry);
                return json_dump(array, 2) + "\n";
            });
    }

    Result<std::optional<github::PullRequest>> upsert_pull_request(
        const github::PullRequestSpec&) override {
        return std::optional<github::PullRequest>{};
    }

    Result<std::vector<std::string>> add_labels(long number,
                                                const std::vector<std::string>& labels) override {
        std::vector<std::string> now;
        auto edited = edit_labels(number, [&](json& array) {
            for (const auto& label : labels) {
                bool present = std::any_of(array.begin(), array.end(),
                                           [&](const json& l) { return label_name(l) == label; });
                if (!present) array.push_back({{"name", label}});
            }
            for (const auto& l : array) now.push_back(label_name(l));
        });
        if (!edited.ok()) return std::move(edited).error();
        return now;
    }

    Result<void> remove_label(long number, const std::string& label) override {
        return edit_labels(number, [&](json& array) {
            array.erase(std::remove_if(array.begin(), array.end(),
                                       [&](const json& l) { return label_name(l) == label; }),
                        array.end());
        });
    }

  private:
    fs::path issue_file(long number) const { return dir_ / (std::to_string(number) + ".json"); }
    fs::path comments_file(long number) const {
        return dir_ / (std::to_string(number) + ".comments.json");
    }

    static std::string label_name(const json& label) {
        if (label.is_string()) return label.get<std::string>();
        if (label.is_object() && label.contains("name") && label["name"].is_string())
            return label["name"].get<std::string>();
        return {};
    }

    Result<Issue> load(const fs::path& file) const {
        auto text = read_file(file);
        if (!text.ok()) return std::move(text).error();
        auto value = parse_json_file(file, text.value());
        if (!value.ok()) return std::move(value).error();
        auto issue = github::issue_from_json(value.value(), file.string());
        if (!issue.ok()) return Error::usage(issue.error().message);
        if (issue->number != number_of(file))
            return Error::usage(file.string() + ": field 'number': expected " +
                                std::to_string(*number_of(file)) + " (the file's name), found " +
                                std::to_string(issue->number));
        return issue;
    }

    static Result<json> parse_comments(const fs::path& file, const std::string& text) {
        auto value = parse_json_file(file, text);
        if (!value.ok()) return std::move(value).error();
        if (!value->is_array())
            return Error::usage(file.string() + ": expected an array of comments");
        return value;
    }

    Result<void> edit_labels(long number, const std::function<void(json&)>& edit) {
        const fs::path file = issue_file(number);
        std::error_code ec;
        if (!fs::exists(file, ec))
            return Error::general("issue " + std::to_string(number) + ": not in " + describe());
        return update_file_locked(
            file, [&](const std::optional<std::string>& current) -> Result<std::string> {
                auto value = parse_json_file(file, current.value_or(""));
                if (!value.ok()) return std::move(value).error();
                json& issue = value.value();
                if (!issue.is_object()) return Error::usage(file.string() + ": expected an object");
                if (!issue.contains("labels") || !issue["labels"].is_array())
                    issue["labels"] = json::array();
                edit(issue["labels"]);
                issue["updated_at"] = github_time_now();
                return json_dump(issue, 2) + "\n";
            });
    }

    fs::path dir_;
};

}  // namespace

Result<std::unique_ptr<IssueSource>> open_local_source(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return Error::usage("--issues: " + dir.string() +
                            ": no such folder (expected a folder of <number>.json issues)");
    return std::unique_ptr<IssueSource>(std::make_unique<LocalSource>(dir));
}

std::vector<long> local_issue_numbers(const fs::path& dir) {
    std::vector<long> out;
    std::error_code ec;
    for (const auto& entry : list_folder(dir, ec))
        if (auto number = entry.is_regular_file ? number_of(entry.path) : std::nullopt)
            out.push_back(*number);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace cocode::issues
