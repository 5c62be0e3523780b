#include "issues/github_source.h"

#include "github/api.h"

namespace cocode::issues {
namespace {

class GitHubSource final : public IssueSource {
  public:
    GitHubSource(std::unique_ptr<github::HttpClient> http, github::RepoRef repo)
        : http_(std::move(http)), api_(*http_, std::move(repo)) {}

    std::string issue_url(long number) const override {
        // GitHub's own html_url is always in the issue; this is only a fallback.
        std::string host =
            http_->base().host == "api.github.com" ? "github.com" : http_->base().host;
        return "https://" + host + "/" + api_.repo().full() + "/issues/" + std::to_string(number);
    }
    github::GitHub* github_api() override { return &api_; }
    std::string describe() const override {
        return "github " + api_.repo().full() + " (" + http_->base().str() + ")";
    }
    Result<std::vector<Issue>> list(const IssueQuery& query) override { return api_.issues(query); }
    Result<Issue> get(long number) override {
        auto issue = api_.issue(number);
        if (issue.ok() && issue->is_pull_request)
            return Error::general("#" + std::to_string(number) + " in " + api_.repo().full() +
                                  " is a pull request, not an issue");
        return issue;
    }
    Result<std::vector<Comment>> comments(long number) override { return api_.comments(number); }
    Result<Comment> upsert_comment(long number, const std::string& marker, const std::string& body,
                                   const github::GitHub::CommentEdit& merge) override {
        return api_.upsert_comment(number, marker, body, merge);
    }
    Result<std::optional<Comment>> edit_comment(long, long long id,
                                                const github::GitHub::CommentEdit& edit) override {
        return api_.edit_comment(id, edit);
    }
    Result<std::vector<std::string>> add_labels(long number,
                                                const std::vector<std::string>& labels) override {
        return api_.add_labels(number, labels);
    }
    Result<void> remove_label(long number, const std::string& label) override {
        return api_.remove_label(number, label);
    }
    Result<void> set_status(const std::string& sha, const github::CommitStatus& status) override {
        // Publishing again what the commit already says adds nothing but noise to its list.
        auto existing = api_.statuses(sha);
        if (!existing.ok()) return std::move(existing).error();
        for (const auto& s : *existing) {
            if (s.context != status.context) continue;
            if (s.state == status.state && s.description == status.description.substr(0, 140))
                return {};
            break;  // the newest of the context is the one that counts
        }
        auto created = api_.create_status(sha, status);
        if (!created.ok()) return std::move(created).error();
        return {};
    }
    Result<std::optional<github::PullRequest>> upsert_pull_request(
        const github::PullRequestSpec& spec) override {
        auto pr = api_.create_pull_request(spec);
        if (!pr.ok()) return std::move(pr).error();
        if (pr->created) return std::optional<github::PullRequest>(*pr);
        auto updated = api_.update_pull_request(pr->number, spec.title, spec.body);
        if (!updated.ok()) return std::move(updated).error();
        return std::optional<github::PullRequest>(*updated);
    }

  private:
    std::unique_ptr<github::HttpClient> http_;
    github::GitHub api_;
};

}  // namespace

std::unique_ptr<IssueSource> github_source(std::unique_ptr<github::HttpClient> http,
                                           github::RepoRef repo) {
    return std::make_unique<GitHubSource>(std::move(http), std::move(repo));
}

}  // namespace cocode::issues
