// A pair's rounds restored from what was published, on a machine that never ran them — a
// round on a fresh runner (docs/review.md). Each round becomes the run folder it left for the
// next one: run-info (ended, no process of it anywhere), its verdict (check.json), the issue's
// text and, for the last round, what the agent said and the seal the next round copies.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"
#include "run/seal.h"

namespace cocode::run {

struct RestoredRound {
    std::string run_id;
    long issue = 0;
    std::string issue_url;
    std::string issue_title;
    std::string issue_body;
    std::string agent;
    std::string branch;
    std::string base_commit;
    int round = 1;
    std::string round_trigger;  // as the verdict lists it ("issue #12" for the first)
    std::string round_from;
    std::optional<bool> pass;  // its verdict, when it was judged
    std::string head;          // the commit judged
    std::string output;        // what the agent said at its end
    bool plan_round = false;   // a plan round (docs/review.md, "Plans")
    // The last round's verdict as published (its record), written whole as its check.json, so
    // that a plan can be approved where it was not made; empty: the verdict alone.
    std::string verdict_json;
};

// Makes the round's run folder under `runs_dir` whole under another name, then renames it
// (a run folder always has its files); with `seal`, writes it too. A run folder that is there
// already is left as it is.
Result<void> restore_round(const std::filesystem::path& repo_root,
                           const std::filesystem::path& runs_dir, const RestoredRound& round,
                           const std::optional<Seal>& seal);

}  // namespace cocode::run
