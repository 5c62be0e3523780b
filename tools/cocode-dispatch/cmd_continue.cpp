// `cocode-dispatch continue`: the next round of a pair's run, with feedback typed here
// (docs/review.md). The round is a run of its own on the same branch, from where the last one
// stopped, judged by the rules sealed at the pair's first round; `run`'s batch does the rest.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "batch.h"
#include "check/published.h"
#include "check/report.h"
#include "check/work_plan.h"
#include "commands.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "git/cli.h"
#include "plan_verbs.h"
#include "run/restore.h"
#include "run/rounds.h"
#include "run/seal.h"
#include "scale/approval.h"
#include "scale/intake.h"
#include "scale/pull_feedback.h"
#include "scale/trigger.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

namespace {

// The issue as the pair's runs read it: its text is in the newest run's folder, so a round
// needs no GitHub (unless it publishes).
github::Issue issue_of(const run::RunRecord& record) {
    github::Issue issue;
    issue.number = record.issue;
    issue.html_url = record.issue_url;
    issue.state = "open";
    if (auto info = run::read_run_info(record.folder))
        issue.title = info->get("issue_title").value_or("");
    // The run's folder was the agent's to write: its issue.md is read as data.
    if (auto body = read_file_no_follow(run::RunFiles{record.folder}.issue_body(), 1 << 20))
        issue.body = *body;
    return issue;
}

// Rounds have stopped for this pair (the cap, two failures in a row): its pull request is
// handed to a person (scale::hand_to_a_person), and the command stops with the reason.
void stop_if_rounds_stopped(github::GitHub& github, const Workspace& ws,
                            const run::RunRecord& last) {
    const auto decided = run::decide_round(
        run::rounds_of(run::list_runs(ws.runs_dir()).runs, last.issue, last.agent),
        ws.config.review.max_rounds);
    if (decided.go) return;
    scale::hand_to_a_person(github, last.branch, last.agent, decided.why_not).value_or_throw();
    throw Failure(Error::usage("issue " + std::to_string(last.issue) + ", agent " + last.agent +
                               ": no round " + std::to_string(decided.number) + ": " +
                               decided.why_not));
}

// --event: the round a pull request's event asks for (docs/review.md), decided as `serve`
// decides it — the pair from the pull request's branch, a command or a review asking for
// changes only from someone who may command (a reader's command answered once), 👀 on what
// asked. Nothing asked: nullopt, said in a notice.
std::optional<ContinueArgs> round_of_event(const ContinueArgs& args, const Workspace& ws) {
    if (!args.which.empty() || !args.agents.empty() || args.from_pr)
        throw Failure(
            Error::usage("continue --event: the event names the run and its feedback; give no run, "
                         "--agent or --from-pr"));
    auto text = read_file(*args.event);
    if (!text) throw Failure(Error::usage("--event " + *args.event + ": " + text.error().message));
    const nlohmann::json payload = nlohmann::json::parse(*text, nullptr, false);
    if (payload.is_discarded())
        throw Failure(
            Error::usage("--event " + *args.event + ": not valid JSON (a webhook payload)"));
    const char* name = std::getenv("GITHUB_EVENT_NAME");
    auto request = scale::read_event(name ? name : "", payload, ws.config.trigger).value_or_throw();
    const bool plan_verb =
        request.kind == scale::EventRequest::Kind::command && check::answers_plan(request.verb);
    if (request.kind != scale::EventRequest::Kind::round && !plan_verb) {
        notice(request.kind == scale::EventRequest::Kind::none
                   ? "nothing to do: " + terminal_safe_line(request.why_not)
                   : "nothing to do: the event asks for runs on an issue (plan --event), not "
                     "a round");
        return std::nullopt;
    }
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    if (!flags.names_a_source() && !request.repository.empty())
        flags.options.repo = request.repository;
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    github::GitHub& github = github_of(*source, "continue --event");
    const auto decision = scale::decide(request, ws.config, github).value_or_throw();
    notice(decision.notice);
    if (!decision.run) return std::nullopt;
    if (plan_verb) {  // the issue's plan, approved, revised or rejected (docs/review.md)
        ContinueArgs verb = args;
        verb.event.reset();
        verb.source = flags;
        verb.which = std::to_string(decision.issue);
        verb.agents = decision.agents;
        verb.approve = decision.verb == check::PlanVerb::approve;
        verb.revise = decision.verb == check::PlanVerb::revise;
        verb.reject = decision.verb == check::PlanVerb::reject;
        if (verb.approve) verb.hash = decision.plan_hash;
        verb.message = decision.instruction;
        verb.by = decision.by;
        verb.comment_id = request.comment_id;
        return verb;
    }
    ContinueArgs round = args;
    round.event.reset();
    round.source = flags;
    round.which = std::to_string(decision.issue);
    round.agents = decision.agents;
    round.from_pr = true;
    round.message = decision.instruction;
    return round;
}

}  // namespace

