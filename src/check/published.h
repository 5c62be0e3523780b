// The evidence of runs whose folders are gone — the GitHub Action's, each on a runner of its
// own: every (issue, agent) pair's verdict as it was published on the repository's issues
// (check/report.h, published_pair: the oldest comment under the pair's marker, by the
// repository's people or a bot, with both its records). Each of the pair's rounds is a run:
// the last carries its verdict's facts and usage; an earlier one, its PASS or FAIL alone (what
// it cost was in its own verdict, since replaced), so it counts as a run of unknown cost.
#pragma once

#include <chrono>
#include <vector>

#include "check/report.h"
#include "check/scorecard.h"
#include "github/types.h"
#include "run/restore.h"
#include "run/run_folder.h"
#include "run/seal.h"

namespace cocode::check {

struct PublishedRuns {
    std::vector<RunSummary> summaries;
    // What refresh_outcomes needs of each run: id, issue, agent, branch, round, base, and the
    // commit it ended on.
    std::vector<run::RunRecord> records;
};
PublishedRuns published_runs(const std::vector<github::Comment>& comments);

// The runs published on the repository's issues in comments updated since `since` (GitHub's
// time; a run's comment is updated after the run started, so no run since then is missed),
// asked of GitHub once; `comments`: how many comments were read.
struct PublishedSince {
    PublishedRuns runs;
    std::size_t comments = 0;
};
Result<PublishedSince> published_since(github::GitHub& github, const std::string& since);

// The rounds a fresh runner restores of a pair (`continue` where the pair never ran) from its
// published comment: each round of the verdict that had a run, oldest first, the last with
// the verdict whole (a plan it holds can be approved there), the agent's last words and the
// seal the next round copies; each told the issue's text `issue` (as a writer approved it).
struct RoundToRestore {
    run::RestoredRound round;
    std::optional<run::Seal> seal;  // the last round's
};
std::vector<RoundToRestore> rounds_to_restore(const Published& published,
                                              const github::Issue& issue, const std::string& agent);

// Evidence — what the runs say of how agents did — is read one way wherever it is used:
// `report` shows it, routing trusts it. The runs here (their summaries) and those published on
// the issues (an Action's, whose folders went with their runners): a run that is both is the
// same run, counted once and as here (its folder holds what publishing summarised). Routing
// reads the evidence of the last 180 days; `report` that of `--since`.
inline constexpr std::chrono::hours kEvidenceWindow{24 * 180};
enum class EvidenceRuns {
    here_and_published,  // routing: all cocode knows of
    published_only,      // report --published: the runs published, each as here when it is
};
std::vector<RunSummary> evidence_runs(const std::vector<RunSummary>& here,
                                      const std::vector<RunSummary>& published, EvidenceRuns which);

}  // namespace cocode::check
