#include "scale/intake.h"

#include <algorithm>
#include <cctype>

#include "core/terminal_text.h"

namespace cocode::scale {
namespace {

// An agent name or role as GitHub or a command gave it, when it is one a configuration could
// hold; else none of it goes into a reply (comment text is untrusted: no markup, no mentions).
bool plain_name(const std::string& name) {
    return !name.empty() && name.size() <= 40 &&
           std::all_of(name.begin(), name.end(), [](unsigned char c) {
               return std::isalnum(c) || c == '-' || c == '_' || c == '.';
           });
}

std::string quoted_name(const std::string& name) {
    return plain_name(name) ? "`" + name + "`" : "of that name";
}

std::string known_agents(const config::Config& config) {
    std::string out;
    for (const auto& agent : config.agents) out += (out.empty() ? "`" : ", `") + agent.name + "`";
    return out;
}

// The one reply to a refused request. A command in an issue comment keeps the marker it always
// had; the round's other kinds name theirs (a review's id and a comment's may be the same
// number); a new issue's own command has one of its own.
Reply reply_to(const EventRequest& request, std::string text) {
    const std::string key =
        request.kind == EventRequest::Kind::round && request.request.kind != Request::Kind::command
            ? "refused/" + std::string(request_kind_name(request.request.kind)) + "-" +
                  std::to_string(request.request.id)
        : request.comment_id == 0 ? std::string("refused/issue-body")
                                  : "refused/" + std::to_string(request.comment_id);
    return Reply{github::comment_marker(key), std::move(text)};
}

// A label someone may not start cocode with: answered once on the issue (one comment, however
// often it is applied), and taken off, so that it reads as what it is and a writer's labelling
// is a new request. A bot is answered too: a comment labels nothing, so no bot loop can start.
void refuse_label(Intake& out, const EventRequest& request, const config::Config& config,
                  const std::string& whose) {
    const std::string label = request.label.empty() ? config.trigger.label : request.label;
    out.reply = Reply{
        github::comment_marker("refused/label-" + std::to_string(request.issue)),
        "@" + request.login + " the `" + label +
            "` label starts coding agents, so it counts only when someone with write, maintain "
            "or admin permission on this repository applies it, or a bot listed in "
            "`trigger.allowed_bots`" +
            whose + ". It was taken off; a maintainer can apply it again."};
    out.label_to_remove = label;
}

// Whoever asks — applies the label, says a command, asks for changes in a review — may start
// cocode: a bot only when listed, a person with write access. A command is answered once and a
// label once (and taken off); a bot's command is not (a bot answering a bot can go on
// forever), nor a reader's review. The notice says why not.
bool may_ask(Intake& out, const EventRequest& request, const Facts& facts,
             const config::Config& config) {
    std::string& notice = out.decision.notice;
    const std::string who = terminal_safe_line(request.login);
    const bool label = request.kind == EventRequest::Kind::label;
    if (request.login.empty() || !facts.standing) {
        notice = "refused: the event does not say who asked";
        return false;
    }
    const Standing& standing = *facts.standing;
    if (standing.may) return true;
    if (request.bot) {
        notice = "refused: " + who + " is a bot not listed in trigger.allowed_bots";
        if (label) refuse_label(out, request, config, "");
        return false;
    }
    notice = "refused: " + who + " has " + terminal_safe_line(standing.role) +
             " permission; write, maintain or admin is needed";
    const std::string role =
        plain_name(standing.role) ? "`" + standing.role + "`" : "a custom role";
    if (label) {
        refuse_label(out, request, config, " (yours is " + role + ")");
        return false;
    }
    if (!request.commanded) return false;  // a reader's review: not a command, not answered
    out.reply = reply_to(request, "@" + request.login + " thanks — `" + config.trigger.command +
                                      "` starts coding agents, so it runs only for people with "
                                      "write access to this repository (yours is " +
                                      role + "). A maintainer can start it for you.");
    return false;
}

// The pair a round is for: the pull request is on a cocode branch of a configured agent, in
// the repository itself (a fork may name its branch like cocode's). Else why not.
struct RoundPair {
    std::optional<BranchPair> pair;
    std::string why_not;
};
RoundPair round_pair(const EventRequest& request, const Facts& facts,
                     const config::Config& config) {
    const std::string pr = "pull request #" + std::to_string(request.issue);
    const std::string& head_ref = request.head_ref.empty() ? facts.head_ref : request.head_ref;
    const std::string& head_repository =
        request.head_ref.empty() ? facts.head_repository : request.head_repository;
    const auto pair = pair_of_branch(head_ref, config.branch_prefix);
    if (!pair || !config.find_agent(pair->agent))
        return {std::nullopt, "nothing to do: " + pr + " is not on a branch of cocode's (" +
                                  terminal_safe_line(head_ref) + ")"};
    if (!head_repository.empty() && head_repository != facts.repository)
        return {std::nullopt, "nothing to do: " + pr + " is from another repository (" +
                                  terminal_safe_line(head_repository) + ")"};
    return {pair, ""};
}

Intake round_intake(const EventRequest& request, const Facts& facts, const config::Config& config) {
    Intake out;
    Decision& decision = out.decision;
    const std::string pr = "pull request #" + std::to_string(request.issue);
    const auto [pair, why_not] = round_pair(request, facts, config);
    if (!pair) {
        decision.notice = why_not;
        return out;
    }
    if (request.request.kind == Request::Kind::check_suite) {
        if (!config.review.fix_checks) {
            decision.notice =
                "nothing to do: a check failed on " + pr + ", and review.fix_checks is off";
            return out;
        }
    } else if (!may_ask(out, request, facts, config)) {
        return out;
    }
    // Seen at once: 👀 where GitHub has reactions (not on a review itself, nor a check).
    if (request.request.kind == Request::Kind::command)
        out.reaction = Reaction{Reaction::On::comment, request.request.id};
    else if (request.request.kind == Request::Kind::review_comment)
        out.reaction = Reaction{Reaction::On::review_comment, request.request.id};
    decision.run = true;
    decision.round = true;
    decision.issue = pair->issue;
    decision.agents = {pair->agent};
    decision.pull = request.issue;
    decision.request = request.request;
    decision.instruction = request.instruction;
    static constexpr std::string_view kWhat[] = {"", "a command", "a review", "a review comment",
                                                 "a failed check suite"};
    decision.notice = pr + " (issue #" + std::to_string(pair->issue) + ", agent " + pair->agent +
                      "): a round, for " +
                      std::string(kWhat[static_cast<int>(request.request.kind)]) +
                      (request.login.empty() ? "" : " by " + terminal_safe_line(request.login));
    return out;
}

}  // namespace

Standing standing_from(const config::TriggerConfig& trigger, const std::string& login, bool bot,
                       const std::optional<github::CollaboratorPermission>& permission) {
    if (bot) {
        const auto& bots = trigger.allowed_bots;
        return Standing{std::find(bots.begin(), bots.end(), login) != bots.end(), "bot"};
    }
    if (!permission) return Standing{false, "none"};
    return Standing{may_command(*permission), permission->role_name};
}

namespace {

Result<Standing> standing_asked(const Askers& ask, const config::TriggerConfig& trigger,
                                const std::string& login, bool bot) {
    if (bot) return standing_from(trigger, login, bot, std::nullopt);
    auto permission = ask.permission(login);
    if (!permission) return std::move(permission).error();
    return standing_from(trigger, login, bot, *permission);
}

Askers askers_of(github::GitHub& github) {
    return Askers{
        github.repo().full(),
        [&github](const std::string& login) { return github.collaborator_permission(login); },
        [&github](long number) { return github.pull_request(number); },
        [&github](long issue, const std::string& label) {
            return latest_request(github, issue, label);
        }};
}

// The request a label is decided on: as it came, or its latest labelling when gathered.
EventRequest as_labelled(const EventRequest& request, const Facts& facts,
                         const config::Config& config) {
    if (request.kind != EventRequest::Kind::label || !facts.labelling || facts.labelling->id == 0)
        return request;
    EventRequest latest =
        label_event(request.issue, *facts.labelling,
                    request.label.empty() ? config.trigger.label : request.label, config.trigger);
    latest.repository = request.repository;
    return latest;
}

bool other_repository(const EventRequest& request, const std::string& ours) {
    return !request.repository.empty() && !ours.empty() && request.repository != ours;
}

}  // namespace

Result<Standing> standing_of(github::GitHub& github, const config::TriggerConfig& trigger,
                             const std::string& login, bool bot) {
    return standing_asked(askers_of(github), trigger, login, bot);
}

Result<Facts> gather(const EventRequest& request, const config::Config& config,
                     github::GitHub& github, Labelling labelling) {
    return gather(request, config, askers_of(github), labelling);
}

Result<Facts> gather(const EventRequest& given, const config::Config& config, const Askers& ask,
                     Labelling labelling) {
    Facts facts;
    facts.repository = ask.repository;
    if (given.kind == EventRequest::Kind::none || other_repository(given, ask.repository))
        return facts;
    if (given.kind == EventRequest::Kind::label && labelling == Labelling::latest &&
        ask.labelling) {
        auto latest =
            ask.labelling(given.issue, given.label.empty() ? config.trigger.label : given.label);
        if (!latest) return std::move(latest).error();
        facts.labelling = *latest;
        if (latest->id == 0) return facts;  // gone again: nobody to ask about
    }
    const EventRequest request = as_labelled(given, facts, config);
    const bool round = request.kind == EventRequest::Kind::round;
    if (round && request.head_ref.empty()) {
        // A comment's event does not carry its pull request's branch.
        auto pull = ask.pull_request(request.issue);
        if (!pull) return std::move(pull).error();
        facts.head_ref = pull->head_ref;
        facts.head_repository = pull->head_repository;
    }
    // Nobody to ask about: no author, a failed check suite, a pull request not a run's.
    if (request.login.empty() || (round && (request.request.kind == Request::Kind::check_suite ||
                                            !round_pair(request, facts, config).pair)))
        return facts;
    auto standing = standing_asked(ask, config.trigger, request.login, request.bot);
    if (!standing) return std::move(standing).error();
    facts.standing = *standing;
    return facts;
}

namespace {

// What runs of a request for the repository cocode works for, and what is said of it.
Intake decided(const EventRequest& request, const Facts& facts, const config::Config& config) {
    Intake out;
    Decision& decision = out.decision;
    decision.issue = request.issue;
    if (facts.local_store) {
        decision.run = request.kind == EventRequest::Kind::label;
        decision.verb = decision.run ? request.verb : check::PlanVerb::none;
        decision.notice = decision.run ? "issue #" + std::to_string(request.issue) + " labelled '" +
                                             config.trigger.label + "'"
                                       : "nothing to do: " + terminal_safe_line(request.why_not);
        return out;
    }
    if (request.kind == EventRequest::Kind::round) return round_intake(request, facts, config);
    const std::string who = terminal_safe_line(request.login);
    switch (request.kind) {
        case EventRequest::Kind::none:
            decision.notice = "nothing to do: " + terminal_safe_line(request.why_not);
            return out;
        case EventRequest::Kind::label:
            if (!may_ask(out, request, facts, config)) return out;
            decision.run = true;
            decision.verb = request.verb;
            if (!request.login.empty()) decision.by = "@" + request.login;
            decision.notice =
                "issue #" + std::to_string(request.issue) + " labelled '" + config.trigger.label +
                "'" +
                (request.verb == check::PlanVerb::none ? "" : ": plan rounds (trigger.plan)") +
                " by " + who;
            return out;
        case EventRequest::Kind::command:
        case EventRequest::Kind::round:
            break;
    }
    if (!may_ask(out, request, facts, config)) return out;
    for (const auto& name : request.agents) {
        if (config.find_agent(name)) continue;
        out.reply =
            reply_to(request, "@" + request.login + " there is no agent " + quoted_name(name) +
                                  " in this repository's cocode configuration; the "
                                  "agents are " +
                                  known_agents(config) + ".");
        decision.notice =
            "refused: no agent '" + terminal_safe_line(name) + "' in the configuration";
        return out;
    }
    // A plan command says what it acts on: an approval names the plan's hash (a plan changed
    // since cannot be approved by accident), a revision says what to change.
    const std::string missing =
        request.verb == check::PlanVerb::approve && request.plan_hash.empty()
            ? "name the plan you approve by its hash, as its comment shows it: `" +
                  config.trigger.command + " approve AGENT HASH`."
        : request.verb == check::PlanVerb::revise && request.instruction.empty()
            ? "say what to change (or answer the plan's questions) in the same comment, "
              "before `" +
                  config.trigger.command + " revise`."
            : std::string();
    if (!missing.empty()) {
        out.reply = reply_to(request, "@" + request.login + " " + missing);
        decision.notice = "refused: " + config.trigger.command + " " +
                          std::string(check::plan_verb_name(request.verb)) + " from " + who +
                          " without " +
                          (request.verb == check::PlanVerb::approve ? "a hash" : "words");
        return out;
    }
    // 👀 on the comment; on the issue itself for a command in its body.
    out.reaction = request.comment_id == 0 ? Reaction{Reaction::On::issue, request.issue}
                                           : Reaction{Reaction::On::comment, request.comment_id};
    decision.run = true;
    decision.agents = request.agents;
    decision.verb = request.verb;
    decision.plan_hash = request.plan_hash;
    decision.instruction = request.instruction;
    decision.by = "@" + request.login;
    decision.notice = "issue #" + std::to_string(request.issue) + ": " + config.trigger.command +
                      (request.verb == check::PlanVerb::none
                           ? ""
                           : " " + std::string(check::plan_verb_name(request.verb))) +
                      " from " + who;
    return out;
}

}  // namespace

Intake intake(const EventRequest& given, const Facts& facts, const config::Config& config) {
    if (other_repository(given, facts.repository)) {
        Intake out;
        out.decision.issue = given.issue;
        out.decision.notice = "nothing to do: the event is for " +
                              terminal_safe_line(given.repository) + ", not " +
                              terminal_safe_line(facts.repository);
        return out;
    }
    Intake out;
    if (given.kind == EventRequest::Kind::label && facts.labelling && facts.labelling->id == 0) {
        out.decision.issue = given.issue;
        out.decision.notice =
            "nothing to do: the label '" +
            terminal_safe_line(given.label.empty() ? config.trigger.label : given.label) +
            "' is no longer on issue #" + std::to_string(given.issue);
    } else {
        const EventRequest request = as_labelled(given, facts, config);
        out = decided(request, facts, config);
        Decision& decision = out.decision;
        decision.approved_at = request.at;
        if (request.kind == EventRequest::Kind::label)
            decision.request = {Request::Kind::label, facts.labelling ? facts.labelling->id : 0};
        else if (request.kind == EventRequest::Kind::command)
            decision.request = {Request::Kind::command, request.comment_id};
    }
    out.decision.refresh_gate = given.gate && config.gate.approvals > 0;
    out.decision.learn_outcomes = given.outcome;
    return out;
}

Result<void> answer(github::GitHub& github, long issue, const Reply& reply) {
    auto posted = github.upsert_comment(issue, reply.marker, reply.text);
    if (!posted) return std::move(posted).error();
    return {};
}

Result<void> act(const Intake& taken, long issue, github::GitHub& github) {
    if (taken.reply)
        if (auto posted = answer(github, issue, *taken.reply); !posted) return posted;
    if (!taken.label_to_remove.empty())
        if (auto removed = github.remove_label(issue, taken.label_to_remove); !removed)
            return removed;
    if (taken.reaction) {
        const Reaction& r = *taken.reaction;
        auto made = r.on == Reaction::On::issue ? github.add_reaction(r.id, "eyes")
                    : r.on == Reaction::On::comment
                        ? github.add_comment_reaction(r.id, "eyes")
                        : github.add_review_comment_reaction(r.id, "eyes");
        if (!made) return made;
    }
    return {};
}

Result<Decision> decide(const EventRequest& request, const config::Config& config,
                        github::GitHub& github, Labelling labelling) {
    auto facts = gather(request, config, github, labelling);
    if (!facts) return std::move(facts).error();
    Intake taken = intake(request, *facts, config);
    if (auto acted = act(taken, request.issue, github); !acted) return std::move(acted).error();
    return std::move(taken.decision);
}

}  // namespace cocode::scale
