#include "scale/trigger.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "check/gate.h"
#include "core/terminal_text.h"
#include "core/visible_text.h"

namespace cocode::scale {
namespace {

using json = nlohmann::json;

std::string first_line(std::string_view body) {
    std::istringstream in{std::string(body)};
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) return line;
    }
    return {};
}

std::vector<std::string> words(std::string_view line) {
    std::istringstream in{std::string(line)};
    std::vector<std::string> out;
    for (std::string word; in >> word;) out.push_back(word);
    return out;
}

Result<long> issue_number(const json& payload) {
    if (!payload.contains("issue") || !payload["issue"].is_object() ||
        !payload["issue"].contains("number") || !payload["issue"]["number"].is_number_integer())
        return Error::usage("event: field 'issue.number': expected the issue's number");
    return payload["issue"]["number"].get<long>();
}

std::string text_field(const json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string()
               ? object[key].get<std::string>()
               : std::string();
}

const json& object_field(const json& object, const char* key) {
    static const json none;
    return object.is_object() && object.contains(key) && object[key].is_object() ? object[key]
                                                                                 : none;
}

Result<long long> id_field(const json& object, const char* name, const char* what) {
    if (!object.is_object() || !object.contains("id") || !object["id"].is_number_integer())
        return Error::usage(std::string("event: field '") + name + ".id': expected the " + what +
                            "'s id");
    return object["id"].get<long long>();
}

void read_author(const json& object, EventRequest& request, const char* field = "user") {
    const json& user = object_field(object, field);
    request.login = text_field(user, "login");
    request.bot = github::bot_account(request.login, text_field(user, "type") == "Bot");
}

// The pull request of a pull_request_review(_comment) payload: its number, branch and the
// repository the branch is in.
Result<void> read_pull(const json& payload, EventRequest& request) {
    const json& pull = object_field(payload, "pull_request");
    if (!pull.contains("number") || !pull["number"].is_number_integer())
        return Error::usage(
            "event: field 'pull_request.number': expected the pull request's number");
    request.issue = pull["number"].get<long>();
    const json& head = object_field(pull, "head");
    request.head_ref = text_field(head, "ref");
    request.head_repository = text_field(object_field(head, "repo"), "full_name");
    if (request.head_ref.empty())
        return Error::usage(
            "event: field 'pull_request.head.ref': expected the pull request's branch");
    return {};
}

// An agent name as the command gave it, when it is one a configuration could hold; else none
// of it goes into the reply (comment text is untrusted: no markup, no mentions).
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

Result<void> reply_once(github::GitHub& github, const EventRequest& request,
                        const std::string& text) {
    // A command in an issue comment keeps the marker it always had; the round's other kinds
    // name theirs (a review's id and a comment's may be the same number).
    const std::string marker = github::comment_marker(
        request.kind == EventRequest::Kind::round && request.request.kind != Request::Kind::command
            ? "refused/" + std::string(request_kind_name(request.request.kind)) + "-" +
                  std::to_string(request.request.id)
        : request.comment_id == 0 ? std::string("refused/issue-body")  // the issue's own command
                                  : "refused/" + std::to_string(request.comment_id));
    auto posted = github.upsert_comment(request.issue, marker, text);
    if (!posted) return std::move(posted).error();
    return {};
}

