#include "check/published.h"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "check/report.h"
#include "core/json_text.h"

namespace cocode::check {

namespace {

// The (issue, agent) of a pair's comment, from the marker it starts with; nullopt for any other
// comment (the comparison's summary among them).
std::optional<std::pair<long, std::string>> pair_of(std::string_view body) {
    constexpr std::string_view start = "<!-- cocode:check/issue-";
    if (body.substr(0, start.size()) != start) return std::nullopt;
    body.remove_prefix(start.size());
    long issue = 0;
    std::size_t i = 0;
    for (; i < body.size() && i < 12 && std::isdigit(static_cast<unsigned char>(body[i])); ++i)
        issue = issue * 10 + (body[i] - '0');
    if (i == 0 || i >= body.size() || body[i] != '/') return std::nullopt;
    const std::size_t end = body.find(" -->", i + 1);
    if (end == std::string_view::npos || end == i + 1) return std::nullopt;
    std::string agent(body.substr(i + 1, end - i - 1));
    if (agent == "summary" || agent.find_first_of(" \n/") != std::string::npos) return std::nullopt;
    return std::make_pair(issue, std::move(agent));
}

}  // namespace

std::vector<RoundToRestore> rounds_to_restore(const Published& published,
                                              const github::Issue& issue,
                                              const std::string& agent) {
    const Verdict& v = published.verdict;
    std::vector<RoundLine> rounds = v.rounds;
    if (rounds.empty())
        rounds.push_back({1, "issue #" + std::to_string(issue.number), v.pass, v.base, v.head,
                          v.run_id, v.plan_round});
    rounds.back().run_id = v.run_id;
    std::vector<RoundToRestore> out;
    for (const auto& line : rounds) {
        if (line.run_id.empty()) continue;  // judged without a run: nothing to go on from
        const bool last = &line == &rounds.back();
        out.push_back(
            {run::RestoredRound{line.run_id, issue.number, issue.html_url, issue.title, issue.body,
                                agent, v.branch, v.base, line.number, line.trigger, line.from,
                                line.pass, line.to,
                                last ? published.continuation.output : std::string(), line.plan,
                                last ? json_dump(to_json(v)) : std::string()},
             last ? std::optional<run::Seal>(published.continuation.seal) : std::nullopt});
    }
    return out;
}

std::vector<RunSummary> evidence_runs(const std::vector<RunSummary>& here,
                                      const std::vector<RunSummary>& published,
                                      EvidenceRuns which) {
    std::map<std::string, const RunSummary*> by_id;
    for (const auto& s : here) by_id[s.run_id] = &s;
    std::vector<RunSummary> out;
    if (which == EvidenceRuns::here_and_published) out = here;
    for (const auto& s : published) {
        const auto same = by_id.find(s.run_id);
        if (same == by_id.end())
            out.push_back(s);
        else if (which == EvidenceRuns::published_only)
            out.push_back(*same->second);
    }
    return out;
}

PublishedRuns published_runs(const std::vector<github::Comment>& comments) {
    std::set<std::pair<long, std::string>> pairs;
    for (const auto& comment : comments)
        if (auto pair = pair_of(comment.body)) pairs.insert(std::move(*pair));
    PublishedRuns out;
    for (const auto& pair : pairs) {
        const long issue = pair.first;  // not a structured binding: lambdas use it (clang 14)
        const std::string& agent = pair.second;
        const auto published = published_pair(comments, issue, agent);
        if (!published) continue;
        const Verdict& v = published->verdict;
        const run::Seal& seal = published->continuation.seal;
        auto summary_of = [&](const std::string& run_id, int round) {
            RunSummary s;
            s.run_id = run_id;
            s.agent = agent;
            s.issue = issue;
            s.branch = v.branch;
            s.round = round;
            s.sealed = true;
            s.labels = seal.issue_labels;
            return s;
        };
        auto record_of = [&](const RunSummary& s, bool plan_round, const std::string& ready) {
            run::RunRecord r;
            r.run_id = s.run_id;
            r.issue = issue;
            r.agent = agent;
            r.branch = v.branch;
            r.round = s.round;
            r.plan_round = plan_round;
            r.base_commit = v.base;
            r.ready_commit = ready;
            return r;
        };
        for (const auto& line : v.rounds) {
            if (line.run_id.empty() || line.run_id == v.run_id) continue;
            RunSummary s = summary_of(line.run_id, line.number);
            s.pass = line.pass;
            s.plan_round = line.plan;
            s.unpriced = true;
            out.records.push_back(record_of(s, line.plan, line.to));
            out.summaries.push_back(std::move(s));
        }
        RunSummary last = summary_of(v.run_id, v.round);
        take_verdict(last, v);
        if (v.usage) take_usage(last, *v.usage);
        out.records.push_back(
            record_of(last, v.plan_round, v.ready_commit.empty() ? v.head : v.ready_commit));
        out.summaries.push_back(std::move(last));
    }
    return out;
}

Result<PublishedSince> published_since(github::GitHub& github, const std::string& since) {
    auto comments = github.comments_since(since);
    if (!comments) return std::move(comments).error();
    return PublishedSince{published_runs(*comments), comments->size()};
}

}  // namespace cocode::check
