#include "scale/pull_feedback.h"

#include <algorithm>
#include <map>

#include "check/published.h"
#include "core/markdown.h"
#include "core/terminal_text.h"
#include "git/cli.h"
#include "github/git_remote.h"
#include "run/restore.h"
#include "run/seal.h"
#include "scale/approval.h"
#include "scale/intake.h"
#include "scale/trigger.h"

namespace cocode::scale {

Result<void> keep_those_who_may_command(github::GitHub& github,
                                        const config::TriggerConfig& trigger,
                                        std::vector<github::Review>& reviews,
                                        std::vector<github::ReviewComment>& comments,
                                        const Said& said) {
    // Each author once, as GitHub typed them: a Bot whose login lacks "[bot]" is a bot here as
    // everywhere else cocode decides who may command (trigger.h, standing_of).
    std::map<std::string, bool> may;
    std::vector<std::pair<std::string, bool>> authors;
    for (const auto& r : reviews) authors.emplace_back(r.author, r.author_is_bot);
    for (const auto& c : comments) authors.emplace_back(c.author, c.author_is_bot);
    for (const auto& [login, typed_bot] : authors) {
        if (may.count(login)) continue;
        auto standing = standing_of(github, trigger, login, github::bot_account(login, typed_bot));
        if (!standing) return std::move(standing).error();
        const bool allowed = standing->may;
        may[login] = allowed;
        if (!allowed)
            said("left out of the feedback: what " + terminal_safe_line(login) + " wrote (" +
                 (standing->role == "bot" ? "a bot not in trigger.allowed_bots"
                                          : "no write access") +
                 ")");
    }
    std::erase_if(reviews, [&](const github::Review& r) { return !may[r.author]; });
    std::erase_if(comments, [&](const github::ReviewComment& c) { return !may[c.author]; });
    return {};
}

Result<std::vector<agent::FailingCheck>> failing_checks(github::GitHub& github,
                                                        const std::string& head,
                                                        const std::string& base,
                                                        std::vector<std::string>& on_base_too,
                                                        const Said& said) {
    if (head.empty()) return std::vector<agent::FailingCheck>{};
    auto on_head = github.check_runs(head);
    if (!on_head) return std::move(on_head).error();
    auto on_base = github.check_runs(base);
    if (!on_base) return std::move(on_base).error();
    const auto decided = agent::checks_to_fix(*on_head, *on_base);
    on_base_too = decided.on_base_too;
    for (const auto& name : decided.on_base_too)
        said("check " + name + " fails on the base commit too: not the pull request's doing");
    std::vector<agent::FailingCheck> out;
    for (const auto& run : decided.fix) {
        agent::FailingCheck check{run.name, "", ""};
        // What the job says of itself helps; a log GitHub no longer keeps (they expire) does
        // not stop the round.
        if (run.app == "github-actions") {
            if (auto steps = github.job_steps(run.id)) {
                for (const auto& step : *steps)
                    if (step.conclusion == "failure" || step.conclusion == "timed_out") {
                        check.step = step.name;
                        break;
                    }
            } else {
                said("check " + run.name + ": its job's steps: " + steps.error().message);
            }
            if (auto log = github.job_log_tail(run.id, 8 << 10))
                check.log_tail = std::move(*log);
            else
                said("check " + run.name + ": its log: " + log.error().message);
        }
        out.push_back(std::move(check));
    }
    return out;
}

namespace {

// Only checks that fail on the base too: the pull request is told once (the comment is
// upserted by its marker), not the agent.
Result<void> tell_checks_on_base(github::GitHub& github, long pull, const run::RunRecord& last,
                                 const std::vector<std::string>& on_base_too) {
    std::string names;
    // A check's name is whatever the app that ran it called it.
    for (const auto& name : on_base_too) names += (names.empty() ? "" : ", ") + markdown_code(name);
    auto told = github.upsert_comment(
        pull, github::comment_marker("checks-on-base/" + last.agent + "/" + last.base_commit),
        "cocode starts no round for " + names + ": it fails on the base commit too (" +
            last.base_commit.substr(0, 7) + "), so it is not this pull request's doing.\n");
    if (!told) return std::move(told).error();
    return {};
}

}  // namespace

Result<agent::RoundRequest> round_from_pull_request(github::GitHub& github,
                                                    const config::Config& config,
                                                    const run::RunRecord& last,
                                                    const std::string& words, const Said& said) {
    auto pull = github.open_pull_request_for(last.branch);
    if (!pull) return std::move(pull).error();
    if (!*pull)
        return Error::usage("continue --from-pr: no open pull request has branch " + last.branch +
                            " (publish with publish.pull_request, or cocode-check --open-pr)");
    const long number = (*pull)->number;
    auto reviews = github.reviews(number);
    if (!reviews) return std::move(reviews).error();
    auto comments = github.review_comments(number);
    if (!comments) return std::move(comments).error();
    if (auto kept = keep_those_who_may_command(github, config.trigger, *reviews, *comments, said);
        !kept)
        return std::move(kept).error();
    const auto feedback = agent::review_feedback(*reviews, *comments);
    std::vector<std::string> on_base_too;
    auto checks = failing_checks(github, (*pull)->head_sha, last.base_commit, on_base_too, said);
    if (!checks) return std::move(checks).error();
    if (feedback.text.empty() && checks->empty() && words.empty()) {
        if (!on_base_too.empty())
            if (auto told = tell_checks_on_base(github, number, last, on_base_too); !told)
                return std::move(told).error();
        return Error::usage("continue --from-pr: pull request #" + std::to_string(number) +
                            " has nothing to act on (no review requests changes, no thread is on "
                            "lines still in the diff, no check of its own fails)");
    }
    agent::RoundRequest round;
    round.trigger = feedback.reviewers.size() == 1 ? "review by @" + feedback.reviewers.front()
                                                   : "pull request #" + std::to_string(number);
    if (!words.empty() && feedback.reviewers.empty() && checks->empty())
        round.trigger = "command on pull request #" + std::to_string(number);
    auto count = [](std::size_t n, const char* one, const char* many) {
        return " · " + std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (feedback.threads > 0)
        round.trigger += count(static_cast<std::size_t>(feedback.threads), "thread", "threads");
    if (!checks->empty()) round.trigger += count(checks->size(), "failing check", "failing checks");
    round.feedback = (words.empty() ? std::string() : agent::command_feedback(words)) +
                     feedback.text + agent::check_feedback(*checks);
    round.pull_request = number;
    for (const auto& thread : feedback.given)
        round.threads.push_back({thread.comments.front().id, thread.path, thread.line.value_or(0)});
    return round;
}

Result<void> hand_to_a_person(github::GitHub& github, const std::string& branch,
                              const std::string& agent, const std::string& why_not) {
    auto pull = github.open_pull_request_for(branch);
    if (!pull) return std::move(pull).error();
    if (!*pull) return {};
    if (auto labelled = github.add_labels((*pull)->number, {std::string(kNeedsHumanLabel)});
        !labelled)
        return std::move(labelled).error();
    auto told = github.upsert_comment(
        (*pull)->number, github::comment_marker("rounds-stopped/" + agent),
        "cocode stops here: " + why_not + ". This pull request needs a person now (label `" +
            kNeedsHumanLabel + "`).\n");
    if (!told) return std::move(told).error();
    return {};
}

Result<void> restore_published_rounds(github::GitHub& github, const config::Config& config,
                                      const std::filesystem::path& repo_root,
                                      const std::filesystem::path& runs_dir, long number,
                                      const std::vector<std::string>& agents, const Said& said) {
    const auto here = run::list_runs(runs_dir).runs;
    std::optional<std::vector<github::Comment>> comments;
    std::optional<github::Issue> issue;
    for (const auto& agent : agents) {
        if (std::any_of(here.begin(), here.end(), [&](const run::RunRecord& r) {
                return r.issue == number && r.agent == agent;
            }))
            continue;
        if (!comments) {
            auto listed = github.comments(number);
            if (!listed) return std::move(listed).error();
            comments = std::move(*listed);
        }
        auto published = check::published_pair(*comments, number, agent);
        if (!published) continue;
        if (!issue) {
            auto now = github.issue(number);
            if (!now) return std::move(now).error();
            issue = std::move(*now);
            // The round re-reads the issue here: only as a writer approved it. Its text is the
            // sealed one, or was changed since only by people who may start cocode.
            const std::string& sealed = published->continuation.seal.issue_sha256;
            if (!sealed.empty() && run::issue_text_sha256(issue->title, issue->body) != sealed) {
                auto approved = approved_text(github, config, *issue, {});
                if (!approved) return std::move(approved).error();
                issue = approved->issue;
            }
        }
        const check::Verdict& v = published->verdict;
        const auto rounds = check::rounds_to_restore(*published, *issue, agent);
        for (const auto& r : rounds)
            if (auto restored = run::restore_round(repo_root, runs_dir, r.round, r.seal); !restored)
                return restored;
        const std::string pair = "issue " + std::to_string(number) + ", agent " + agent + ": " +
                                 std::to_string(rounds.size()) +
                                 (rounds.size() == 1 ? " round" : " rounds");
        // A plan wrote nothing and pushed nothing: its code round makes the branch anew.
        if (v.plan_round) {
            said(pair + " restored from the published plan");
            continue;
        }
        if (auto branch =
                git::branch_from_origin(repo_root, v.branch, github::origin_git_options(repo_root));
            !branch)
            return branch;
        said(pair + " restored from the published verdict; branch " + v.branch + " from origin");
    }
    return {};
}

}  // namespace cocode::scale