// An `issue_comment` (created): on a pull request a round (or an approve-merge, for the gate);
// on an issue a plan command or the command that runs agents.
Result<EventRequest> read_issue_comment(const json& payload, const config::TriggerConfig& trigger,
                                        EventRequest request) {
    const std::string action = text_field(payload, "action");
    auto number = issue_number(payload);
    if (!number) return std::move(number).error();
    request.issue = *number;
    if (!payload.contains("comment") || !payload["comment"].is_object() ||
        !payload["comment"].contains("id") || !payload["comment"]["id"].is_number_integer())
        return Error::usage("event: field 'comment.id': expected the comment's id");
    const json& comment = payload["comment"];
    request.comment_id = comment["id"].get<long long>();
    read_author(comment, request);
    if (action != "created") {
        request.why_not = "comment " + action + ", not created";
    } else if (payload["issue"].contains("pull_request")) {
        // On a pull request the command asks for a round; the words after it are for
        // the agent. The branch is asked of GitHub: the event does not carry it.
        const PullAsk asked = pull_ask(text_field(comment, "body"), false, trigger.command);
        request.gate = asked.approve_merge;  // the gate reads it from the pull request
        if (asked.round) {
            request.kind = EventRequest::Kind::round;
            request.request = {Request::Kind::command, request.comment_id};
            request.commanded = true;
            request.instruction = asked.instruction;
        } else {
            request.why_not = asked.why_not;
        }
    } else if (!read_command(text_field(comment, "body"), trigger, request)) {
        request.why_not = "the comment is not a " + trigger.command + " command";
    }
    return request;
}

}  // namespace

bool read_command(std::string_view text, const config::TriggerConfig& trigger,
                  EventRequest& request) {
    if (auto verb = plan_command(text, trigger.command)) {
        request.kind = EventRequest::Kind::command;
        request.commanded = true;
        request.verb = verb->verb;
        request.agents = verb->agents;
        request.plan_hash = verb->hash;
        request.instruction = verb->words;
        return true;
    }
    const auto said = words(first_line(text));
    if (said.empty() || said.front() != trigger.command) return false;
    request.kind = EventRequest::Kind::command;
    request.commanded = true;
    request.agents.assign(said.begin() + 1, said.end());
    return true;
}

Result<EventRequest> read_event(std::string_view event_name, const json& payload,
                                const config::TriggerConfig& trigger) {
    if (!payload.is_object())
        return Error::usage("event: expected a JSON object (a webhook payload)");
    std::string name(event_name);
    if (name.empty()) name = payload.contains("comment") ? "issue_comment" : "issues";
    EventRequest request;
    if (payload.contains("repository") && payload["repository"].is_object())
        request.repository = text_field(payload["repository"], "full_name");
    const std::string action = text_field(payload, "action");

    if (name == "issues") {
        auto number = issue_number(payload);
        if (!number) return std::move(number).error();
        request.issue = *number;
        read_author(payload, request, "sender");  // who labelled
        request.label = trigger.label;
        const std::string label =
            payload.contains("label") ? text_field(payload["label"], "name") : "";
        if (action == "opened") {
            // The command in a new issue's body counts as a comment's would, from its author.
            request.label.clear();
            read_author(payload["issue"], request);
            if (!read_command(text_field(payload["issue"], "body"), trigger, request))
                request.why_not = "issue opened without " + trigger.command + " in its body";
            else if (!request.verb.empty() && request.verb != "plan") {
                request.kind = EventRequest::Kind::none;
                request.why_not = "a new issue's body can ask for a plan, not answer one";
            }
        } else if (action != "labeled") {
            request.why_not = "issues event '" + action + "', not 'labeled'";
        } else if (label != trigger.label) {
            request.why_not = "label '" + label + "' is not '" + trigger.label + "'";
        } else {
            request.kind = EventRequest::Kind::label;
            if (trigger.plan) request.verb = "plan";
        }
        return request;
    }
    if (name == "issue_comment") return read_issue_comment(payload, trigger, std::move(request));
    if (name == "pull_request_review" || name == "pull_request_review_comment") {
        const bool review = name == "pull_request_review";
        if (auto pull = read_pull(payload, request); !pull) return std::move(pull).error();
        const char* field = review ? "review" : "comment";
        const json& item = object_field(payload, field);
        auto id = id_field(item, field, review ? "review" : "comment");
        if (!id) return std::move(id).error();
        request.comment_id = *id;
        read_author(item, request);
        const std::string state = text_field(item, "state");
        const bool changes =
            review && (state == "changes_requested" || state == "CHANGES_REQUESTED");
        const PullAsk asked = pull_ask(text_field(item, "body"), changes, trigger.command);
        request.gate = review && (action == "submitted" || action == "dismissed");
        if (action != (review ? "submitted" : "created")) {
            request.why_not = name + " " + action + ", not " + (review ? "submitted" : "created");
        } else if (!asked.round) {
            request.why_not = asked.why_not;
        } else {
            request.kind = EventRequest::Kind::round;
            request.request = {review ? Request::Kind::review : Request::Kind::review_comment, *id};
            request.commanded = asked.commanded;
            request.instruction = asked.instruction;
        }
        return request;
    }
    if (name == "pull_request") {
        // A push to the pull request: approvals given on the head before are stale.
        if (auto pull = read_pull(payload, request); !pull) return std::move(pull).error();
        request.gate = action == "synchronize" || action == "opened" || action == "reopened";
        request.outcome = action == "closed";
        request.why_not =
            "pull_request " + action + ": only the merge gate and the outcomes look at it";
        return request;
    }
    if (name == "check_suite") {
        const json& suite = object_field(payload, "check_suite");
        auto id = id_field(suite, "check_suite", "check suite");
        if (!id) return std::move(id).error();
        const std::string conclusion = text_field(suite, "conclusion");
        if (action != "completed") {
            request.why_not = "check suite " + action + ", not completed";
            return request;
        }
        if (conclusion != "failure" && conclusion != "timed_out") {
            request.why_not = "check suite concluded '" + conclusion + "', not failure";
            return request;
        }
        // GitHub lists the pull requests of the suite's head in this repository.
        if (suite.contains("pull_requests") && suite["pull_requests"].is_array())
            for (const auto& pull : suite["pull_requests"]) {
                const json& head = object_field(pull, "head");
                if (!pull.contains("number") || !pull["number"].is_number_integer()) continue;
                request.issue = pull["number"].get<long>();
                request.head_ref = text_field(head, "ref");
                request.head_repository = request.repository;
                break;
            }
        if (request.issue == 0) {
            request.why_not = "the check suite is on no pull request";
            return request;
        }
        request.kind = EventRequest::Kind::round;
        request.request = {Request::Kind::check_suite, *id};
        return request;
    }
    return Error::usage("event '" + name +
                        "': cocode plans from 'issues' (labeled, opened), 'issue_comment' "
                        "(created), "
                        "'pull_request_review' (submitted), 'pull_request_review_comment' "
                        "(created), 'check_suite' (completed) and 'pull_request' "
                        "(synchronize)");
}