int run_continue(const ContinueArgs& given) {
    ContinueArgs args = given;
    if (args.event) {
        auto round = round_of_event(args, open_workspace());
        if (!round) return 0;
        args = std::move(*round);
    }
    if (args.which.empty())
        throw Failure(Error::usage("continue: name the run (a run id or an issue), or --event"));
    const bool plan_verb = args.approve || args.revise || args.reject;
    if ((args.approve ? 1 : 0) + (args.revise ? 1 : 0) + (args.reject ? 1 : 0) > 1)
        throw Failure(Error::usage("continue: give one of --approve, --revise and --reject"));
    if (plan_verb && args.from_pr)
        throw Failure(
            Error::usage("continue: a plan is approved, revised or rejected on its "
                         "issue, not with --from-pr"));
    if (args.hash && !args.approve)
        throw Failure(Error::usage("continue: --hash goes with --approve"));
    const bool by_number =
        args.which.find_first_not_of("0123456789") == std::string::npos && args.which.size() < 10;
    if (args.comment_id && !by_number)
        throw Failure(Error::usage("continue --comment: name the issue by its number"));
    // A fresh clone: the pair's rounds from what they published, when the feedback is GitHub's
    // (or a plan published there is approved, revised or rejected).
    if ((args.from_pr && !args.agents.empty()) || (plan_verb && by_number)) {
        Workspace here = open_workspace();
        SourceFlags flags = args.source;
        flags.options.repo_dir = here.root;
        auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
        std::vector<std::string> agents = args.agents;
        if (agents.empty())
            for (const auto& agent : here.config.agents) agents.push_back(agent.name);
        // On a machine that never ran the pair (a fresh runner): its rounds from what it
        // published, then the round goes on as anywhere.
        if (github::GitHub* github = source->github_api())
            scale::restore_published_rounds(*github, here.config, here.root, here.runs_dir(),
                                            std::stol(args.which), agents, notice)
                .value_or_throw();
    }
    if (!args.from_pr && !plan_verb &&
        args.message.find_first_not_of(" \t\r\n") == std::string::npos)
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
    if (args.publish || args.from_pr || ws.config.publish.after_run || args.comment_id) {
        SourceFlags flags = args.source;
        flags.options.repo_dir = ws.root;
        source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    }
    if (plan_verb)
        return continue_plan(args, PlanBatch{ws, timeout, run_args, source.get(), issue, newest});
    if (args.from_pr) {
        github::GitHub& github = github_of(*source, "continue --from-pr");
        std::map<std::string, agent::RoundRequest> rounds;
        for (const auto& name : names) {
            stop_if_rounds_stopped(github, ws, *newest.at(name));
            rounds[name] = scale::round_from_pull_request(github, ws.config, *newest.at(name),
                                                          args.message, notice)
                               .value_or_throw();
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
