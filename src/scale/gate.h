// The merge gate of a pull request, refreshed when something it reads may have changed: a
// review, an approve-merge command, a push (serve, watch, `cocode-dispatch gate`), or a
// verdict published (check/run_check.h). The decision itself is check/gate.h's.
#pragma once

#include <string>

#include "check/gate.h"
#include "config/config.h"
#include "core/result.h"
#include "github/api.h"

namespace cocode::scale {

struct GateRefresh {
    bool pair = false;  // the pull request is a pair's (its branch is cocode's, in this repository)
    check::GateDecision decision;
    std::string notice;  // one line: what was set, or why nothing was
};

// Reads the pull request's gate and, unless it reads as it did when last written (`last`: its
// head and description then), sets the status and edits the comment. Off (gate.approvals 0),
// or not a pair's pull request: nothing, said in the notice. `pull` as GitHub lists it (watch)
// or gives it (pull_request(n): serve, `cocode-dispatch gate`).
Result<GateRefresh> refresh_gate(github::GitHub& github, const config::Config& config,
                                 const github::PullRequest& pull, const std::string& last = "");
// refresh_gate of pull request `number`, as GitHub gives it now (serve, `cocode-dispatch gate`).
Result<GateRefresh> refresh_gate_of(github::GitHub& github, const config::Config& config,
                                    long number);

// Who asks for a run at a terminal, for the gate (whose approval does not count): "@login" of
// whoever the token acts as; "" when GitHub does not say.
Result<std::string> requester_of(github::GitHub& github);

// What `last` is for a refresh: the head and the description written.
std::string gate_written(const github::PullRequest& pull, const check::GateDecision& decision);

}  // namespace cocode::scale