std::optional<std::string> words_after_command(std::string_view body, const std::string& command) {
    const auto said = words(first_line(body));
    if (said.empty() || said.front() != command) return std::nullopt;
    const std::string text(body);
    const auto at = text.find(command);
    std::string rest = visible_text(std::string_view(text).substr(at + command.size())).text;
    const auto start = rest.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) return std::string();
    const auto end = rest.find_last_not_of(" \t\r\n");
    return rest.substr(start, end - start + 1);
}

std::optional<PlanCommand> plan_command(std::string_view body, const std::string& command) {
    std::vector<std::string> lines;
    {
        std::istringstream in{std::string(body)};
        for (std::string line; std::getline(in, line);) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            lines.push_back(line);
        }
    }
    auto blank = [](const std::string& line) {
        return line.find_first_not_of(" \t") == std::string::npos;
    };
    auto first = std::find_if_not(lines.begin(), lines.end(), blank);
    auto last = std::find_if_not(lines.rbegin(), lines.rend(), blank);
    if (first == lines.end()) return std::nullopt;
    auto verb_of = [&](const std::string& line) -> std::vector<std::string> {
        auto said = words(line);
        static const char* kVerbs[] = {"plan", "approve", "revise", "reject"};
        if (said.size() < 2 || said[0] != command) return {};
        for (const char* verb : kVerbs)
            if (said[1] == verb) return said;
        return {};
    };
    auto trimmed_text = [](const std::string& text) {
        std::string visible = visible_text(text).text;
        const auto start = visible.find_first_not_of(" \t\r\n");
        if (start == std::string::npos) return std::string();
        return visible.substr(start, visible.find_last_not_of(" \t\r\n") - start + 1);
    };
    auto join = [&](auto from, auto to) {
        std::string text;
        for (auto it = from; it != to; ++it) text += *it + "\n";
        return text;
    };
    PlanCommand out;
    auto said = verb_of(*first);
    if (!said.empty()) {
        out.verb = said[1];
        if (out.verb == "revise") out.words = trimmed_text(join(first + 1, lines.end()));
    } else {
        said = verb_of(*last);
        if (said.empty() || said[1] != "revise") return std::nullopt;
        out.verb = "revise";
        out.words = trimmed_text(join(lines.begin(), last.base() - 1));
    }
    for (std::size_t i = 2; i < said.size(); ++i) {
        const bool hash = said[i].size() == 12 &&
                          said[i].find_first_not_of("0123456789abcdef") == std::string::npos;
        if (hash && out.verb == "approve")
            out.hash = said[i];
        else
            out.agents.push_back(said[i]);
    }
    return out;
}

