// `cocode-dispatch continue`: the next round of a pair's run, with feedback typed here
// (docs/review.md). The round is a run of its own on the same branch, from where the last one
// stopped, judged by the rules sealed at the pair's first round; `run`'s batch does the rest.
#include <algorithm>
#include <map>

#include "agent/feedback.h"
#include "batch.h"
#include "commands.h"
#include "core/files.h"
#include "run/rounds.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

namespace {

constexpr char kNeedsHumanLabel[] = "cocode:needs-human";

// The issue as the pair's runs read it: its text is in the newest run's folder, so a round
// needs no GitHub (unless it publishes).
github::Issue issue_of(const run::RunRecord& record) {
    github::Issue issue;
    issue.number = record.issue;
    issue.html_url = record.issue_url;
    issue.state = "open";
    if (auto info = run::read_run_info(record.folder))
        issue.title = info->get("issue_title").value_or("");
    if (auto body = read_file(run::RunFiles{record.folder}.issue_body())) issue.body = *body;
    return issue;
}

// The failing checks of the pull request's head that are its own doing (not failing on the
// run's base too), each with its failing step and the end of its log.
std::vector<agent::FailingCheck> failing_checks(github::GitHub& github, const std::string& head,
                                                const std::string& base) {
    if (head.empty()) return {};
    const auto decided = agent::checks_to_fix(github.check_runs(head).value_or_throw(),
                                              github.check_runs(base).value_or_throw());
    for (const auto& name : decided.on_base_too)
        notice("check " + name + " fails on the base commit too: not the pull request's doing");
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
                notice("check " + run.name + ": its job's steps: " + steps.error().message);
            }
            if (auto log = github.job_log_tail(run.id, 8 << 10))
                check.log_tail = std::move(*log);
            else
                notice("check " + run.name + ": its log: " + log.error().message);
        }
        out.push_back(std::move(check));
    }
    return out;
}

// Rounds have stopped for this pair (the cap, two failures in a row): its pull request is
// labelled cocode:needs-human and told why, once (the comment is upserted by its marker), and
// the command stops with the reason.
void stop_if_rounds_stopped(github::GitHub& github, const Workspace& ws,
                            const run::RunRecord& last) {
    const auto decided = run::decide_round(
        run::rounds_of(run::list_runs(ws.runs_dir()).runs, last.issue, last.agent),
        ws.config.review.max_rounds);
    if (decided.go) return;
    const std::string why = "issue " + std::to_string(last.issue) + ", agent " + last.agent +
                            ": no round " + std::to_string(decided.number) + ": " + decided.why_not;
    if (auto pull = github.open_pull_request_for(last.branch).value_or_throw()) {
        github.add_labels(pull->number, {std::string(kNeedsHumanLabel)}).value_or_throw();
        github
            .upsert_comment(pull->number, github::comment_marker("rounds-stopped/" + last.agent),
                            "cocode stops here: " + decided.why_not +
                                ". This pull request needs a person now (label `" +
                                kNeedsHumanLabel + "`).\n")
            .value_or_throw();
    }
    throw Failure(Error::usage(why));
}

// The round's feedback from the pair's open pull request: the reviews that ask for changes,
// the threads on lines still in the diff, and the checks failing on its head.
agent::RoundRequest from_pull_request(github::GitHub& github, const run::RunRecord& last) {
    auto pull = github.open_pull_request_for(last.branch).value_or_throw();
    if (!pull)
        throw Failure(Error::usage("continue --from-pr: no open pull request has branch " +
                                   last.branch +
                                   " (publish with publish.pull_request, or "
                                   "cocode-check --open-pr)"));
    const auto feedback =
        agent::review_feedback(github.reviews(pull->number).value_or_throw(),
                               github.review_comments(pull->number).value_or_throw());
    const auto checks = failing_checks(github, pull->head_sha, last.base_commit);
    if (feedback.text.empty() && checks.empty())
        throw Failure(Error::usage("continue --from-pr: pull request #" +
                                   std::to_string(pull->number) +
                                   " has nothing to act on (no review requests changes, no "
                                   "thread is on lines still in the diff, no check of its own "
                                   "fails)"));
    agent::RoundRequest round;
    round.trigger = feedback.reviewers.size() == 1
                        ? "review by @" + feedback.reviewers.front()
                        : "pull request #" + std::to_string(pull->number);
    auto count = [](std::size_t n, const char* one, const char* many) {
        return " · " + std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (feedback.threads > 0)
        round.trigger += count(static_cast<std::size_t>(feedback.threads), "thread", "threads");
    if (!checks.empty()) round.trigger += count(checks.size(), "failing check", "failing checks");
    round.feedback = feedback.text + agent::check_feedback(checks);
    round.pull_request = pull->number;
    for (const auto& thread : feedback.given)
        round.threads.push_back({thread.comments.front().id, thread.path, thread.line.value_or(0)});
    return round;
}

}  // namespace

