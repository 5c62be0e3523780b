// A plan of work (docs/review.md, "Plans"): what an agent in a plan round answers, in the form
// its prompt documents, and what of it becomes the code round's rules once a person approves
// it. (Not scale/plan.h, which is the matrix of runs a workflow fans out over.)
//
//   ## Questions      what the agent needs answered (listed first on the issue)
//   ## Files          paths or globs it will touch: the approved plan's allowed_paths
//   ## Tests          verify commands to add or run: joined to check.verify when allowed
//   ## Steps          what it will do
//
// Each section's items are list lines (`- `, `* `, `1. `). A plan without files or steps, or
// with a file that is no path of the repository (absolute, `..`, a broken glob), cannot be
// read: it is shown as written, with the reason, and counts as no plan. The prompt that asks
// for this form is agent/prepare.cpp's (plan_instructions).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/verdict.h"
#include "run/seal.h"

namespace cocode::check {

// The plan as read, and its hash: the first 12 hex digits of SHA-256 over its four lists,
// so that the same plan written with other spacing has the same hash.
struct PlanRead {
    std::optional<WorkPlan> plan;
    std::string why_not;  // when it could not be read
};
PlanRead read_work_plan(std::string_view text);

// Which of the plan's test commands join the configured verify commands: each must start with
// one of `prefixes` (the whole prefix, then a space or the end) and hold none of the shell's
// control characters (`; | & $ \` < >`, a newline), so that `make test TESTS=x` may follow
// `make test` but `make test; curl … | sh` may not. The others are left out, each with why.
struct BoundVerify {
    std::vector<std::string> kept;
    std::vector<std::string> left_out;  // "curl x | sh (not a configured prefix)"
};
BoundVerify bind_verify(const std::vector<std::string>& tests,
                        const std::vector<std::string>& prefixes);

// The sealed rules of an approved plan: its files, and its tests as bind_verify keeps them.
run::SealedPlan seal_plan(const WorkPlan& plan, const std::vector<std::string>& prefixes,
                          const std::string& approved_by);

// The `plan` check of a code round held to an approved plan: every touched path (both ends of
// a rename) matches one of the plan's files; those that do not are named.
CheckItem plan_scope_check(const run::SealedPlan& plan, const std::vector<git::FileChange>& files);

// The feedback of the code round an approval starts: the plan, fenced as data, and that the
// check holds the agent to its files.
std::string approved_plan_feedback(const WorkPlan& plan, const std::string& approved_by);

// What a person may do with a pair's plan (`/cocode approve|revise|reject`, `continue
// --approve|--revise|--reject`), decided from the pair's newest round alone:
//   approve  its newest round is a plan round that read as a plan, judged, not rejected, and
//            the approval names that plan's hash (`hash`; nullopt from the terminal, where the
//            plan shown is the one approved);
//   revise   its newest round is a plan round (a rejected one too: a new plan);
//   reject   its newest round is a plan round not rejected already.
// Anything else does nothing, with one line saying why.
enum class PlanVerb { none, plan, approve, revise, reject };
// "plan", "approve", "revise", "reject" ("" for none), as commands and flags say them.
std::string_view plan_verb_name(PlanVerb verb);
std::optional<PlanVerb> parse_plan_verb(std::string_view name);
// approve, revise or reject: what a person does with a plan that is there (not a new plan).
inline bool answers_plan(PlanVerb verb) {
    return verb == PlanVerb::approve || verb == PlanVerb::revise || verb == PlanVerb::reject;
}
struct PlanState {
    bool any_round = false;          // the pair has run at all
    int round = 0;                   // its newest round
    bool plan_round = false;         // … is a plan round
    std::optional<Verdict> verdict;  // … and its verdict, when judged
};
struct PlanDecision {
    bool go = false;
    std::string why_not;
};
PlanDecision decide_plan_verb(PlanVerb verb, const std::optional<std::string>& hash,
                              const PlanState& state);

}  // namespace cocode::check
