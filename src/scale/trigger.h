// What starts cocode from a GitHub event (the action's `plan --event`): an issue labelled with
// the trigger label, or a comment command (`/cocode`, `/cocode claude codex`). A command counts
// only from a person whose repository permission is write, maintain or admin — asked of GitHub,
// not guessed from the event's author_association — or from a bot the configuration lists.
// A refused command gets one polite reply (one per comment, however often the event is
// replayed); an accepted one gets 👀 on the comment.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "github/api.h"

namespace cocode::scale {

struct EventRequest {
    enum class Kind { none, label, command };
    Kind kind = Kind::none;
    long issue = 0;
    std::vector<std::string> agents;  // named after the command
    long long comment_id = 0;
    std::string login;  // the comment's author
    bool bot = false;
    std::string repository;  // OWNER/NAME, from the payload
    std::string why_not;     // kind none: why the event asks for nothing
};

// Reads an `issues` (labeled) or `issue_comment` (created) payload. `event_name` is
// GITHUB_EVENT_NAME (or the X-GitHub-Event header); empty: told from the payload's shape.
// Any other event, or a payload that is not one, is a usage error naming what was expected.
Result<EventRequest> read_event(std::string_view event_name, const nlohmann::json& payload,
                                const config::TriggerConfig& trigger);

// write, maintain, admin (by role), or a base permission of write or admin.
bool may_command(const github::CollaboratorPermission& permission);

struct Decision {
    bool run = false;
    long issue = 0;
    std::vector<std::string> agents;  // empty: the configuration's default agents
    std::string notice;               // one line for the log: what was decided and why
};

// Decides on a request: labels run; a command runs when its author may command (asked of
// GitHub) and names only configured agents, else it is answered once, politely, and nothing
// runs. An accepted command gets 👀.
Result<Decision> decide(const EventRequest& request, const config::Config& config,
                        github::GitHub& github);

}  // namespace cocode::scale
