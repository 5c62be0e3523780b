// Rounds on the agent's pull request (docs/review.md). A round is a run of its own that
// continues the pair's last run on the same branch; these are the pair's rounds as the run
// folders tell them, and whether another may start.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "run/run_folder.h"

namespace cocode::run {

// What a judged run's check.json says, when it has one.
struct Judged {
    bool pass = false;
    std::string head;  // the commit judged
};
std::optional<Judged> read_judged(const std::filesystem::path& run_folder);

// One round of an (issue, agent) pair: its newest run (a round resumed with --resume is one
// round), with that run's verdict.
struct RoundSeen {
    int number = 1;
    RunRecord run;
    std::optional<Judged> judged;
};

// The pair's rounds, oldest first. `judged_of` reads a run's verdict (read_judged by default).
std::vector<RoundSeen> rounds_of(
    const std::vector<RunRecord>& runs, long issue, const std::string& agent,
    const std::function<std::optional<Judged>(const RunRecord&)>& judged_of = {});

struct RoundDecision {
    bool go = false;
    int number = 0;       // the round that would start
    std::string why_not;  // one line, when it may not
};

// Whether another round may start after `history`: not past `max_rounds` (the first round
// counts), and not after two rounds in a row that failed their check. Plan rounds and code
// rounds are counted apart (`plan`: the round to start is a plan round): a plan and its
// revisions do not use up the rounds of review, and a plan that could not be read is not a
// failed check of code.
RoundDecision decide_round(const std::vector<RoundSeen>& history, int max_rounds,
                           bool plan = false);

}  // namespace cocode::run
