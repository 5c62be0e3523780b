// The scorecard's decisions as tables (docs/report.md): the kind of work, the lines a merge
// kept, what reverts a merge, when an outcome is settled, and the counting of runs and pull
// requests into rows.
#include "check/scorecard.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "check/chart.h"
#include "check/outcome.h"
#include "check/published.h"
#include "check/route.h"
#include "core/run_id.h"

namespace cocode::check {
namespace {

using Clock = std::chrono::system_clock;

git::FileChange file(const std::string& path, char status = 'M') {
    git::FileChange f;
    f.path = path;
    f.status = status;
    return f;
}

TEST(Scorecard, TheKindOfWorkComesFromLabelsElseFromTheAcceptedChange) {
    struct Case {
        std::vector<std::string> labels;
        std::optional<AcceptedChange> change;
        std::string kind;
    };
    const AcceptedChange docs{{file("README.md"), file("docs/usage.rst")}, 12};
    const AcceptedChange tests{{file("tests/parser_test.cpp", 'A'), file("NOTES.md")}, 80};
    const AcceptedChange new_code{{file("src/cache.cpp", 'A'), file("src/main.cpp")}, 301};
    const AcceptedChange fix{{file("src/main.cpp"), file("src/main_test.cpp")}, 31};
    for (const Case& c : std::vector<Case>{
             {{"bug"}, fix, "fix/M"},
             {{"cocode", "type: Bug"}, docs, "fix/S"},  // the label wins over the paths
             {{"kind/feature"}, std::nullopt, "feature/?"},
             {{"documentation"}, new_code, "docs/L"},
             {{"Testing"}, tests, "tests/M"},
             {{"cocode"}, docs, "docs/S"},
             {{}, tests, "tests/M"},
             {{}, new_code, "feature/L"},
             {{}, fix, "fix/M"},
             {{"cocode"}, std::nullopt, "unknown"},
         }) {
        std::string labels;
        for (const auto& l : c.labels) labels += l + ",";
        EXPECT_EQ(work_kind(c.labels, c.change), c.kind) << labels;
    }
    EXPECT_EQ(size_of_change(30), 'S');
    EXPECT_EQ(size_of_change(31), 'M');
    EXPECT_EQ(size_of_change(300), 'M');
    EXPECT_EQ(size_of_change(301), 'L');
}

// The runs evidence counts, for routing (all cocode knows of) and `report --published` (what
// was published): a run here and published is one run, as here — both paths count it alike.
TEST(Scorecard, EvidenceCountsARunHereAndPublishedOnceAsHere) {
    auto summary = [](const std::string& id, bool pass) {
        RunSummary s;
        s.run_id = id;
        s.agent = "claude";
        s.pass = pass;
        return s;
    };
    // 1 only here; 2 here and published (published says FAIL: its folder says PASS); 3 only
    // published.
    const std::vector<RunSummary> here = {summary("1", true), summary("2", true)};
    const std::vector<RunSummary> published = {summary("2", false), summary("3", false)};
    auto ids = [](const std::vector<RunSummary>& runs) {
        std::string out;
        for (const auto& r : runs) out += r.run_id + (*r.pass ? "+" : "-") + " ";
        return out;
    };
    EXPECT_EQ(ids(evidence_runs(here, published, EvidenceRuns::here_and_published)), "1+ 2+ 3- ");
    EXPECT_EQ(ids(evidence_runs(here, published, EvidenceRuns::published_only)), "2+ 3- ");
    EXPECT_EQ(ids(evidence_runs({}, published, EvidenceRuns::published_only)), "2- 3- ");
    EXPECT_EQ(ids(evidence_runs(here, {}, EvidenceRuns::here_and_published)), "1+ 2+ ");
    EXPECT_EQ(ids(evidence_runs(here, {}, EvidenceRuns::published_only)), "");
}

TEST(Scorecard, TheLinesAMergeKeptWhateverWayItMerged) {
    const std::string base = "int main() {\n    return 0;\n}\n";
    const std::string agent = "int main() {\n    int x = 1;\n    log(x);\n    return x;\n}\n";
    struct Case {
        const char* name;
        std::optional<std::string> merged;
        LinesKept kept;
    };
    for (const Case& c : std::vector<Case>{
             {"merged as it was", agent, {3, 3}},
             {"one line rewritten by a person",
              "int main() {\n    int x = 1;\n    return x;\n}\n",
              {3, 2}},
             {"reindented: trailing blanks aside, a line is its text",
              "int main() {\n    int x = 1;   \n    log(x);\n    return x;\n}\n",
              {3, 3}},
             {"a line the base already had is not the agent's", base, {3, 0}},
             {"the file deleted before merging", std::nullopt, {3, 0}},
         }) {
        EXPECT_EQ(lines_kept({{"src/main.c", base, agent, c.merged}}), c.kept) << c.name;
    }
    // A line the agent wrote twice and the merge kept once; blank lines are no lines.
    EXPECT_EQ(lines_kept({{"a.txt", std::nullopt, "x\n\n  \nx\ny\n", "x\ny\n"}}),
              (LinesKept{3, 2}));
}

TEST(Scorecard, ARevertIsACommitOnTheBaseThatSaysItRevertsTheMergeWithinThirtyDays) {
    const std::string merge = "1111111111111111111111111111111111111111";
    const auto merged_at = *parse_utc_timestamp("2026-11-01T00:00:00Z");
    auto commit = [&](const std::string& sha, std::chrono::seconds after,
                      const std::string& message) {
        return git::HistoryCommit{sha, {"p"}, merged_at + after, message};
    };
    const std::chrono::hours day(24);
    struct Case {
        const char* name;
        std::vector<git::HistoryCommit> after;  // newest first, as git log gives them
        std::string reverted_by;
    };
    for (const Case& c : std::vector<Case>{
             {"nothing after it", {}, ""},
             {"an unrelated commit",
              {commit("aaaa", std::chrono::seconds(60), "Fix the parser\n")},
              ""},
             {"git revert of the merge",
              {commit("bbbb", std::chrono::hours(1),
                      "Revert \"Merge\"\n\nThis reverts commit " + merge +
                          ", reversing\nchanges made to 2222.\n")},
              "bbbb"},
             {"GitHub's revert pull request, squashed",
              {commit("cccc", std::chrono::hours(2),
                      "Revert \"Fix #4\" (#120)\n\nReverts octo-org/demo#104\n")},
              "cccc"},
             {"another pull request's revert",
              {commit("dddd", std::chrono::seconds(60), "Reverts octo-org/demo#10\n")},
              ""},
             {"after thirty days it is not counted",
              {commit("eeee", 31 * day, "This reverts commit " + merge + ".\n")},
              ""},
             {"the oldest of two",
              {commit("ffff", 2 * day, "This reverts commit " + merge + ".\n"),
               commit("9999", day, "Reverts octo-org/demo#104\n")},
              "9999"},
         }) {
        const auto revert = revert_in(c.after, merge, 104, "octo-org/demo", merged_at);
        EXPECT_EQ(revert ? revert->commit : "", c.reverted_by) << c.name;
    }
}

TEST(Scorecard, AnOutcomeIsSettledWhenNothingMoreCanHappenToIt) {
    const auto now = *parse_utc_timestamp("2026-11-27T00:00:00Z");
    auto outcome = [](const std::string& state, const std::string& merged_at,
                      const std::string& reverted_by) {
        PullOutcome o;
        o.pull_request = 7;
        o.state = state;
        o.merged_at = merged_at;
        o.reverted_by = reverted_by;
        if (state == "merged") o.lines = LinesKept{4, 4};
        return o;
    };
    EXPECT_FALSE(outcome_is_settled(outcome("open", "", ""), now));
    EXPECT_TRUE(outcome_is_settled(outcome("closed", "", ""), now));
    EXPECT_FALSE(outcome_is_settled(outcome("merged", "2026-11-20T00:00:00Z", ""), now))
        << "it could still be reverted";
    EXPECT_TRUE(outcome_is_settled(outcome("merged", "2026-10-20T00:00:00Z", ""), now));
    EXPECT_TRUE(outcome_is_settled(outcome("merged", "2026-11-20T00:00:00Z", "abcd"), now));
    // A record survives its own reading.
    PullOutcome o = outcome("merged", "2026-11-20T00:00:00Z", "abcd");
    o.ready_to_merge_seconds = 90;
    const auto back = outcome_from_json(outcome_json(o));
    ASSERT_TRUE(back);
    EXPECT_EQ(outcome_json(*back), outcome_json(o));
    EXPECT_FALSE(outcome_from_json(nlohmann::json::parse(R"({"pull_request":7,"state":"?"})")));
}

RunFacts fact(const std::string& agent, const std::string& kind, std::optional<bool> pass,
              double cost, std::optional<PullOutcome> outcome = std::nullopt) {
    RunFacts f;
    f.agent = agent;
    f.kind = kind;
    f.model = agent == "script" ? "" : agent + "-model";
    f.day = "2026-11-26";
    f.pass = pass;
    f.cost_usd = cost;
    f.tokens.input = 1000;
    f.outcome = std::move(outcome);
    return f;
}

PullOutcome pull(const std::string& state, bool reverted = false, LinesKept lines = {}) {
    PullOutcome o;
    o.pull_request = 1;
    o.state = state;
    if (state == "merged") {
        o.ready_to_merge_seconds = 600;
        o.lines = lines;
    }
    if (reverted) o.reverted_by = "abc";
    return o;
}

// Twelve tasks with known answers: one agent solves all, one none, one every other; the rows
// say exactly that, with their intervals, and the merges of their pull requests.
TEST(Scorecard, RowsCountRunsPassesAndPullRequestsWithTheirIntervals) {
    std::vector<RunFacts> facts;
    for (int task = 0; task < 12; ++task) {
        const std::string kind = task < 6 ? "fix/S" : "feature/M";
        facts.push_back(fact("true", kind, true, 0.5, pull("merged", task == 0, {10, 9})));
        facts.push_back(fact("none", kind, false, 0.25, pull("closed")));
        facts.push_back(fact("half", kind, task % 2 == 0, 0.5,
                             task % 2 == 0 ? std::optional(pull("open")) : std::nullopt));
    }
    facts.push_back(fact("script", "fix/S", std::nullopt, 0));  // not judged yet
    facts.back().active = true;

    const Scorecard by_agent = scorecard(facts, {Dimension::agent});
    ASSERT_EQ(by_agent.rows.size(), 4u);
    struct Row {
        std::string key;
        int runs, judged, passed;
        double low, high;
        int pulls, merged, closed, reverted;
    };
    for (const Row& want : std::vector<Row>{
             {"half", 12, 12, 6, 0.2538, 0.7462, 6, 0, 0, 0},
             {"none", 12, 12, 0, 0.0, 0.2425, 12, 0, 12, 0},
             {"script", 1, 0, 0, -1, -1, 0, 0, 0, 0},
             {"true", 12, 12, 12, 0.7575, 1.0, 12, 12, 0, 1},
         }) {
        auto row = std::find_if(by_agent.rows.begin(), by_agent.rows.end(),
                                [&](const ReportRow& r) { return r.key() == want.key; });
        ASSERT_NE(row, by_agent.rows.end()) << want.key;
        SCOPED_TRACE(want.key);
        EXPECT_EQ(row->runs, want.runs);
        EXPECT_EQ(row->judged, want.judged);
        EXPECT_EQ(row->passed, want.passed);
        if (want.low < 0) {
            EXPECT_FALSE(row->pass_interval());
        } else {
            ASSERT_TRUE(row->pass_interval());
            EXPECT_NEAR(row->pass_interval()->low, want.low, 5e-4);
            EXPECT_NEAR(row->pass_interval()->high, want.high, 5e-4);
        }
        EXPECT_EQ(row->pulls, want.pulls);
        EXPECT_EQ(row->merged, want.merged);
        EXPECT_EQ(row->closed, want.closed);
        EXPECT_EQ(row->reverted, want.reverted);
    }
    const ReportRow& truth = by_agent.rows[3];
    EXPECT_EQ(truth.merge_rate(), 1.0);
    EXPECT_NEAR(*truth.revert_rate(), 1.0 / 12, 1e-9);
    EXPECT_NEAR(*truth.kept_rate(), 0.9, 1e-9);
    EXPECT_NEAR(*truth.cost_per_merge(), 0.5, 1e-9);
    EXPECT_EQ(truth.median_merge_seconds, 600);
    EXPECT_EQ(by_agent.rows[1].merge_rate(), 0.0) << "none: twelve closed unmerged";
    EXPECT_FALSE(by_agent.rows[0].merge_rate()) << "half: open ones decide nothing yet";
    EXPECT_FALSE(by_agent.rows[1].cost_per_pass());
    EXPECT_EQ(by_agent.total.runs, 37);
    EXPECT_EQ(by_agent.total.key(), "total");

    // By agent and kind: each agent's rows split by the kind of its tasks, in text order.
    const Scorecard by_kind = scorecard(facts, {Dimension::agent, Dimension::kind});
    std::vector<std::string> keys;
    for (const auto& row : by_kind.rows) keys.push_back(row.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"half feature/M", "half fix/S", "none feature/M",
                                              "none fix/S", "script fix/S", "true feature/M",
                                              "true fix/S"}));
    EXPECT_EQ(by_kind.rows[1].passed, 3);
    // By model: a run whose model is not known is "-".
    const Scorecard by_model = scorecard(facts, {Dimension::model});
    EXPECT_EQ(by_model.rows.front().key(), "-");
}

