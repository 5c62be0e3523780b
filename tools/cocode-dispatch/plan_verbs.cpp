// `continue --approve | --revise | --reject`: what a person does with a pair's plan
// (docs/review.md, "Plans"). Decided by check::decide_plan_verb from the pair's newest round;
// an approval starts the code round sealed to the plan's files and bound verify commands, a
// revision starts another plan round with the person's words, a rejection is written into the
// plan's verdict (and its comment, when publishing) so that nothing approves it after.
#include "plan_verbs.h"

#include <algorithm>

#include "check/work_plan.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "run/rounds.h"
#include "run/seal.h"
#include "scale/intake.h"

namespace cocode::dispatch_cli {
namespace {

check::PlanVerb verb_of(const ContinueArgs& args) {
    return args.approve  ? check::PlanVerb::approve
           : args.revise ? check::PlanVerb::revise
                         : check::PlanVerb::reject;
}

check::PlanState state_of(const run::RunRecord* newest) {
    check::PlanState state;
    if (!newest) return state;
    state.any_round = true;
    state.round = newest->round;
    state.plan_round = newest->plan_round;
    state.verdict = check::recorded_verdict(newest->folder);
    return state;
}

// The command prefixes a plan's verify commands must start with: plan.bind_verify as the
// pair's sealed configuration says, else its verify commands.
std::vector<std::string> verify_prefixes(const Workspace& ws, const run::RunRecord& record) {
    config::Config sealed = ws.config;
    if (auto seal = run::read_seal(ws.root, record.run_id);
        seal && *seal && !(**seal).config_text.empty())
        if (auto parsed =
                config::parse_config((**seal).config_text, "the sealed configuration", ws.root))
            sealed = std::move(*parsed);
    if (sealed.plan.bind_verify) return *sealed.plan.bind_verify;
    std::vector<std::string> out;
    for (const auto& command : sealed.check.verify) out.push_back(command.run);
    return out;
}

// A refusal said where it was asked (once per comment, however often it is asked again), then
// the command fails with it.
[[noreturn]] void refuse(const ContinueArgs& args, issues::IssueSource* source,
                         const std::string& why) {
    if (args.comment_id && source && source->github_api())
        if (auto replied =
                scale::answer(*source->github_api(), std::stol(args.which),
                              {github::comment_marker("refused/" + std::to_string(args.comment_id)),
                               args.by + " cocode did nothing: " + why + ".\n"});
            !replied)
            notice("warning: could not answer on GitHub: " + replied.error().message);
    throw Failure(Error::usage("continue --" + std::string(check::plan_verb_name(verb_of(args))) +
                               ": " + why));
}

}  // namespace

std::vector<std::string> agents_with_plans(
    const ContinueArgs& args, const std::map<std::string, const run::RunRecord*>& newest) {
    std::vector<std::string> out, planning;
    for (const auto& [agent, record] : newest) {
        if (!args.agents.empty() &&
            std::find(args.agents.begin(), args.agents.end(), agent) == args.agents.end())
            continue;
        if (!record->plan_round) continue;
        planning.push_back(agent);
        if (args.approve && args.hash) {
            const auto verdict = check::recorded_verdict(record->folder);
            if (!verdict || !verdict->plan || verdict->plan->hash != *args.hash) continue;
        }
        out.push_back(agent);
    }
    // A hash no plan has: the plans there are, so that the refusal says the plan changed.
    return out.empty() ? planning : out;
}

int continue_plan(const ContinueArgs& args, const PlanBatch& batch) {
    const check::PlanVerb verb = verb_of(args);
    const std::string by = args.by.empty() ? "terminal" : args.by;
    const Workspace& ws = batch.ws;
    const auto runs = run::list_runs(ws.runs_dir()).runs;
    // A comment GitHub delivers again (or a second workflow run of it) starts nothing twice.
    if (args.comment_id)
        for (const auto& r : runs)
            if (r.request_comment == args.comment_id) {
                notice("nothing to do: comment " + std::to_string(args.comment_id) +
                       " was carried out already (run " + r.run_id + ")");
                return 0;
            }
    if (args.revise && args.message.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Failure(Error::usage("continue --revise: give what to change with -m TEXT"));
    // Which pairs: those named, else each whose newest round is a plan (with --hash, that plan).
    std::vector<std::string> names = agents_with_plans(args, batch.newest);
    if (names.empty() && !args.agents.empty()) names = args.agents;  // refused below, saying why
    if (names.empty())
        refuse(args, batch.source,
               "no agent has a plan" + (args.hash ? " " + *args.hash : std::string()) +
                   " on issue #" + args.which);
    if (names.size() > 1 && verb != check::PlanVerb::revise)
        refuse(args, batch.source,
               "several agents have plans on issue #" + args.which + "; name the agent");
    std::map<std::string, agent::RoundRequest> rounds;
    for (const auto& name : names) {
        const auto it = batch.newest.find(name);
        const run::RunRecord* newest = it == batch.newest.end() ? nullptr : it->second;
        const check::PlanState state = state_of(newest);
        const auto decided = check::decide_plan_verb(verb, args.hash, state);
        if (!decided.go) refuse(args, batch.source, name + ": " + decided.why_not);
        const auto history = run::rounds_of(runs, newest->issue, newest->agent);
        if (verb != check::PlanVerb::reject)
            if (const auto next = run::decide_round(history, ws.config.review.max_rounds,
                                                    verb == check::PlanVerb::revise);
                !next.go)
                refuse(args, batch.source,
                       name + ": no round " + std::to_string(next.number) + ": " + next.why_not);
        if (verb == check::PlanVerb::reject) {
            check::Verdict verdict = *state.verdict;
            verdict.plan_rejected_by = by;
            if (auto w = write_file_atomic(run::RunFiles{newest->folder}.check_json(),
                                           json_dump(check::to_json(verdict), 2) + "\n");
                !w)
                throw Failure(std::move(w).error());
            if (batch.source && (args.publish || ws.config.publish.after_run))
                check::publish_run_verdict(*batch.source, ws.config, *newest, verdict)
                    .value_or_throw();
            notice("issue #" + std::to_string(newest->issue) + ", agent " + name + ": plan " +
                   (verdict.plan ? verdict.plan->hash : std::string("(none)")) + " rejected (" +
                   terminal_safe_line(by) + ")");
            continue;
        }
        agent::RoundRequest round;
        round.comment = args.comment_id;
        if (verb == check::PlanVerb::revise) {
            round.plan = true;
            round.trigger = "plan revised (" + by + ")";
            round.feedback = args.message;
            if (round.feedback.back() != '\n') round.feedback += '\n';
        } else {
            const check::WorkPlan& plan = *state.verdict->plan;
            round.trigger = "plan " + plan.hash + " approved (" + by + ")";
            round.feedback = check::approved_plan_feedback(plan, by);
            round.approved = check::seal_plan(plan, verify_prefixes(ws, *newest), by);
            for (const auto& left : round.approved->left_out)
                notice("plan " + plan.hash +
                       ": verify command left out: " + terminal_safe_line(left));
        }
        rounds[name] = std::move(round);
    }
    if (rounds.empty()) return 0;  // rejected
    std::vector<std::string> going;
    for (const auto& [name, round] : rounds) going.push_back(name);
    const auto agents = config::choose_agents(ws.config, going).value_or_throw();
    return run_pairs(batch.run_args, ws, batch.timeout, batch.source, {batch.issue}, agents,
                     std::nullopt, std::move(rounds));
}

}  // namespace cocode::dispatch_cli
