#include "routing.h"

#include "agent/usage.h"
#include "check/published.h"
#include "check/scorecard.h"
#include "core/run_id.h"

namespace cocode::dispatch_cli {

std::map<long, check::Routed> route_issues(const Workspace& ws,
                                           const std::vector<github::Issue>& issues,
                                           const std::vector<config::AgentConfig>& agents,
                                           const std::vector<std::string>& named,
                                           github::GitHub* published) {
    std::map<long, check::Routed> out;
    if (!ws.config.route.evidence || !named.empty() || issues.empty()) return out;
    const auto now = std::chrono::system_clock::now();
    const auto since = now - check::kEvidenceWindow;
    const auto here =
        check::run_summaries(ws.root, ws.runs_dir(), ws.root / check::kScorecardCache);
    std::vector<check::RunSummary> elsewhere;
    if (published) {
        auto found = check::published_since(*published, format_utc_timestamp(since));
        if (!found.ok())
            throw Failure(
                Error::general("route: the published verdicts: " + found.error().message));
        elsewhere = found->runs.summaries;
    }
    const check::Scorecard card = check::scorecard(
        check::run_facts(
            ws.root, check::evidence_runs(here, elsewhere, check::EvidenceRuns::here_and_published),
            since),
        {check::Dimension::agent, check::Dimension::kind});
    check::RouteAsk ask;
    for (const auto& a : agents) ask.agents.push_back(a.name);
    if (ws.config.budget.daily_usd)
        ask.budget_left =
            *ws.config.budget.daily_usd -
            agent::spent_on_day(run::list_runs(ws.runs_dir()).runs, ws.config.pricing, now).usd;
    for (const auto& issue : issues) {
        ask.issue = issue.number;
        ask.type = check::work_type_of_labels(issue.labels);
        ask.evidence = check::evidence_for(card, ask.type);
        check::Routed routed = check::route_by_evidence(ws.config.route, ask);
        notice("issue #" + std::to_string(issue.number) + ": " + routed.why);
        out[issue.number] = std::move(routed);
    }
    return out;
}

}  // namespace cocode::dispatch_cli