int run_continue(const ContinueArgs& args) {
    if (args.from_pr && !args.message.empty())
        throw Failure(Error::usage("continue: -m and --from-pr both give the feedback; give one"));
    if (!args.from_pr && args.message.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Failure(Error::usage(args.message.empty()
                                       ? "continue: give the feedback with -m TEXT, or --from-pr"
                                       : "continue: -m needs the feedback for the agent"));
    RunArgs run_args;
    run_args.source = args.source;
    run_args.timeout = args.timeout;
    run_args.json = args.json;
    run_args.no_check = args.no_check;
    run_args.publish = args.publish;
    run_args.detach = args.detach;
    auto [ws, timeout] = configured_workspace(run_args);

    // The newest run of each agent among those named.
    const auto selected = select_runs(ws, args.which);
    std::map<std::string, const run::RunRecord*> newest;
    for (const auto& record : selected) newest[record.agent] = &record;
    const bool by_issue = args.which.find_first_not_of("0123456789") == std::string::npos &&
                          std::to_string(selected.front().issue) == args.which;
    const bool one_issue = std::all_of(selected.begin(), selected.end(), [&](const auto& r) {
        return r.issue == selected.front().issue;
    });
    if (!one_issue || (!by_issue && newest.size() > 1))
        throw Failure(Error::usage("continue: '" + args.which +
                                   "' names runs of several issues or agents; give a whole run "
                                   "id, or an issue number with --agent"));
    std::vector<std::string> names;
    for (const auto& [agent, record] : newest)
        if (args.agents.empty() ||
            std::find(args.agents.begin(), args.agents.end(), agent) != args.agents.end())
            names.push_back(agent);
    for (const auto& wanted : args.agents)
        if (!newest.count(wanted))
            throw Failure(Error::usage("continue: agent '" + wanted + "' has no run on issue #" +
                                       std::to_string(selected.front().issue)));
    const auto agents = config::choose_agents(ws.config, names).value_or_throw();
    const github::Issue issue = issue_of(*newest.at(names.front()));

    std::unique_ptr<issues::IssueSource> source;
    if (args.publish || args.from_pr || ws.config.publish.after_run) {
        SourceFlags flags = args.source;
        flags.options.repo_dir = ws.root;
        source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    }
    if (args.from_pr) {
        github::GitHub* github = source->github_api();
        if (!github)
            throw Failure(
                Error::usage("continue --from-pr: the pull request is on GitHub; this "
                             "repository's issues are a local folder (give --repo)"));
        std::map<std::string, agent::RoundRequest> rounds;
        for (const auto& name : names) {
            stop_if_rounds_stopped(*github, ws, *newest.at(name));
            rounds[name] = from_pull_request(*github, *newest.at(name));
        }
        return run_pairs(run_args, ws, timeout, source.get(), {issue}, agents, std::nullopt,
                         std::move(rounds));
    }
    agent::RoundRequest round;
    round.trigger = "terminal";
    round.feedback = args.message;
    if (round.feedback.back() != '\n') round.feedback += '\n';
    return run_pairs(run_args, ws, timeout, source.get(), {issue}, agents, std::move(round), {});
}

}  // namespace cocode::dispatch_cli
