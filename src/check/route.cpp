#include "check/route.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace cocode::check {

namespace {

// A number in [0, 1) from a seed, the issue and a draw's index: splitmix64, the same on every
// machine and compiler (std's distributions are not).
double draw(std::uint64_t seed, long issue, std::uint64_t index) {
    std::uint64_t x = seed ^ (static_cast<std::uint64_t>(issue) * 0x9E3779B97F4A7C15ULL) ^
                      (index * 0xBF58476D1CE4E5B9ULL);
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
}

struct Ranked {
    std::string agent;
    double rate = 0;
    RateInterval interval;
};

// "71% ±9": the rate and half its interval's width.
std::string figure(const Ranked& r) {
    return std::to_string(static_cast<int>(std::lround(r.rate * 100))) + "% ±" +
           std::to_string(static_cast<int>(std::lround((r.interval.high - r.interval.low) * 50)));
}

std::string names(const std::vector<std::string>& list) {
    std::string out;
    for (std::size_t i = 0; i < list.size(); ++i)
        out += (i == 0 ? "" : i + 1 == list.size() ? " and " : ", ") + list[i];
    return out;
}

}  // namespace

std::vector<AgentEvidence> evidence_for(const Scorecard& card, const std::string& type) {
    std::size_t agent_at = card.by.size(), kind_at = card.by.size();
    for (std::size_t i = 0; i < card.by.size(); ++i) {
        if (card.by[i] == Dimension::agent) agent_at = i;
        if (card.by[i] == Dimension::kind) kind_at = i;
    }
    std::map<std::string, AgentEvidence> by_agent;
    std::map<std::string, std::pair<double, int>> costs;  // priced cost, ended runs
    std::map<std::string, bool> unpriced;
    for (const auto& row : card.rows) {
        if (agent_at >= row.keys.size()) continue;
        if (!type.empty() &&
            (kind_at >= row.keys.size() || row.keys[kind_at].rfind(type + "/", 0) != 0))
            continue;
        AgentEvidence& e = by_agent[row.keys[agent_at]];
        e.agent = row.keys[agent_at];
        e.judged += row.judged;
        e.passed += row.passed;
        costs[e.agent].first += row.cost_usd;
        costs[e.agent].second += row.runs - row.running;
        unpriced[e.agent] = unpriced[e.agent] || row.unpriced > 0;
    }
    std::vector<AgentEvidence> out;
    for (auto& [agent, e] : by_agent) {
        const auto& [cost, ended] = costs[agent];
        if (ended > 0 && !unpriced[agent]) e.cost_per_run = cost / ended;
        out.push_back(e);
    }
    return out;
}

Routed route_by_evidence(const config::RouteConfig& route, const RouteAsk& ask) {
    const std::string on = ask.type.empty() ? "every kind" : ask.type;
    std::vector<Ranked> experienced;
    std::vector<std::string> learning;
    std::map<std::string, const AgentEvidence*> evidence;
    for (const auto& e : ask.evidence) evidence[e.agent] = &e;
    for (const auto& agent : ask.agents) {
        auto e = evidence.find(agent);
        const int judged = e == evidence.end() ? 0 : e->second->judged;
        if (judged < route.min_runs) {
            learning.push_back(agent);
            continue;
        }
        const int passed = e->second->passed;
        experienced.push_back(
            {agent, static_cast<double>(passed) / judged, *wilson_interval(passed, judged)});
    }
    std::stable_sort(experienced.begin(), experienced.end(), [](const Ranked& a, const Ranked& b) {
        return std::tie(b.interval.low, b.rate) < std::tie(a.interval.low, a.rate);
    });

    std::vector<std::string> chosen;
    std::string why;
    if (!experienced.empty()) {
        const Ranked& top = experienced.front();
        const bool alone =
            std::all_of(experienced.begin() + 1, experienced.end(),
                        [&](const Ranked& r) { return top.interval.low > r.interval.high; });
        const std::size_t raced =
            alone ? 1 : std::min(experienced.size(), static_cast<std::size_t>(route.race));
        std::vector<std::string> figures;
        for (std::size_t i = 0; i < raced; ++i) {
            chosen.push_back(experienced[i].agent);
            figures.push_back(figure(experienced[i]));
        }
        if (raced == 1 && experienced.size() > 1 && alone) {
            why = top.agent + " alone: " + figure(top) + " on " + on + ", above every other (" +
                  experienced[1].agent + " " + figure(experienced[1]) + ")";
        } else if (raced == 1) {
            why = top.agent + ": " + figure(top) + " on " + on;
        } else {
            why = "raced " + names(chosen) + ": " + names(figures) + " on " + on;
        }
    }
    std::vector<std::string> learners;
    for (const auto& agent : learning) {
        chosen.push_back(agent);
        learners.push_back(agent);
    }
    if (!learners.empty())
        why += std::string(why.empty() ? "" : "; ") + names(learners) +
               (learners.size() == 1 ? " has" : " have") + " fewer than " +
               std::to_string(route.min_runs) + " judged runs on " + on + ": learning";
    std::string explored;
    std::vector<std::string> rest;
    for (const auto& r : experienced)
        if (std::find(chosen.begin(), chosen.end(), r.agent) == chosen.end())
            rest.push_back(r.agent);
    if (!rest.empty() && draw(route.seed, ask.issue, 0) < route.explore) {
        explored = rest[static_cast<std::size_t>(draw(route.seed, ask.issue, 1) *
                                                 static_cast<double>(rest.size()))];
        chosen.push_back(explored);
        why += "; " + explored + " to explore";
    }

    // The day's budget: what is left out first, last.
    if (ask.budget_left) {
        auto cost_of = [&](const std::string& agent) {
            auto e = evidence.find(agent);
            return e == evidence.end() ? 0.0 : e->second->cost_per_run.value_or(0.0);
        };
        std::vector<std::string> order;  // the first to go first
        if (!explored.empty()) order.push_back(explored);
        for (auto it = learners.rbegin(); it != learners.rend(); ++it) order.push_back(*it);
        for (auto it = chosen.rbegin(); it != chosen.rend(); ++it)
            if (std::find(order.begin(), order.end(), *it) == order.end()) order.push_back(*it);
        double total = 0;
        for (const auto& agent : chosen) total += cost_of(agent);
        std::vector<std::string> dropped;
        for (const auto& agent : order) {
            if (total <= *ask.budget_left || chosen.size() <= 1) break;
            total -= cost_of(agent);
            chosen.erase(std::find(chosen.begin(), chosen.end(), agent));
            dropped.push_back(agent);
        }
        if (!dropped.empty()) why += "; " + names(dropped) + " left out: past the day's budget";
    }

    Routed out;
    for (const auto& agent : ask.agents)
        if (std::find(chosen.begin(), chosen.end(), agent) != chosen.end())
            out.agents.push_back(agent);
    out.why = why;
    return out;
}

}  // namespace cocode::check
