#include "routing.h"

#include <set>

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
    auto summaries = check::run_summaries(ws.root, ws.runs_dir(), ws.root / check::kScorecardCache);
    if (published) {
        const auto since = format_utc_timestamp(now - std::chrono::hours(24 * 180));
        auto comments = published->comments_since(since);
        if (!comments.ok())
            throw Failure(
                Error::general("route: the published verdicts: " + comments.error().message));
        std::set<std::string> here;
        for (const auto& s : summaries) here.insert(s.run_id);
        for (auto& s : check::published_runs(*comments).summaries)
            if (!here.count(s.run_id)) summaries.push_back(std::move(s));
    }
    const check::Scorecard card = check::scorecard(
        check::run_facts(ws.root, summaries, std::chrono::system_clock::time_point{}),
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
