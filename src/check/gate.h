// The merge gate (docs/review.md, "The gate"): with gate.approvals N, each agent pull request's
// head gets a second commit status, `cocode/gate`, green only when that head has a cocode PASS
// and approvals from N distinct people with write access other than the person who asked for
// the run. An approval counts for the commit it was given on (a push makes it stale); a
// writer's `/cocode approve-merge <sha>` on the pull request counts as one. Its description,
// and one comment on the pull request edited in place, say what is missing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "github/api.h"

namespace cocode::check {

// One person's word on the pull request: a review (approved; changes requested or dismissed
// take an approval back), or an approve-merge command.
struct GateVote {
    std::string login;
    std::string sha;  // the commit it was given on (an approve-merge may name a short one)
    bool approve = false;
    bool may_write = false;  // write, maintain or admin, asked of GitHub
    bool bot = false;
};

struct GateInput {
    int needed = 0;
    std::string head;
    std::optional<bool> pass;     // the pair's verdict on `head`; none: not judged on it
    std::string requester;        // "@login", when known
    std::vector<GateVote> votes;  // oldest first
};

struct GateDecision {
    std::string state;        // pending, success, failure
    std::string description;  // "PASS ✓ · approvals 1 of 2 (requester's does not count)"
    std::vector<std::string> counted;  // the logins whose approval counts
    bool requester_approved = false;
    int stale = 0;  // approvals given on another commit
};

// The gate from its inputs: a FAIL on the head is red; a PASS with enough approvals on the
// head (each person's latest word on it; writers only, no bots, not the requester) is green;
// anything else is pending.
GateDecision decide_gate(const GateInput& input);

// What `/cocode approve-merge <sha>` names, when the comment's first line says it.
std::optional<std::string> approve_merge_sha(std::string_view body, const std::string& command);

// The gate of pull request `pull` of the pair (issue, agent), read from GitHub: the verdict
// the pair published (its head and requester), the reviews, the approve-merge commands and
// each voter's permission.
Result<GateDecision> read_gate(github::GitHub& github, const config::Config& config,
                               const github::PullRequest& pull, long issue,
                               const std::string& agent);

// Sets `cocode/gate` on the pull request's head and edits the gate's comment on it (one per
// pull request, made once, edited in place).
Result<void> write_gate(github::GitHub& github, const config::Config& config,
                        const github::PullRequest& pull, const std::string& agent,
                        const GateDecision& decision);

}  // namespace cocode::check
