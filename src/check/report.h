// The verdict as people read it: a short Markdown report for the issue comment, the pull
// request and the Actions step summary; and the comparison of every agent's run on an issue.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/verdict.h"
#include "github/types.h"
#include "run/seal.h"

namespace cocode::check {

// Verdict, agent, branch, commits, diff stat, each check with its reason, the tail of each
// failing command's output in a collapsed block, the run's duration.
std::string render_markdown(const Verdict& verdict);

// A plan round's report (docs/review.md, "Plans"): the questions first, then the files, tests
// and steps, and the commands (`command`, the configured "/cocode") that approve, revise or
// reject it, naming its hash. An unreadable plan is shown as written, fenced, with why. The
// agent's words are data: no HTML, nothing that could pass for a record of cocode's.
std::string render_plan_markdown(const Verdict& verdict, const std::string& command = "/cocode");
// The terminal's command that approves a plan round's plan ("cocode-dispatch continue 12 --agent
// claude --approve --hash 3f2a1c0d9e8b"); empty when there is none to approve (no plan, a
// failed round, a rejected plan).
std::string approve_command(const Verdict& verdict);

// What the run used, one line: "claude-sonnet-4-5 · 412k in / 9k out · $1.84 · 6m 2s"
// (the verdict comment's footer); "" when the run reported no usage.
std::string usage_line(const Verdict& verdict);

// The same for a terminal: plain aligned text, no Markdown (no tables, no HTML, no
// backticks), for `cocode-check` when its output is a terminal or with --format text.
std::string render_text(const Verdict& verdict);

// The hidden marker of the one comment per (issue, agent), and of the issue's comparison.
std::string comment_key(long issue, const std::string& agent);
std::string summary_key(long issue);

// Orders candidates best first by the documented rule (docs/check.md): PASS before FAIL,
// then fewer files outside the allowed paths, then the smaller diff (lines added + removed),
// then the faster run; the agent's name breaks a tie so that the order is stable.
std::vector<Verdict> rank(std::vector<Verdict> verdicts);
// What the rule compares of a verdict, and the rule itself: a ranks before b.
struct RankFacts {
    bool pass = false;
    std::size_t outside = 0;  // files outside the allowed paths
    int lines = 0;            // added and removed
    std::optional<double> seconds;
    std::string agent;
};
RankFacts rank_facts(const Verdict& verdict);
bool ranks_before(const RankFacts& a, const RankFacts& b);

// The comparison across every agent's latest run on the issue, best candidate named.
std::string render_summary(long issue, const std::vector<Verdict>& ranked);

// Data in a comment, unseen: `start` ("<!-- cocode:name ") and JSON text, closed by " -->";
// "--" is written "-\u002d" so that nothing can end the comment early. record_in reads the
// JSON object of the record `start` opens in `body` back.
std::string hidden_record(std::string_view start, const std::string& text);
std::optional<nlohmann::json> record_in(const std::string& body, std::string_view start);

// The verdict as data, for a reader with no run folder (the comparison on a fresh runner, after
// a matrix of jobs each published its own): `<!-- cocode:verdict {…} -->`, the verdict's JSON
// without its commits, lists cut at 300 entries (their totals kept), and every "--" written
// "-\u002d" so that nothing can end the comment early. Appended to each published comment.
std::string verdict_record(const Verdict& verdict);

// The verdicts the issue's comments carry for `issue`: per agent, the one in the oldest comment
// with that agent's marker (the one publishing keeps and updates; a newer one with the same
// marker, which anyone could post, is not read). A record that does not parse is left out.
std::vector<Verdict> verdicts_from_comments(const std::vector<github::Comment>& comments,
                                            long issue);

// How a pair goes on where its run folder is not — a round on a fresh runner (docs/review.md):
// the round's seal (base, marker, the configuration it is judged by, refs) and the end of
// what the agent said, as `<!-- cocode:continue {…} -->`, escaped as the verdict's record.
// Appended to a round's published comment.
struct Continuation {
    run::Seal seal;
    std::string output;  // the last of the agent's output.md
};
inline constexpr std::size_t kContinuationOutputCap = 8 << 10;
std::string continuation_record(const Continuation& continuation);

// What the pair's published comment says: the verdict and how to go on. Only the comment
// publishing keeps (the oldest with the pair's marker), and only when the repository's people
// or a bot wrote it: the sealed rules come from it. nullopt: no such comment, or it lacks
// either record.
struct Published {
    Verdict verdict;
    Continuation continuation;
};
std::optional<Published> published_pair(const std::vector<github::Comment>& comments, long issue,
                                        const std::string& agent);

// "1 file", "3 files".
std::string plural(std::size_t n, const char* one, const char* many);

// A duration as the reports write it: "45s", "3m 20s", "1h 2m".
std::string format_seconds(double seconds);

}  // namespace cocode::check
