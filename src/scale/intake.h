// The intake: the one door from "GitHub asked something" to "cocode does something". Every
// entry point — a webhook delivery (`serve`), `watch`'s poll, the action's `plan --event`,
// `continue --event`, `plan` — reads what it was told into an EventRequest (scale/trigger.h),
// then goes through the same three steps, each in its own place:
//   gather  the facts the event does not carry: the asker's standing (their permission, asked
//           of GitHub; a bot's, from the configuration), a round's pull request branch, and
//           for `serve` a label's latest labelling;
//   intake  a pure function of the request, those facts and the configuration: the work (an
//           issue's runs, a plan verb, a round) or nothing with its reason, plus the reply to
//           post and the reaction to make — tabled in tests/unit/intake_test.cpp;
//   act     posts the reply, makes the reaction, takes a refused label off.
// decide() is the three in a row, for callers that dispatch what it returns.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "config/config.h"
#include "core/result.h"
#include "github/api.h"
#include "scale/trigger.h"

namespace cocode::scale {

// What the decision needs that the event did not say. `standing` is gathered for whoever asks,
// but for a failed check suite (nobody asks) and an event without an author.
struct Facts {
    std::optional<Standing> standing;
    std::string head_ref;         // a round's pull request branch, when the event lacked it
    std::string head_repository;  // … and the repository that branch is in
    std::string repository;       // OWNER/NAME of the repository cocode works for
    // A local issue store (`plan --event … --issues DIR`): no people to ask; a label is the
    // person's at the terminal, and nothing else can be acted on.
    bool local_store = false;
    // A label's latest labelling (who applied it last, and when), gathered where a label is
    // decided on it (Labelling::latest); id 0: the label is gone again.
    std::optional<LabelRequest> labelling;
};

// What a label is decided on. `as_delivered`: the event's own labelling (its sender), as the
// action's `plan --event` decides each workflow run's event; `latest`: who applied it last,
// asked of the issue's events — `serve`, whose claim on the issue is for that labelling (a
// delivery's label re-applied since by someone else is theirs; one taken off since, nothing).
// `watch` reads the latest labelling itself (label_event).
enum class Labelling { as_delivered, latest };

// A comment cocode posts once on the issue or pull request (upserted under its marker, however
// often the event comes again).
struct Reply {
    std::string marker;
    std::string text;
};
struct Reaction {
    enum class On { issue, comment, review_comment };
    On on = On::comment;
    long long id = 0;  // the issue's number, the comment's or review comment's id
    bool operator==(const Reaction&) const = default;
};

struct Intake {
    Decision decision;
    std::optional<Reply> reply;
    std::optional<Reaction> reaction;  // 👀: seen, and taken
    std::string label_to_remove;       // a label someone may not start cocode with
};

// Who `login` is to cocode: a bot by trigger.allowed_bots, a person by the permission GitHub
// gives them (`permission`, nullopt for a bot).
Standing standing_from(const config::TriggerConfig& trigger, const std::string& login, bool bot,
                       const std::optional<github::CollaboratorPermission>& permission);

// standing_from with the permission asked of GitHub (a bot's is not asked).
Result<Standing> standing_of(github::GitHub& github, const config::TriggerConfig& trigger,
                             const std::string& login, bool bot);

// What gather may ask: of GitHub (the overload below), or of a table (tests/unit).
struct Askers {
    std::string repository;  // OWNER/NAME
    std::function<Result<github::CollaboratorPermission>(const std::string& login)> permission;
    std::function<Result<github::PullRequest>(long number)> pull_request;
    std::function<Result<LabelRequest>(long issue, const std::string& label)> labelling;
};
// Nothing is asked for a request for another repository than the askers'.
Result<Facts> gather(const EventRequest& request, const config::Config& config, const Askers& ask,
                     Labelling labelling = Labelling::as_delivered);
Result<Facts> gather(const EventRequest& request, const config::Config& config,
                     github::GitHub& github, Labelling labelling = Labelling::as_delivered);

// Decides on a request: nothing for another repository than the one cocode works for (but the
// gate and outcomes it touches, for the one it works for); a label runs when who applied it
// (its latest labelling, where gathered) may command (else it is answered
// once and taken off); a command runs when its author may command and names only configured
// agents, else it is answered once, politely, and nothing runs. Who may command: a person
// whose permission is write, maintain or admin, or a bot listed in trigger.allowed_bots. An
// accepted command gets 👀. A round runs only on a pull request of a cocode branch in the
// repository itself (not a fork's), for a configured agent; a review asking for changes or a
// command by someone who may command (a refused command is answered once, a review is not); a
// failed check suite only with review.fix_checks.
Intake intake(const EventRequest& request, const Facts& facts, const config::Config& config);

Result<void> act(const Intake& taken, long issue, github::GitHub& github);

// A reply posted on issue or pull request `issue`, once (upserted under its marker).
Result<void> answer(github::GitHub& github, long issue, const Reply& reply);

// gather → intake → act.
Result<Decision> decide(const EventRequest& request, const config::Config& config,
                        github::GitHub& github, Labelling labelling = Labelling::as_delivered);

}  // namespace cocode::scale
