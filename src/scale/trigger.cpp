#include "scale/trigger.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/terminal_text.h"

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

// An agent name as the command gave it, when it is one a configuration could hold; else none
// of it goes into the reply (comment text is untrusted: no markup, no mentions).
std::string quoted_name(const std::string& name) {
    const bool plain = !name.empty() && name.size() <= 40 &&
                       std::all_of(name.begin(), name.end(), [](unsigned char c) {
                           return std::isalnum(c) || c == '-' || c == '_' || c == '.';
                       });
    return plain ? "`" + name + "`" : "of that name";
}

std::string known_agents(const config::Config& config) {
    std::string out;
    for (const auto& agent : config.agents) out += (out.empty() ? "`" : ", `") + agent.name + "`";
    return out;
}

Result<void> reply_once(github::GitHub& github, const EventRequest& request,
                        const std::string& text) {
    const std::string marker =
        github::comment_marker("refused/" + std::to_string(request.comment_id));
    auto posted = github.upsert_comment(request.issue, marker, text);
    if (!posted) return std::move(posted).error();
    return {};
}

}  // namespace

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
        const std::string label =
            payload.contains("label") ? text_field(payload["label"], "name") : "";
        if (action != "labeled") {
            request.why_not = "issues event '" + action + "', not 'labeled'";
        } else if (label != trigger.label) {
            request.why_not = "label '" + label + "' is not '" + trigger.label + "'";
        } else {
            request.kind = EventRequest::Kind::label;
        }
        return request;
    }
    if (name == "issue_comment") {
        auto number = issue_number(payload);
        if (!number) return std::move(number).error();
        request.issue = *number;
        if (!payload.contains("comment") || !payload["comment"].is_object() ||
            !payload["comment"].contains("id") || !payload["comment"]["id"].is_number_integer())
            return Error::usage("event: field 'comment.id': expected the comment's id");
        const json& comment = payload["comment"];
        request.comment_id = comment["id"].get<long long>();
        const json user = comment.contains("user") ? comment["user"] : json();
        request.login = text_field(user, "login");
        request.bot = text_field(user, "type") == "Bot" ||
                      (request.login.size() > 5 &&
                       request.login.compare(request.login.size() - 5, 5, "[bot]") == 0);
        const auto said = words(first_line(text_field(comment, "body")));
        if (action != "created") {
            request.why_not = "comment " + action + ", not created";
        } else if (payload["issue"].contains("pull_request")) {
            request.why_not = "a comment on a pull request";
        } else if (said.empty() || said.front() != trigger.command) {
            request.why_not = "the comment is not a " + trigger.command + " command";
        } else {
            request.kind = EventRequest::Kind::command;
            request.agents.assign(said.begin() + 1, said.end());
        }
        return request;
    }
    return Error::usage("event '" + name +
                        "': cocode plans from 'issues' (labeled) and 'issue_comment' (created)");
}

bool may_command(const github::CollaboratorPermission& p) {
    for (const char* allowed : {"admin", "maintain", "write"})
        if (p.role_name == allowed) return true;
    return p.permission == "admin" || p.permission == "write";
}

Result<Decision> decide(const EventRequest& request, const config::Config& config,
                        github::GitHub& github) {
    Decision decision;
    decision.issue = request.issue;
    const std::string who = terminal_safe_line(request.login);
    switch (request.kind) {
        case EventRequest::Kind::none:
            decision.notice = "nothing to do: " + terminal_safe_line(request.why_not);
            return decision;
        case EventRequest::Kind::label:
            decision.run = true;
            decision.notice = "issue #" + std::to_string(request.issue) + " labelled '" +
                              config.trigger.label + "'";
            return decision;
        case EventRequest::Kind::command:
            break;
    }
    if (request.bot) {
        const auto& bots = config.trigger.allowed_bots;
        if (std::find(bots.begin(), bots.end(), request.login) == bots.end()) {
            // No reply: a bot answering a bot can go on forever.
            decision.notice = "refused: " + who + " is a bot not listed in trigger.allowed_bots";
            return decision;
        }
    } else {
        auto permission = github.collaborator_permission(request.login);
        if (!permission) return std::move(permission).error();
        if (!may_command(*permission)) {
            if (auto replied = reply_once(
                    github, request,
                    "@" + request.login + " thanks — `" + config.trigger.command +
                        "` starts coding agents, so it runs only for people with write access to "
                        "this repository (yours is `" +
                        permission->role_name + "`). A maintainer can start it for you.");
                !replied)
                return std::move(replied).error();
            decision.notice = "refused: " + who + " has " +
                              terminal_safe_line(permission->role_name) +
                              " permission; write, maintain or admin is needed";
            return decision;
        }
    }
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
    if (auto eyes = github.add_comment_reaction(request.comment_id, "eyes"); !eyes)
        return std::move(eyes).error();
    decision.run = true;
    decision.agents = request.agents;
    decision.notice =
        "issue #" + std::to_string(request.issue) + ": " + config.trigger.command + " from " + who;
    return decision;
}

}  // namespace cocode::scale