// An agent that passed the one run it finished has a PASS rate of 1 of 1, whatever else
// happened to its runs: one a person stopped and one whose program was missing are counted
// apart, their cost still in the cost, and said in the note under the table.
TEST(Scorecard, RunsInterruptedOrNeverStartedAreCountedApartNotJudged) {
    std::vector<RunFacts> facts = {fact("claude", "fix/S", true, 0.5),
                                   fact("claude", "fix/S", std::nullopt, 0.25),
                                   fact("claude", "fix/S", std::nullopt, 0)};
    facts[1].apart = run::NotJudged::interrupted;
    facts[2].apart = run::NotJudged::never_started;
    // A verdict a run of either kind carries from before (`exit 130: interrupted`) is not one.
    facts.push_back(fact("claude", "fix/S", false, 0));
    facts.back().apart = run::NotJudged::interrupted;
    const Scorecard card = scorecard(facts, {Dimension::agent});
    ASSERT_EQ(card.rows.size(), 1u);
    const ReportRow& row = card.rows[0];
    EXPECT_EQ(row.runs, 4);
    EXPECT_EQ(row.judged, 1);
    EXPECT_EQ(row.passed, 1);
    EXPECT_EQ(row.interrupted, 2);
    EXPECT_EQ(row.never_started, 1);
    EXPECT_EQ(row.pass_rate(), 1.0);
    EXPECT_DOUBLE_EQ(row.cost_usd, 0.75);
    EXPECT_EQ(apart_note(row),
              "runs counts 2 interrupted and 1 whose agent never started: not judged, not in the "
              "PASS rate");
    EXPECT_EQ(apart_note(scorecard({fact("a", "fix/S", true, 0)}, {Dimension::agent}).total), "");
    EXPECT_EQ(run::not_judged(run::StopReason::interrupted), run::NotJudged::interrupted);
    for (auto reason :
         {run::StopReason::missing_dependency, run::StopReason::setup, run::StopReason::spawn})
        EXPECT_EQ(run::not_judged(reason), run::NotJudged::never_started);
    for (auto reason : {run::StopReason::none, run::StopReason::timeout, run::StopReason::idle,
                        run::StopReason::budget, run::StopReason::crashed})
        EXPECT_EQ(run::not_judged(reason), run::NotJudged::no);
}

