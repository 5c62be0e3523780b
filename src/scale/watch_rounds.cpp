// `watch` polling for rounds (docs/review.md): the open pull requests of the pairs' branches,
// and on each the requests that came since the pair's last round began — a review asking for
// changes or saying the command, a review comment or a comment saying it — decided as `serve`
// decides a webhook's (trigger.h) and taken as rounds. Conditional GETs make an unchanged pull
// request cost no rate limit; claims make each request run once, whoever polls.
#include <algorithm>
#include <ctime>
#include <map>

#include "run/run_folder.h"
#include "scale/gate.h"
#include "scale/intake.h"
#include "scale/trigger.h"
#include "scale/watch.h"

namespace cocode::scale {
namespace fs = std::filesystem;

namespace {

// When the pair's last round began, as GitHub writes times ("2026-11-25T21:00:00Z"): its
// newest run's start here, else the time its verdict comment was last published; "" when
// neither is known (no round to go on from).
std::string last_round_began(const std::vector<run::RunRecord>& runs,
                             const std::vector<github::Comment>& comments, long issue,
                             const std::string& agent) {
    std::string began;
    for (const auto& r : runs)
        if (r.issue == issue && r.agent == agent && !r.start_time.empty())
            began = r.start_time.substr(0, 19) + "Z";
    if (!began.empty()) return began;
    const std::string marker =
        github::comment_marker("check/issue-" + std::to_string(issue) + "/" + agent);
    for (const auto& c : comments)
        if (c.body.rfind(marker, 0) == 0) return c.updated_at;
    return {};
}

}  // namespace

Result<void> Watcher::claim_rounds() {
    const config::Config& config = *options_.config;
    auto pulls = github_->open_pull_requests();
    if (!pulls) return std::move(pulls).error();
    const auto runs = run::list_runs(options_.repo_root / run::kRunsDir).runs;
    for (const auto& pull : *pulls) {
        const auto pair = pair_of_branch(pull.head_ref, config.branch_prefix);
        if (!pair || !config.find_agent(pair->agent) ||
            (!pull.head_repository.empty() && pull.head_repository != github_->repo().full()))
            continue;
        // The merge gate, written when what it reads changed (a review, a push, a verdict).
        if (config.gate.approvals > 0) {
            auto gate = refresh_gate(*github_, config, pull, gates_[pull.number]);
            if (!gate) return std::move(gate).error();
            if (gate->pair) {
                const std::string said = gate_written(pull, gate->decision);
                if (gates_[pull.number] != said) options_.notice(gate->notice);
                gates_[pull.number] = said;
            }
        }
        auto issue_comments = github_->comments(pair->issue);
        if (!issue_comments) return std::move(issue_comments).error();
        const std::string since = last_round_began(runs, *issue_comments, pair->issue, pair->agent);
        if (since.empty()) continue;

        // What asks for a round, as an event would say it.
        std::vector<EventRequest> asked;
        auto ask = [&](Request request, const std::string& login, bool bot, const std::string& body,
                       bool changes) {
            if (auto e = polled_request(pull, request, login, bot, body, changes, config.trigger))
                asked.push_back(std::move(*e));
        };
        auto reviews = github_->reviews(pull.number);
        if (!reviews) return std::move(reviews).error();
        for (const auto& r : *reviews)
            if (r.submitted_at >= since)
                ask({Request::Kind::review, r.id}, r.author, false, r.body,
                    r.state == "CHANGES_REQUESTED");
        auto review_comments = github_->review_comments(pull.number);
        if (!review_comments) return std::move(review_comments).error();
        for (const auto& c : *review_comments)
            if (c.created_at >= since)
                ask({Request::Kind::review_comment, c.id}, c.author, false, c.body, false);
        auto comments = github_->comments(pull.number);
        if (!comments) return std::move(comments).error();
        for (const auto& c : *comments)
            if (c.created_at >= since)
                ask({Request::Kind::command, c.id}, c.author, c.author_is_bot, c.body, false);

        // review.fix_checks: a check failing on the head asks for a round, as a failed check
        // suite's webhook does under `serve` — `continue --from-pr` then takes the checks that
        // are the head's own doing, or says once that they fail on the base too. The request
        // is the head's newest failing check run: another failure is another request.
        if (config.review.fix_checks && !pull.head_sha.empty()) {
            auto checks = github_->check_runs(pull.head_sha);
            if (!checks) return std::move(checks).error();
            long long newest = 0;
            for (const auto& run : *checks)
                if (run.status == "completed" &&
                    (run.conclusion == "failure" || run.conclusion == "timed_out") &&
                    run.id > newest)
                    newest = run.id;
            if (newest != 0) asked.push_back(polled_failed_check(pull, newest));
        }

        for (auto& e : asked) {
            if (!decided_.insert({e.request.kind, e.request.id}).second) continue;
            auto decision = decide(e, config, *github_);
            if (!decision) return std::move(decision).error();
            options_.notice(decision->notice);
            if (!decision->run) continue;
            auto taken =
                take_round(pull.number, decision->request,
                           {decision->issue, decision->agents.front(), decision->instruction});
            if (!taken) return std::move(taken).error();
        }
    }
    return {};
}

// The plans waiting on a person: each issue where a pair's newest run here is a plan round, and
// the comments made on it since that round began that approve, revise or reject a plan. Each is
// decided as `serve` decides a webhook's and taken as a plan command.
Result<void> Watcher::claim_plan_commands() {
    const config::Config& config = *options_.config;
    std::map<long, std::string> waiting;  // issue → when its oldest waiting plan round began
    std::map<std::pair<long, std::string>, const run::RunRecord*> newest;
    const auto runs = run::list_runs(options_.repo_root / run::kRunsDir).runs;
    for (const auto& r : runs) newest[{r.issue, r.agent}] = &r;
    for (const auto& [pair, r] : newest) {
        if (!r->plan_round || r->start_time.empty()) continue;
        const std::string began = r->start_time.substr(0, 19) + "Z";
        auto [it, added] = waiting.try_emplace(pair.first, began);
        if (!added) it->second = std::min(it->second, began);
    }
    for (const auto& [issue, since] : waiting) {
        auto comments = github_->comments(issue);
        if (!comments) return std::move(comments).error();
        for (const auto& c : *comments) {
            if (c.created_at < since) continue;
            const auto e = polled_comment(issue, c, config.trigger);
            if (!e || !check::answers_plan(e->verb)) continue;
            if (!decided_.insert({Request::Kind::command, c.id}).second) continue;
            auto decision = decide(*e, config, *github_);
            if (!decision) return std::move(decision).error();
            options_.notice(decision->notice);
            if (!decision->run) continue;
            auto taken = take(
                issue, decision->request, decision->agents,
                WatchPlan{decision->verb, decision->plan_hash, decision->instruction, decision->by},
                decision->by, WatchApproval{decision->approved_at, ""});
            if (!taken) return std::move(taken).error();
        }
    }
    return {};
}

// `/cocode` and `/cocode plan` in issue comments, as `serve` takes them from webhooks: one
// request a poll for the comments made since the last (conditional: a poll that finds nothing
// new costs no rate limit), each decided once by the one decision (writers only; one reply to
// anyone else; 👀) and taken as a command. Approve, revise and reject are the plans' own
// (claim_plan_commands); commands on pull requests are rounds (claim_rounds).
Result<void> Watcher::claim_commands() {
    const config::Config& config = *options_.config;
    if (commands_since_.empty()) {
        // From the watcher's first poll on: never a backlog of old comments.
        commands_since_ = commands_seen_ = github_time(server_now(*github_));
        if (auto saved = save(); !saved) return saved;
    }
    // The same question every poll (304 while nothing changed), newest first, read no further
    // than the newest comment seen.
    auto comments = github_->comments_since(commands_since_, commands_seen_);
    if (!comments) return std::move(comments).error();
    std::string newest = commands_seen_;
    for (const auto& c : *comments) newest = std::max(newest, c.created_at);
    std::set<long long> at_newest;  // read now, made in the newest second
    for (const auto& c : *comments) {
        // `since` is GitHub's "updated since": an old comment edited is no new command.
        if (c.created_at < commands_seen_) continue;
        if (c.created_at == newest) at_newest.insert(c.id);
        // Made in the second the last poll ended at, and read by it.
        if (c.created_at == commands_seen_ && commands_at_seen_.count(c.id)) continue;
        if (c.on_pull_request || c.issue == 0) continue;
        const auto e = polled_comment(c.issue, c, config.trigger);
        if (!e || check::answers_plan(e->verb)) continue;
        if (!decided_.insert({Request::Kind::command, c.id}).second) continue;
        auto decision = decide(*e, config, *github_);
        if (!decision) return std::move(decision).error();
        options_.notice(decision->notice);
        if (!decision->run) continue;
        std::optional<WatchPlan> plan;
        if (decision->verb != check::PlanVerb::none)
            plan =
                WatchPlan{decision->verb, decision->plan_hash, decision->instruction, decision->by};
        auto taken = take(c.issue, decision->request, decision->agents, plan, decision->by,
                          WatchApproval{decision->approved_at, ""});
        if (!taken) return std::move(taken).error();
    }
    if (newest == commands_seen_)
        at_newest.insert(commands_at_seen_.begin(), commands_at_seen_.end());
    if (newest != commands_seen_ || at_newest != commands_at_seen_) {
        commands_seen_ = newest;
        commands_at_seen_ = std::move(at_newest);
        if (auto saved = save(); !saved) return saved;
    }
    return {};
}

}  // namespace cocode::scale