bool event_read(std::string_view name) {
    for (const char* known : {"issues", "issue_comment", "pull_request_review",
                              "pull_request_review_comment", "check_suite", "pull_request"})
        if (name == known) return true;
    return false;
}

PullAsk pull_ask(std::string_view body, bool changes_requested, const std::string& command) {
    PullAsk asked;
    if (check::approve_merge_sha(body, command)) {
        asked.approve_merge = true;
        asked.why_not = "an approve-merge command: it counts toward the merge gate";
        return asked;
    }
    auto words = words_after_command(body, command);
    if (!words && !changes_requested) {
        asked.why_not = "neither requests changes nor says " + command;
        return asked;
    }
    asked.round = true;
    asked.commanded = words.has_value();
    asked.instruction = words.value_or("");
    return asked;
}

std::optional<BranchPair> pair_of_branch(std::string_view branch, std::string_view prefix) {
    if (prefix.empty() || branch.substr(0, prefix.size()) != prefix) return std::nullopt;
    const std::string_view name = branch.substr(prefix.size());
    const auto dash = name.find('-');
    if (dash == 0 || dash == std::string_view::npos || dash > 9 || dash + 1 == name.size())
        return std::nullopt;
    for (char c : name.substr(0, dash))
        if (c < '0' || c > '9') return std::nullopt;
    return BranchPair{std::stol(std::string(name.substr(0, dash))),
                      std::string(name.substr(dash + 1))};
}

EventRequest label_event(long issue, const LabelRequest& labelled, const std::string& label,
                         const config::TriggerConfig& trigger) {
    EventRequest request;
    request.kind = EventRequest::Kind::label;
    request.issue = issue;
    request.login = labelled.login;
    request.bot = labelled.bot;
    request.label = label;
    if (trigger.plan) request.verb = "plan";
    return request;
}

std::optional<EventRequest> polled_request(const github::PullRequest& pull, const Request& request,
                                           const std::string& login, bool author_is_bot,
                                           std::string_view body, bool changes_requested,
                                           const config::TriggerConfig& trigger) {
    const PullAsk said = pull_ask(body, changes_requested, trigger.command);
    if (!said.round) return std::nullopt;  // an approve-merge is the gate's alone
    EventRequest e;
    e.kind = EventRequest::Kind::round;
    e.issue = pull.number;
    e.head_ref = pull.head_ref;
    e.head_repository = pull.head_repository;
    e.request = request;
    e.comment_id = request.id;
    e.login = login;
    e.bot = github::bot_account(login, author_is_bot);
    e.commanded = said.commanded;
    e.instruction = said.instruction;
    return e;
}

bool may_command(const github::CollaboratorPermission& p) { return p.can_write(); }

Result<Standing> standing_of(github::GitHub& github, const config::TriggerConfig& trigger,
                             const std::string& login, bool bot) {
    if (bot) {
        const auto& bots = trigger.allowed_bots;
        return Standing{std::find(bots.begin(), bots.end(), login) != bots.end(), "bot"};
    }
    auto permission = github.collaborator_permission(login);
    if (!permission) return std::move(permission).error();
    return Standing{may_command(*permission), permission->role_name};
}

