// The evidence of runs whose folders are gone — the GitHub Action's, each on a runner of its
// own: every (issue, agent) pair's verdict as it was published on the repository's issues
// (check/report.h, published_pair: the oldest comment under the pair's marker, by the
// repository's people or a bot, with both its records). Each of the pair's rounds is a run:
// the last carries its verdict's facts and usage; an earlier one, its PASS or FAIL alone (what
// it cost was in its own verdict, since replaced), so it counts as a run of unknown cost.
#pragma once

#include <vector>

#include "check/scorecard.h"
#include "github/types.h"
#include "run/run_folder.h"

namespace cocode::check {

struct PublishedRuns {
    std::vector<RunSummary> summaries;
    // What refresh_outcomes needs of each run: id, issue, agent, branch, round, base, and the
    // commit it ended on.
    std::vector<run::RunRecord> records;
};
PublishedRuns published_runs(const std::vector<github::Comment>& comments);

}  // namespace cocode::check