TEST(Scorecard, ItsDimensionsAreNamedOnceEach) {
    EXPECT_EQ(*dimensions_of("agent,model,kind"),
              (std::vector<Dimension>{Dimension::agent, Dimension::model, Dimension::kind}));
    EXPECT_EQ(*dimensions_of("day"), std::vector<Dimension>{Dimension::day});
    for (const char* bad : {"", "agent,", "agent,agent", "Agent", "agent model"}) {
        const auto d = dimensions_of(bad);
        ASSERT_FALSE(d.ok()) << bad;
        EXPECT_EQ(d.error().code, ExitCode::usage) << bad;
    }
}

}  // namespace
}  // namespace cocode::check

namespace cocode::check {
namespace {

AgentEvidence seen(const std::string& agent, int passed, int judged, double cost = 1) {
    return {agent, judged, passed, cost};
}

// Routing by evidence as a table: the scorecard of the issue's kind → the agents it gets.
TEST(Route, TheAgentsAnIssueGetsFollowTheEvidence) {
    config::RouteConfig route;
    route.evidence = true;
    route.explore = 0;
    struct Case {
        const char* name;
        std::vector<AgentEvidence> evidence;
        std::vector<std::string> chosen;
        std::string why;
    };
    const std::vector<std::string> agents = {"claude", "codex", "gemini"};
    for (const Case& c : std::vector<Case>{
             {"nothing known: every agent learns",
              {},
              agents,
              "claude, codex and gemini have fewer than 5 judged runs on fix: learning"},
             {"one clearly ahead runs alone",
              {seen("claude", 19, 20), seen("codex", 6, 20), seen("gemini", 5, 20)},
              {"claude"},
              "claude alone: 95% ±11 on fix, above every other (codex 30% ±19)"},
             {"close evidence: the top two race",
              {seen("claude", 14, 20), seen("codex", 13, 20), seen("gemini", 4, 20)},
              {"claude", "codex"},
              "raced claude and codex: 70% ±19 and 65% ±19 on fix"},
             {"an agent with too few runs of the kind learns beside the leader",
              {seen("claude", 19, 20), seen("codex", 6, 20), seen("gemini", 1, 2)},
              {"claude", "gemini"},
              "claude alone: 95% ±11 on fix, above every other (codex 30% ±19); gemini has "
              "fewer than 5 judged runs on fix: learning"},
         }) {
        RouteAsk ask{agents, c.evidence, "fix", 7, std::nullopt};
        const Routed routed = route_by_evidence(route, ask);
        EXPECT_EQ(routed.agents, c.chosen) << c.name;
        EXPECT_EQ(routed.why, c.why) << c.name;
    }

    // race 3: all three when close; min_runs 30: twenty runs are still learning.
    config::RouteConfig wide = route;
    wide.race = 3;
    RouteAsk close{agents,
                   {seen("claude", 10, 20), seen("codex", 9, 20), seen("gemini", 8, 20)},
                   "",
                   7,
                   std::nullopt};
    EXPECT_EQ(route_by_evidence(wide, close).agents, agents);
    EXPECT_NE(route_by_evidence(wide, close).why.find("on every kind"), std::string::npos);
    config::RouteConfig patient = route;
    patient.min_runs = 30;
    EXPECT_EQ(route_by_evidence(patient, close).agents, agents);
}

TEST(Route, ExplorationIsDrawnFromTheSeedAndTheBudgetLeavesOutTheExtrasFirst) {
    config::RouteConfig route;
    route.evidence = true;
    route.explore = 0.5;
    const std::vector<std::string> agents = {"claude", "codex", "gemini"};
    const std::vector<AgentEvidence> evidence = {
        seen("claude", 19, 20, 2.0), seen("codex", 6, 20, 0.5), seen("gemini", 5, 20, 0.25)};
    // Over a hundred issues about half explore one more; the same seed, the same choices.
    int explored = 0;
    for (long issue = 1; issue <= 100; ++issue) {
        RouteAsk ask{agents, evidence, "fix", issue, std::nullopt};
        const Routed a = route_by_evidence(route, ask);
        EXPECT_EQ(a.agents, route_by_evidence(route, ask).agents) << issue;
        explored += a.agents.size() == 2;
        EXPECT_EQ(a.agents.front(), "claude") << issue;
    }
    EXPECT_GT(explored, 30);
    EXPECT_LT(explored, 70);
    config::RouteConfig never = route;
    never.explore = 0;
    config::RouteConfig always = route;
    always.explore = 1;
    RouteAsk ask{agents, evidence, "fix", 3, std::nullopt};
    EXPECT_EQ(route_by_evidence(never, ask).agents.size(), 1u);
    EXPECT_EQ(route_by_evidence(always, ask).agents.size(), 2u);
    // $2.10 left today: the leader ($2 a run) stays, the explored one goes, and says so.
    ask.budget_left = 2.1;
    const Routed held = route_by_evidence(always, ask);
    EXPECT_EQ(held.agents, std::vector<std::string>{"claude"});
    EXPECT_NE(held.why.find("left out: past the day's budget"), std::string::npos) << held.why;
    // Nothing left at all: one agent still runs (the day's budget refuses it, as any run).
    ask.budget_left = 0;
    EXPECT_EQ(route_by_evidence(never, ask).agents.size(), 1u);
}

}  // namespace
}  // namespace cocode::check