namespace {

// A label someone may not start cocode with: answered once on the issue (one comment, however
// often it is applied), and taken off, so that it reads as what it is and a writer's labelling
// is a new request. A bot is answered too: a comment labels nothing, so no bot loop can start.
Result<void> refuse_label(github::GitHub& github, const EventRequest& request,
                          const config::Config& config, const std::string& whose) {
    const std::string label = request.label.empty() ? config.trigger.label : request.label;
    const std::string text =
        "@" + request.login + " the `" + label +
        "` label starts coding agents, so it counts only when someone with write, maintain or "
        "admin permission on this repository applies it, or a bot listed in "
        "`trigger.allowed_bots`" +
        whose + ". It was taken off; a maintainer can apply it again.";
    if (auto posted = github.upsert_comment(
            request.issue, github::comment_marker("refused/label-" + std::to_string(request.issue)),
            text);
        !posted)
        return std::move(posted).error();
    return github.remove_label(request.issue, label);
}

// Whoever asks — applies the label, says a command, asks for changes in a review — may start
// cocode: a bot only when listed, a person with write access, asked of GitHub (never guessed
// from the event's author_association). A command is answered once and a label once (and taken
// off); a bot's command is not (a bot answering a bot can go on forever), nor a reader's review.
// `notice` says why not.
Result<bool> may_ask(const EventRequest& request, const config::Config& config,
                     github::GitHub& github, std::string& notice) {
    const std::string who = terminal_safe_line(request.login);
    const bool label = request.kind == EventRequest::Kind::label;
    if (request.login.empty()) {
        notice = "refused: the event does not say who asked";
        return false;
    }
    auto standing = standing_of(github, config.trigger, request.login, request.bot);
    if (!standing) return std::move(standing).error();
    if (standing->may) return true;
    if (request.bot) {
        notice = "refused: " + who + " is a bot not listed in trigger.allowed_bots";
        if (label)
            if (auto refused = refuse_label(github, request, config, ""); !refused)
                return std::move(refused).error();
        return false;
    }
    notice = "refused: " + who + " has " + terminal_safe_line(standing->role) +
             " permission; write, maintain or admin is needed";
    const std::string role =
        plain_name(standing->role) ? "`" + standing->role + "`" : "a custom role";
    if (label) {
        if (auto refused = refuse_label(github, request, config, " (yours is " + role + ")");
            !refused)
            return std::move(refused).error();
        return false;
    }
    if (!request.commanded) return false;  // a reader's review: not a command, not answered
    if (auto replied = reply_once(
            github, request,
            "@" + request.login + " thanks — `" + config.trigger.command +
                "` starts coding agents, so it runs only for people with write access to "
                "this repository (yours is " +
                role + "). A maintainer can start it for you.");
        !replied)
        return std::move(replied).error();
    return false;
}

Result<Decision> decide_round(EventRequest request, const config::Config& config,
                              github::GitHub& github) {
    Decision decision;
    const std::string pr = "pull request #" + std::to_string(request.issue);
    if (request.head_ref.empty()) {
        auto pull = github.pull_request(request.issue);
        if (!pull) return std::move(pull).error();
        request.head_ref = pull->head_ref;
        request.head_repository = pull->head_repository;
    }
    const auto pair = pair_of_branch(request.head_ref, config.branch_prefix);
    if (!pair || !config.find_agent(pair->agent)) {
        decision.notice = "nothing to do: " + pr + " is not on a branch of cocode's (" +
                          terminal_safe_line(request.head_ref) + ")";
        return decision;
    }
    // A fork may name its branch like cocode's; only the repository's own branch is a run's.
    if (!request.head_repository.empty() && request.head_repository != github.repo().full()) {
        decision.notice = "nothing to do: " + pr + " is from another repository (" +
                          terminal_safe_line(request.head_repository) + ")";
        return decision;
    }
    if (request.request.kind == Request::Kind::check_suite) {
        if (!config.review.fix_checks) {
            decision.notice =
                "nothing to do: a check failed on " + pr + ", and review.fix_checks is off";
            return decision;
        }
    } else {
        auto allowed = may_ask(request, config, github, decision.notice);
        if (!allowed) return std::move(allowed).error();
        if (!*allowed) return decision;
    }
    // Seen at once: 👀 where GitHub has reactions (not on a review itself, nor a check).
    if (request.request.kind == Request::Kind::command) {
        if (auto eyes = github.add_comment_reaction(request.request.id, "eyes"); !eyes)
            return std::move(eyes).error();
    } else if (request.request.kind == Request::Kind::review_comment) {
        if (auto eyes = github.add_review_comment_reaction(request.request.id, "eyes"); !eyes)
            return std::move(eyes).error();
    }
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
    return decision;
}

}  // namespace

