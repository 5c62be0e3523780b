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

constexpr char kBodyAnswersNoPlan[] = "a new issue's body can ask for a plan, not answer one";

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
    request.at = asked_at(payload);
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
            else if (check::answers_plan(request.verb)) {
                request.kind = EventRequest::Kind::none;
                request.why_not = kBodyAnswersNoPlan;
            }
        } else if (action != "labeled") {
            request.why_not = "issues event '" + action + "', not 'labeled'";
        } else if (label != trigger.label) {
            request.why_not = "label '" + label + "' is not '" + trigger.label + "'";
        } else {
            request.kind = EventRequest::Kind::label;
            if (trigger.plan) request.verb = check::PlanVerb::plan;
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
        if (said.size() < 2 || said[0] != command || !check::parse_plan_verb(said[1])) return {};
        return said;
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
        out.verb = *check::parse_plan_verb(said[1]);
        if (out.verb == check::PlanVerb::revise)
            out.words = trimmed_text(join(first + 1, lines.end()));
    } else {
        said = verb_of(*last);
        if (said.empty() || said[1] != "revise") return std::nullopt;
        out.verb = check::PlanVerb::revise;
        out.words = trimmed_text(join(lines.begin(), last.base() - 1));
    }
    for (std::size_t i = 2; i < said.size(); ++i) {
        const bool hash = said[i].size() == 12 &&
                          said[i].find_first_not_of("0123456789abcdef") == std::string::npos;
        if (hash && out.verb == check::PlanVerb::approve)
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

std::string asked_at(const json& payload) {
    if (!payload.is_object()) return {};
    if (payload.contains("comment") && payload["comment"].is_object())
        if (std::string at = text_field(payload["comment"], "created_at"); !at.empty()) return at;
    if (payload.contains("issue") && payload["issue"].is_object())
        return text_field(payload["issue"], "updated_at");
    return {};
}

EventRequest label_event(long issue, const LabelRequest& labelled, const std::string& label,
                         const config::TriggerConfig& trigger) {
    EventRequest request;
    request.kind = EventRequest::Kind::label;
    request.issue = issue;
    request.login = labelled.login;
    request.bot = labelled.bot;
    request.label = label;
    request.at = labelled.at;
    if (trigger.plan) request.verb = check::PlanVerb::plan;
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

std::optional<EventRequest> polled_comment(long issue, const github::Comment& comment,
                                           const config::TriggerConfig& trigger) {
    EventRequest e;
    e.issue = issue;
    e.comment_id = comment.id;
    e.login = comment.author;
    e.bot = github::bot_account(comment.author, comment.author_is_bot);
    e.at = comment.created_at;
    if (!read_command(comment.body, trigger, e)) return std::nullopt;
    return e;
}

std::optional<EventRequest> polled_issue_body(const github::Issue& issue,
                                              const config::TriggerConfig& trigger) {
    EventRequest e;
    e.issue = issue.number;
    e.login = issue.author;
    e.bot = github::bot_account(issue.author, issue.author_is_bot);
    e.at = issue.created_at;
    if (!read_command(issue.body, trigger, e)) return std::nullopt;
    if (check::answers_plan(e.verb)) {
        e.kind = EventRequest::Kind::none;
        e.why_not = kBodyAnswersNoPlan;
    }
    return e;
}

EventRequest polled_failed_check(const github::PullRequest& pull, long long check_id) {
    EventRequest e;
    e.kind = EventRequest::Kind::round;
    e.issue = pull.number;
    e.head_ref = pull.head_ref;
    e.head_repository = pull.head_repository;
    e.request = {Request::Kind::check_suite, check_id};
    return e;
}

bool may_command(const github::CollaboratorPermission& p) { return p.can_write(); }

}  // namespace cocode::scale
