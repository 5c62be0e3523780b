// What starts cocode from a GitHub event (the action's `plan --event`, `serve`): an issue
// labelled with the trigger label, or a comment command (`/cocode`, `/cocode claude codex`);
// and on a pull request cocode opened, a round (docs/review.md): a review asking for changes, a
// review, review comment or comment that says the command, or — with review.fix_checks — a
// check suite that failed. A command or a review asking for changes counts
// only from a person whose repository permission is write, maintain or admin — asked of GitHub,
// not guessed from the event's author_association — or from a bot the configuration lists.
// A refused command gets one polite reply (one per comment, however often the event is
// replayed); an accepted one gets 👀 on the comment.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/work_plan.h"
#include "config/config.h"
#include "core/result.h"
#include "github/api.h"
#include "scale/claim.h"

namespace cocode::scale {

struct EventRequest {
    enum class Kind { none, label, command, round };
    Kind kind = Kind::none;
    long issue = 0;  // for a round: the pull request's number (the issues API's, too)
    std::vector<std::string> agents;  // named after the command
    long long comment_id = 0;
    std::string login;  // who asked: the comment's author, who applied the label
    bool bot = false;
    std::string label;       // kind label: the label applied (the trigger label)
    std::string repository;  // OWNER/NAME, from the payload
    std::string why_not;     // kind none: why the event asks for nothing
    // Kind round: what asks for it (its id is what a claim answers), the pull request's
    // branch and the repository it is in (empty when the event does not say: a comment's), and
    // the words said after the command (hidden text left out).
    Request request;
    bool commanded = false;  // the command was said: a refusal is answered
    std::string head_ref;
    std::string head_repository;
    std::string instruction;
    // A plan command on an issue (docs/review.md, "Plans"): `plan`, `approve`, `revise` or
    // `reject` (kind command), the plan's hash an approval names, and for `revise` the words
    // that go with it (in `instruction`). A label with trigger.plan asks for a plan too.
    check::PlanVerb verb = check::PlanVerb::none;
    std::string plan_hash;
    // The merge gate (gate.approvals) of the pull request `issue` may have changed: a review
    // submitted or dismissed, an approve-merge command, a push (docs/review.md, "The gate").
    bool gate = false;
    // A pull request closed, merged or not: what became of the agents' pull requests is
    // learnt again (check/outcome.h).
    bool outcome = false;
    // When it was asked (GitHub's time), what the issue's text is approved as of: a comment's
    // creation; else the issue's last change as the event carries it (a labelling's payload
    // has no time of its own; an opened issue's is its creation); a labelling found in the
    // issue's events, its own.
    std::string at;
};

// When the event `payload` was asked (EventRequest::at): its comment's creation, else its
// issue's updated_at. "" when it says neither.
std::string asked_at(const nlohmann::json& payload);

// A plan command in a comment's body, when it says one: `/cocode plan [agents]`,
// `/cocode approve [agent] [hash]`, `/cocode reject [agent]` on its first line, or
// `/cocode revise [agent]` on its first line (the words after it go with it) or on its last
// (the words before it).
struct PlanCommand {
    check::PlanVerb verb = check::PlanVerb::none;
    std::vector<std::string> agents;
    std::string hash;
    std::string words;  // revise: what to change, hidden text left out
};
std::optional<PlanCommand> plan_command(std::string_view body, const std::string& command);

// The command `text` (a comment's, or a new issue's body) says, when it says one, read into
// `request` (kind command, `commanded`): a plan command (verb, agents, hash, words), or the
// command that runs agents, with the agents named after it. False when it says none.
bool read_command(std::string_view text, const config::TriggerConfig& trigger,
                  EventRequest& request);

// The words after the command when `body` says it (the first word of its first line that is
// not blank), hidden text left out and trimmed; nullopt when it does not say it.
std::optional<std::string> words_after_command(std::string_view body, const std::string& command);

// What a comment, review comment or review on a cocode pull request asks for, whatever brought
// it (a webhook, `watch`'s poll, `continue --event`): a round, with the words said after the
// command (`commanded`), when it says the command or requests changes; nothing when it is an
// approve-merge (the merge gate's alone) or asks for nothing (`why_not`).
struct PullAsk {
    bool round = false;
    bool commanded = false;
    bool approve_merge = false;
    std::string instruction;
    std::string why_not;
};
PullAsk pull_ask(std::string_view body, bool changes_requested, const std::string& command);

// What a review, review comment or comment on `pull` that `watch`'s poll found asks for, read
// as read_event reads the event of the same (a webhook's, `continue --event`'s): a round
// request for decide, or nullopt when it asks for no round (an approve-merge, no command, no
// changes requested). `author_is_bot`: GitHub typed its author a bot.
std::optional<EventRequest> polled_request(const github::PullRequest& pull, const Request& request,
                                           const std::string& login, bool author_is_bot,
                                           std::string_view body, bool changes_requested,
                                           const config::TriggerConfig& trigger);

// What `watch`'s poll finds, read as read_event reads the delivery of the same:
// - a comment on issue `issue` saying a command (a plan command too), nullopt when it says none;
// - a new issue whose body's first line is the command, from its author (a plan, not an
//   answer to one: kind none, why_not);
// - a failed check run `check_id` on `pull` (the suite's failure, as check_suite's).
std::optional<EventRequest> polled_comment(long issue, const github::Comment& comment,
                                           const config::TriggerConfig& trigger);
std::optional<EventRequest> polled_issue_body(const github::Issue& issue,
                                              const config::TriggerConfig& trigger);
EventRequest polled_failed_check(const github::PullRequest& pull, long long check_id);

// The pair whose branch `branch` is (`<branch_prefix><issue>-<agent>`), when it is one.
struct BranchPair {
    long issue = 0;
    std::string agent;
};
std::optional<BranchPair> pair_of_branch(std::string_view branch, std::string_view prefix);

// Reads an `issues` (labeled; opened, with the command in the issue's body: a command of its
// author, comment_id 0), `issue_comment` (created), `pull_request_review` (submitted,
// dismissed), `pull_request_review_comment` (created), `check_suite` (completed) or
// `pull_request` (synchronize, for the gate) payload. `event_name`
// is GITHUB_EVENT_NAME (or the X-GitHub-Event header); empty: told from the payload's shape.
// Any other event, or a payload that is not one, is a usage error naming what was expected.
Result<EventRequest> read_event(std::string_view event_name, const nlohmann::json& payload,
                                const config::TriggerConfig& trigger);
// The events read_event reads.
bool event_read(std::string_view event_name);

// The request a labelling is (`watch` finds it in the issue's events, `serve` is told of it):
// who applied `label` to `issue`, for the one decision on it.
EventRequest label_event(long issue, const LabelRequest& labelled, const std::string& label,
                         const config::TriggerConfig& trigger);

// write, maintain, admin (by role), or a base permission of write or admin.
bool may_command(const github::CollaboratorPermission& permission);

// Whether `login` may start cocode: a bot listed in trigger.allowed_bots, or a person whose
// permission may_command (asked of GitHub). `role` is theirs (a bot's: "bot").
// (scale/intake.h: standing_from decides it, gather asks GitHub.)
struct Standing {
    bool may = false;
    std::string role;
    bool operator==(const Standing&) const = default;
};

struct Decision {
    bool run = false;
    long issue = 0;
    std::vector<std::string> agents;  // empty: the configuration's default agents
    std::string notice;               // one line for the log: what was decided and why
    // A round (run is true): the pair's pull request, the agent, the claim's request and the
    // words to add to what the pull request says.
    bool round = false;
    long pull = 0;
    Request request;
    std::string instruction;
    // A plan command (EventRequest::verb), its hash, and who said it ("@login").
    check::PlanVerb verb = check::PlanVerb::none;
    std::string plan_hash;
    std::string by;
    // What the issue's text is approved as of (scale/approval.h): when what runs was asked.
    std::string approved_at;
    // Besides what runs, whatever the event is: the pull request's merge gate is read again
    // (gate.approvals: a review, an approve-merge, a push), and what became of the agents'
    // pull requests is learnt again (a pull request closed).
    bool refresh_gate = false;
    bool learn_outcomes = false;
};

}  // namespace cocode::scale
