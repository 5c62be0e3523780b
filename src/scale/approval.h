// The text a writer approved (docs/security.md, "What an agent receives"): a run started by a
// label or a command gives its agent the issue's title and body as they were when that writer
// approved it — never text someone without write access put there afterwards.
//
// `serve` and the action know that text (the delivery's, the workflow event's); `watch` knows
// only when the approval was. Either way the issue as it is now is taken when no one edited it
// since, or when the last edit of its body and the last rename of its title since were made by
// people who may start cocode (trigger.h). Else the known approved text is taken; without it
// the run is refused, and the issue says once that a writer must approve it again.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/result.h"
#include "github/api.h"
#include "scale/intake.h"

namespace cocode::scale {

struct Approval {
    // When (GitHub's time, ISO 8601): the label applied, the command said; "" when not known
    // (a round restored on a fresh runner, whose issue's text changed since its seal): then
    // the last edits count whenever they were made.
    std::string at;
    long issue = 0;                    // the issue whose text is known (0: none is)
    std::optional<std::string> title;  // the text then, when known
    std::optional<std::string> body;
};

// The approval a workflow event or a webhook delivery is: an `issue_comment`'s comment time,
// else the issue's `updated_at` (labelling it touches it), with the issue's title and body as
// the event carries them. A payload without an issue object is a usage error naming the field.
Result<Approval> approval_of_event(const nlohmann::json& payload, std::string_view source);

struct ApprovedText {
    github::Issue issue;  // with the title and body the agent may receive
    std::string notice;   // one line when the text is not the issue's as it is now, or why
};

// The issue's text a run it approved may give its agent, from `now` (the issue as fetched),
// in the intake's three steps (scale/intake.h):
//   gather_edits     the last edit of its body and rename of its title since the approval,
//                    with their authors' standing (asked of GitHub only when the text
//                    approved is not known to be the text now);
//   decide_approval  pure: the text as it is now, the text as approved (with a notice), or a
//                    refusal with the one reply the issue gets (a writer must approve again);
//   approved_text    the three: a refusal is answered and is an error (code general) saying
//                    who edited what, when.
struct ApprovalEdit {
    std::string part;  // "body" or "title"
    github::TextEdit edit;
    std::optional<Standing> standing;  // of its author (none when GitHub does not say who)
};
Result<std::vector<ApprovalEdit>> gather_edits(github::GitHub& github, const config::Config& config,
                                               const github::Issue& now, const Approval& approval);
struct ApprovalDecision {
    ApprovedText text;  // the text, unless refused (then the issue the reply goes on)
    bool refused = false;
    std::string why;  // refused: one line
    std::optional<Reply> reply;
};
ApprovalDecision decide_approval(const config::Config& config, github::Issue now,
                                 const Approval& approval, const std::vector<ApprovalEdit>& edits);
Result<ApprovedText> approved_text(github::GitHub& github, const config::Config& config,
                                   github::Issue now, const Approval& approval);

}  // namespace cocode::scale
