// cocode-dispatch plan: the (issue, agent) pairs `run` would make, as the matrix a workflow fans
// out over, and as step outputs inside GitHub Actions. From issue numbers and labels, or from
// the event that started the workflow (--event): an issue labelled, or a comment command from
// someone allowed to give it. It starts nothing and writes nothing in the repository.
#include <cstdio>
#include <cstdlib>
#include <map>

#include "check/progress.h"
#include "check/work_plan.h"
#include "commands.h"
#include "core/files.h"
#include "core/terminal_text.h"
#include "routing.h"
#include "scale/intake.h"
#include "scale/plan.h"
#include "scale/trigger.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;

json read_event_file(const std::string& path) {
    auto text = read_file(path);
    if (!text) throw Failure(Error::usage("--event " + path + ": " + text.error().message));
    json payload = json::parse(*text, nullptr, false);
    if (payload.is_discarded())
        throw Failure(Error::usage("--event " + path + ": not valid JSON (a webhook payload)"));
    return payload;
}

}  // namespace

int run_plan(const PlanArgs& args) {
    if (args.event && (!args.issues.empty() || !args.labels.empty()))
        throw Failure(Error::usage("plan: give --event, or ISSUE numbers and --label, not both"));
    if (!args.event && args.issues.empty() && args.labels.empty())
        throw Failure(Error::usage("plan: name at least one ISSUE or a --label (or --event)"));
    Workspace ws = open_workspace();
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;

    std::vector<long> numbers = args.issues;
    std::vector<std::string> wanted_agents = args.agents;
    std::optional<scale::EventRequest> request;
    bool plan_rounds = false;  // the event asks for plans first
    if (args.event) {
        const char* name = std::getenv("GITHUB_EVENT_NAME");
        request =
            scale::read_event(name ? name : "", read_event_file(*args.event), ws.config.trigger)
                .value_or_throw();
        // The event's own repository, unless a source was named.
        if (!flags.names_a_source() && !request->repository.empty())
            flags.options.repo = request->repository;
    }
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    if (request) {
        github::GitHub* api = source->github_api();
        if (!api && request->kind == scale::EventRequest::Kind::command)
            throw Failure(Error::usage(
                "--event: a comment command is answered on GitHub; the local issue store has "
                "no permissions to ask"));
        // A round is not a run to plan: it goes on from the pair's last run (docs/review.md);
        // nor is what a person does with a plan (continue --event carries it out).
        if (request->kind == scale::EventRequest::Kind::command &&
            check::answers_plan(request->verb)) {
            request->why_not = "issue #" + std::to_string(request->issue) + ": `" +
                               ws.config.trigger.command + " " +
                               std::string(check::plan_verb_name(request->verb)) +
                               "` is carried out by `cocode-dispatch continue --event`";
            request->kind = scale::EventRequest::Kind::none;
        }
        if (request->kind == scale::EventRequest::Kind::round) {
            request->why_not = "pull request #" + std::to_string(request->issue) +
                               " asks for a round, which `cocode-dispatch continue` runs, not run";
            request->kind = scale::EventRequest::Kind::none;
        }
        // Without GitHub (a local store named with --issues) only a label can be acted on.
        scale::Facts local;
        local.local_store = true;
        const scale::Decision decision =
            api ? scale::decide(*request, ws.config, *api).value_or_throw()
                : scale::intake(*request, local, ws.config).decision;
        notice(decision.notice);
        plan_rounds = decision.verb == check::PlanVerb::plan;
        if (decision.run) {
            numbers = {decision.issue};
            if (!decision.agents.empty()) wanted_agents = decision.agents;
        } else {
            numbers.clear();
        }
    }
    const auto agents = config::choose_agents(ws.config, wanted_agents).value_or_throw();
    const auto issues = issues::select_issues(*source, numbers, args.labels).value_or_throw();
    std::vector<scale::PlanEntry> plan = scale::make_plan(issues, agents, plan_rounds);
    // Routing by evidence: each issue's entries only for the agents chosen for it. An event is
    // the action's plan job, whose runner holds no run folders: the evidence is what the
    // earlier runners published.
    const auto routed =
        route_issues(ws, issues, agents, wanted_agents, request ? source->github_api() : nullptr);
    std::erase_if(plan, [&](scale::PlanEntry& entry) {
        auto route = routed.find(entry.issue);
        if (route == routed.end()) return false;
        entry.route = route->second.why;
        return std::find(route->second.agents.begin(), route->second.agents.end(), entry.agent) ==
               route->second.agents.end();
    });

    if (auto written = scale::write_plan_outputs(plan); !written)
        throw Failure(Error::general("$GITHUB_OUTPUT: " + written.error().message));
    // The live comment appears now, before any runner has started: every agent queued. The
    // runners put their own rows in as they go (docs/check.md, "The live comment").
    if (args.publish && ws.config.progress.enabled) {
        std::map<long, std::vector<check::ProgressRow>> rows;
        for (const auto& entry : plan) {
            check::ProgressRow row;
            row.agent = entry.agent;
            row.state = "queued";
            row.logs_url = check::actions_logs_url();
            rows[entry.issue].push_back(row);
        }
        for (const auto& [issue, queued] : rows) {
            const auto route = routed.find(issue);
            check::LiveComment live(
                *source, issue, {}, [](const std::string&) {},
                route == routed.end() ? "" : route->second.why);
            if (auto done = live.finish(queued); !done)
                notice("warning: live comment on #" + std::to_string(issue) + ": " +
                       done.error().message);
        }
    }
    if (args.json) {
        std::printf("%s\n", scale::matrix(plan).dump().c_str());
    } else {
        for (const auto& entry : plan) std::printf("#%ld\t%s\n", entry.issue, entry.agent.c_str());
    }
    // An empty plan is an outcome, not a failure: the workflow skips its matrix on count 0.
    if (plan.empty())
        notice(args.event ? "nothing to plan"
                          : "nothing to plan: no open issues with those labels");
    else
        notice(std::to_string(plan.size()) + (plan.size() == 1 ? " run: " : " runs: ") +
               std::to_string(issues.size()) + (issues.size() == 1 ? " issue × " : " issues × ") +
               std::to_string(agents.size()) + (agents.size() == 1 ? " agent" : " agents"));
    return 0;
}

}  // namespace cocode::dispatch_cli
