#include "check/publish.h"

#include <algorithm>

#include "check/report.h"
#include "git/cli.h"
#include "git/line_history.h"
#include "github/git_remote.h"
#include "github/url.h"
#include "proc/command.h"
#include "proc/environment.h"

namespace cocode::check {
namespace fs = std::filesystem;

namespace {

// Whether a remote-tracking ref holds `sha`: GitHub knows the commit, so a status can go on it.
bool on_a_remote(const fs::path& worktree, const std::string& sha) {
    auto r = git::git_output(worktree, {"branch", "-r", "--contains", sha});
    return r && !r->empty();
}

std::string status_description(const Verdict& v) {
    int passed = 0, failed = 0;
    std::string first_failure;
    for (const auto& c : v.checks) {
        if (c.outcome == Outcome::pass) ++passed;
        if (c.outcome == Outcome::fail && failed++ == 0) first_failure = c.name + ": " + c.reason;
    }
    std::string text =
        v.pass ? "PASS: " + std::to_string(passed) + " checks passed" : "FAIL: " + first_failure;
    if (text.size() > 140) text = text.substr(0, 137) + "...";  // GitHub's limit
    return text;
}

// One reply per thread the round was given, unless publishing before already made it.
Result<std::vector<std::string>> reply_to_threads(github::GitHub& github, const Verdict& v,
                                                  const PublishRequest& request) {
    const std::string marker = "<!-- cocode:reply/" + request.run_id + " -->";
    auto existing = github.review_comments(request.round_pull);
    if (!existing) return std::move(existing).error();
    std::vector<std::string> notes;
    const std::string round = "Round " + std::to_string(request.round);
    for (const auto& thread : request.threads) {
        const bool answered =
            std::any_of(existing->begin(), existing->end(), [&](const github::ReviewComment& c) {
                return c.in_reply_to == thread.id && c.body.find(marker) != std::string::npos;
            });
        if (answered) continue;
        auto changed = git::commit_changing_line(request.worktree, request.round_from, v.head,
                                                 thread.path, thread.line);
        if (!changed) return std::move(changed).error();
        std::string body = *changed
                               ? round + " changed these lines in " + (*changed)->substr(0, 7) + "."
                               : round + " left these lines alone.";
        body += std::string(" Its verdict: ") + (v.pass ? "PASS" : "FAIL") + ".\n\n" + marker;
        auto replied = github.reply_to_review_comment(request.round_pull, thread.id, body);
        if (!replied) return std::move(replied).error();
        notes.push_back("replied in the thread on " + thread.path + ":" +
                        std::to_string(thread.line));
    }
    return notes;
}

}  // namespace

PublishRequest configured_request(const config::Config& config, const fs::path& worktree,
                                  const Verdict& verdict, PublishAsks asked) {
    PublishRequest request;
    request.worktree = worktree;
    request.markdown = render_markdown(verdict);
    request.status = config.publish.status;
    request.labels = config.publish.labels;
    request.push = config.publish.push || asked.push;
    request.pull_request = config.publish.pull_request || asked.pull_request;
    request.pass_label = config.check.pass_label;
    request.fail_label = config.check.fail_label;
    if (verdict.plan_round) {
        // A plan round wrote nothing: its plan goes on the issue, and nothing else moves (no
        // commit to set a status on, no branch to push, no verdict label).
        request.markdown = render_plan_markdown(verdict, config.trigger.command);
        request.status = request.labels = request.push = request.pull_request = false;
        return request;
    }
    if (config.base_branch) {
        request.base_branch = *config.base_branch;
    } else {
        // Not recorded (git exits 1): main.
        auto head =
            git::git_line(worktree, {"symbolic-ref", "--short", "refs/remotes/origin/HEAD"});
        std::string name = head ? *head : "";
        request.base_branch = name.rfind("origin/", 0) == 0 ? name.substr(7) : "main";
    }
    return request;
}

Result<void> push_branch(const fs::path& worktree, const std::string& branch) {
    auto url = git::git_output(worktree, {"remote", "get-url", "origin"});
    if (!url)
        return Error::usage("--push: no origin remote to push to (" + url.error().message + ")");
    // GitHub's token only to the GitHub it belongs to (github/git_remote.h).
    const git::GitOptions options = github::origin_git_options(worktree);
    auto pushed =
        git::git_output(worktree, {"push", "--quiet", "origin", branch + ":" + branch}, options);
    if (!pushed) return Error::general("--push: " + pushed.error().message);
    return {};
}

Result<PublishResult> publish(issues::IssueSource& source, const Verdict& v,
                              const PublishRequest& request) {
    if (v.issue <= 0) return Error::usage("publishing needs the issue: give --issue N");
    if (v.agent.empty()) return Error::usage("publishing needs the agent: give --agent NAME");
    PublishResult result;
    const bool push = request.push || request.pull_request;
    if (push) {
        if (v.branch.empty()) return Error::usage("--push needs the branch of the run");
        if (auto pushed = push_branch(request.worktree, v.branch); !pushed)
            return std::move(pushed).error();
        result.pushed = true;
        result.notes.push_back("pushed " + v.branch + " to origin");
    }

    // The verdict as data too: the comparison can then be made where no run folder is (a
    // fresh runner after a matrix of jobs).
    auto comment = source.upsert_comment(
        v.issue, github::comment_marker(comment_key(v.issue, v.agent)),
        request.markdown + "\n" + verdict_record(v) + "\n" +
            (request.continuation.empty() ? "" : request.continuation + "\n"));
    if (!comment) return std::move(comment).error();
    result.comment_url = comment->html_url;
    result.notes.push_back(
        "comment " + (comment->html_url.empty() ? std::to_string(comment->id) : comment->html_url));

    if (request.status) {
        // GitHub refuses a status on a commit it has not seen; the local store has no remote.
        if (source.local() || result.pushed || on_a_remote(request.worktree, v.head)) {
            github::CommitStatus status;
            status.state = v.pass ? "success" : "failure";
            status.context = "cocode/" + v.agent;
            status.description = status_description(v);
            if (comment->html_url.rfind("https://", 0) == 0) status.target_url = comment->html_url;
            if (auto set = source.set_status(v.head, status); !set) return std::move(set).error();
            result.notes.push_back("status " + status.context + ": " + status.state);
        } else {
            result.notes.push_back("status skipped: " + v.head.substr(0, 7) +
                                   " is on no remote yet (--push sends it)");
        }
    }

    // Read once, before anything changes it: its labels, and the title a pull request takes.
    std::optional<github::Issue> issue;
    if (request.labels || request.pull_request) {
        auto got = source.get(v.issue);
        if (!got) return std::move(got).error();
        issue = std::move(*got);
    }

    if (request.labels) {
        const std::string& add = v.pass ? request.pass_label : request.fail_label;
        auto has = [&](const std::string& name) {
            return std::find(issue->labels.begin(), issue->labels.end(), name) !=
                   issue->labels.end();
        };
        // Another agent's PASS stands: a FAIL does not mark the issue failed over it.
        const bool keep_pass = !v.pass && !request.pass_label.empty() && has(request.pass_label);
        if (!add.empty() && !keep_pass && !has(add)) {
            if (auto added = source.add_labels(v.issue, {add}); !added)
                return std::move(added).error();
            result.notes.push_back("label " + add);
        }
        if (v.pass && !request.fail_label.empty() && has(request.fail_label)) {
            if (auto removed = source.remove_label(v.issue, request.fail_label); !removed)
                return std::move(removed).error();
            result.notes.push_back("label " + request.fail_label + " removed");
        }
    }

    if (request.pull_request) {
        github::PullRequestSpec spec;
        spec.title = issue->title + " (#" + std::to_string(v.issue) + ", " + v.agent + ")";
        spec.head = v.branch;
        spec.base = request.base_branch;
        spec.body = "Closes #" + std::to_string(v.issue) + "\n\n" + request.markdown;
        spec.draft = true;
        auto pr = source.upsert_pull_request(spec);
        if (!pr) return std::move(pr).error();
        if (*pr) {
            result.pr_url = (*pr)->html_url;
            result.notes.push_back(std::string((*pr)->created ? "opened " : "updated ") +
                                   (*pr)->html_url);
        } else {
            result.notes.push_back("pull request skipped: " + source.describe() +
                                   " has no pull requests");
        }
    }

    if (request.round_pull && !request.threads.empty() && !request.round_from.empty()) {
        if (github::GitHub* github = source.github_api()) {
            auto replied = reply_to_threads(*github, v, request);
            if (!replied) return std::move(replied).error();
            result.notes.insert(result.notes.end(), replied->begin(), replied->end());
        }
    }
    return result;
}

}  // namespace cocode::check