Result<Decision> decide(const EventRequest& request, const config::Config& config,
                        github::GitHub& github) {
    if (request.kind == EventRequest::Kind::round) return decide_round(request, config, github);
    Decision decision;
    decision.issue = request.issue;
    const std::string who = terminal_safe_line(request.login);
    switch (request.kind) {
        case EventRequest::Kind::none:
            decision.notice = "nothing to do: " + terminal_safe_line(request.why_not);
            return decision;
        case EventRequest::Kind::label: {
            auto allowed = may_ask(request, config, github, decision.notice);
            if (!allowed) return std::move(allowed).error();
            if (!*allowed) return decision;
            decision.run = true;
            decision.verb = request.verb;
            if (!request.login.empty()) decision.by = "@" + request.login;
            decision.notice =
                "issue #" + std::to_string(request.issue) + " labelled '" + config.trigger.label +
                "'" + (request.verb.empty() ? "" : ": plan rounds (trigger.plan)") + " by " + who;
            return decision;
        }
        case EventRequest::Kind::command:
        case EventRequest::Kind::round:
            break;
    }
    auto allowed = may_ask(request, config, github, decision.notice);
    if (!allowed) return std::move(allowed).error();
    if (!*allowed) return decision;
    for (const auto& name : request.agents) {
        if (config.find_agent(name)) continue;
        if (auto replied =
                reply_once(github, request,
                           "@" + request.login + " there is no agent " + quoted_name(name) +
                               " in this repository's cocode configuration; the "
                               "agents are " +
                               known_agents(config) + ".");
            !replied)
            return std::move(replied).error();
        decision.notice =
            "refused: no agent '" + terminal_safe_line(name) + "' in the configuration";
        return decision;
    }
    // A plan command says what it acts on: an approval names the plan's hash (a plan changed
    // since cannot be approved by accident), a revision says what to change.
    const std::string missing =
        request.verb == "approve" && request.plan_hash.empty()
            ? "name the plan you approve by its hash, as its comment shows it: `" +
                  config.trigger.command + " approve AGENT HASH`."
        : request.verb == "revise" && request.instruction.empty()
            ? "say what to change (or answer the plan's questions) in the same comment, "
              "before `" +
                  config.trigger.command + " revise`."
            : std::string();
    if (!missing.empty()) {
        if (auto replied = reply_once(github, request, "@" + request.login + " " + missing);
            !replied)
            return std::move(replied).error();
        decision.notice = "refused: " + config.trigger.command + " " + request.verb + " from " +
                          who + " without " + (request.verb == "approve" ? "a hash" : "words");
        return decision;
    }
    // 👀 on the comment; on the issue itself for a command in its body.
    if (auto eyes = request.comment_id == 0
                        ? github.add_reaction(request.issue, "eyes")
                        : github.add_comment_reaction(request.comment_id, "eyes");
        !eyes)
        return std::move(eyes).error();
    decision.run = true;
    decision.agents = request.agents;
    decision.verb = request.verb;
    decision.plan_hash = request.plan_hash;
    decision.instruction = request.instruction;
    decision.by = "@" + request.login;
    decision.notice = "issue #" + std::to_string(request.issue) + ": " + config.trigger.command +
                      (request.verb.empty() ? "" : " " + request.verb) + " from " + who;
    return decision;
}

}  // namespace cocode::scale