namespace cocode::check {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The chart: a bar and a whisker per judged row, at the right lengths; text escaped whatever a
// model's name holds; nothing that runs or fetches.
TEST(Chart, TheScorecardDrawnHoldsItsFiguresAndNoMarkupFromTheRows) {
    std::vector<RunFacts> facts;
    for (int i = 0; i < 4; ++i) facts.push_back(fact("claude", "fix/S", true, 1.0));
    for (int i = 0; i < 4; ++i) facts.push_back(fact("codex", "fix/S", i < 2, 0.5));
    facts.push_back(fact("script", "fix/S", std::nullopt, 0));
    facts.back().active = true;
    facts.push_back(fact("claude", "fix/S", true, 1.0));
    facts.back().model = "<script>alert(1)</script>&\x1b[31m";
    const Scorecard by_model = scorecard(facts, {Dimension::agent, Dimension::model});
    const std::string svg = scorecard_svg(by_model);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_EQ(count_of(svg, "<rect class=\"pass\""), 3u)
        << "claude twice, codex; the script has no verdict";
    EXPECT_EQ(count_of(svg, "<path class=\"interval\""), 3u);
    EXPECT_NE(svg.find("width=\"300.0\""), std::string::npos) << "100 % is the whole bar";
    EXPECT_NE(svg.find("width=\"150.0\""), std::string::npos) << "codex: 2 of 4";
    EXPECT_NE(svg.find("no verdict yet"), std::string::npos);
    EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;&amp;"), std::string::npos);
    EXPECT_EQ(svg.find("<script"), std::string::npos);
    EXPECT_EQ(svg.find('\x1b'), std::string::npos);
    for (const char* fetches : {"href", "http://", "https://", "url(", "@import", "onload"}) {
        if (std::string(fetches) == "http://") {
            EXPECT_EQ(count_of(svg, fetches), 1u) << "the SVG namespace alone";
        } else {
            EXPECT_EQ(svg.find(fetches), std::string::npos) << fetches;
        }
    }
    EXPECT_EQ(count_of(svg, "<g class=\"row\">"), by_model.rows.size());
    EXPECT_EQ(count_of(svg, "<g"), count_of(svg, "</g>"));
    EXPECT_EQ(count_of(svg, "<text"), count_of(svg, "</text>"));
}

// Every text of the picture on a line of its own, none over the next nor over the edge, taking 7 px
// a character (12 px sans-serif is about 6.5): before, "100% (21%–100%) of 1" was drawn over
// "$0.00".
TEST(Chart, NoLabelOfTheScorecardOverlapsAnother) {
    std::vector<RunFacts> facts;
    for (int i = 0; i < 9; ++i)
        facts.push_back(fact("an-agent-with-a-long-name", "feature/L", i < 5, 1234.5));
    facts.push_back(fact("b", "fix/S", true, 0.01));
    facts.push_back(fact("c", "fix/S", false, 0.5));
    const std::string svg = scorecard_svg(scorecard(facts, {Dimension::agent, Dimension::kind}));
    int width = 0;
    std::sscanf(svg.c_str(), "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\"", &width);
    ASSERT_GT(width, 0);
    // (y, x, its characters) of every text drawn from its start.
    std::map<int, std::vector<std::pair<double, std::size_t>>> lines;
    for (auto at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
        const auto close = svg.find('>', at), end = svg.find("</text>", at);
        const std::string tag = svg.substr(at, close - at);
        if (tag.find("text-anchor") != std::string::npos) continue;  // the axis's ticks
        double x = 0, y = 0;
        ASSERT_EQ(std::sscanf(tag.c_str() + tag.find(" x=\"") + 4, "%lf", &x), 1) << tag;
        ASSERT_EQ(std::sscanf(tag.c_str() + tag.find(" y=\"") + 4, "%lf", &y), 1) << tag;
        std::size_t chars = 0;
        for (char c : svg.substr(close + 1, end - close - 1))
            chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        lines[static_cast<int>(y)].push_back({x, chars});
    }
    ASSERT_GE(lines.size(), 4u);
    for (auto& [y, texts] : lines) {
        std::sort(texts.begin(), texts.end());
        for (std::size_t i = 0; i < texts.size(); ++i) {
            const double end = texts[i].first + 7.0 * static_cast<double>(texts[i].second);
            const double next = i + 1 < texts.size() ? texts[i + 1].first : width;
            EXPECT_LE(end, next) << "at y " << y << ", the text at x " << texts[i].first;
        }
    }
}

// The picture counts what the reports count: a run a person stopped and one whose agent never
// started are in no bar, and said under the rows; an unpriced run's cost is the dash every
// view shows (it read "-", and said nothing of the runs counted apart).
TEST(Chart, TheScorecardDrawnSaysWhatItCountsApartAndWhatHasNoPrice) {
    std::vector<RunFacts> facts;
    for (int i = 0; i < 3; ++i) {
        facts.push_back(
            fact("script", "fix/S", i == 0 ? std::optional<bool>(true) : std::nullopt, 0));
        facts.back().cost_usd = std::nullopt;  // a script's run: no price known
    }
    facts[1].apart = run::NotJudged::interrupted;
    facts[2].apart = run::NotJudged::never_started;
    const Scorecard card = scorecard(facts, {Dimension::agent});
    ASSERT_EQ(card.rows.size(), 1u);
    EXPECT_EQ(card.rows[0].judged, 1);
    const std::string svg = scorecard_svg(card);
    EXPECT_NE(svg.find(">100% (21%\u2013100%) of 1<"), std::string::npos) << svg;
    EXPECT_NE(svg.find(">\u2013</text>"), std::string::npos) << "unpriced, not free" << svg;
    EXPECT_EQ(svg.find(">-</text>"), std::string::npos);
    EXPECT_NE(svg.find(">runs counts 1 interrupted and 1 whose agent never started: not judged, "
                       "not in the PASS rate</text>"),
              std::string::npos)
        << svg;
}

// The same chart as Markdown, for a step summary: a row per key with its bar of text, the
// figures beside it, and the hostile model name as the characters it is.
TEST(Chart, TheScorecardAsMarkdownHoldsItsFiguresAndNoMarkupFromTheRows) {
    std::vector<RunFacts> facts;
    for (int i = 0; i < 4; ++i) facts.push_back(fact("claude", "fix/S", true, 1.0));
    for (int i = 0; i < 4; ++i) facts.push_back(fact("codex", "fix/S", i < 2, 0.5));
    facts.push_back(fact("claude", "fix/S", true, 1.0));
    facts.back().model = "<img src=x onerror=alert(1)>|**x**\x1b[31m\n::error::forged";
    const std::string md = scorecard_markdown(scorecard(facts, {Dimension::agent}));
    EXPECT_EQ(md.rfind("### cocode scorecard, by agent\n\n| agent | runs |", 0), 0u) << md;
    // claude: 5 of 5 (interval 57-100): the bar's last cell is the rate. codex: 2 of 4.
    EXPECT_NE(md.find("| claude | 5 | `"), std::string::npos) << md;
    EXPECT_NE(md.find("\u2588` 100 % (57\u2013100) of 5 | \\$1.00 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| codex | 4 | `"), std::string::npos) << md;
    EXPECT_NE(md.find("` 50 % (15\u201385) of 4 | \\$1.00 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| **total** | 9 |"), std::string::npos) << md;

    const std::string by_model =
        scorecard_markdown(scorecard(facts, {Dimension::agent, Dimension::model}));
    EXPECT_NE(by_model.find("&lt;img src=x onerror=alert(1)&gt;\\|\\*\\*x\\*\\*"
                            "\ufffd\\[31m ::error::forged"),
              std::string::npos)
        << by_model;
    EXPECT_EQ(by_model.find("<img"), std::string::npos);
    EXPECT_EQ(by_model.find('\x1b'), std::string::npos);
    EXPECT_EQ(by_model.find("\n::"), std::string::npos) << "no line reads as a workflow command";
    // Every row has as many cells as the header.
    std::istringstream lines(by_model);
    std::size_t cells = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("|", 0) != 0) continue;
        std::size_t bars = 0;
        for (std::size_t k = 0; k < line.size(); ++k)
            if (line[k] == '|' && (k == 0 || line[k - 1] != '\\')) ++bars;
        if (cells == 0) cells = bars;
        EXPECT_EQ(bars, cells) << line;
    }
}

}  // namespace
}  // namespace cocode::check
