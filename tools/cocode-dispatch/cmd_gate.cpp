// cocode-dispatch gate <pull> | --event FILE: the merge gate of an agent's pull request
// (docs/review.md, "The gate") set from what GitHub says now — the verdict the pair published
// on its head, the reviews, the approve-merge commands — as the action's workflow runs it on
// a review, a comment or a push. serve and watch do the same by themselves.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/files.h"
#include "scale/gate.h"
#include "scale/trigger.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

int run_gate(const GateArgs& args) {
    if (args.pull.has_value() == args.event.has_value())
        throw Failure(Error::usage("gate: name the pull request, or give --event (not both)"));
    Workspace ws = open_workspace();
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    long number = args.pull.value_or(0);
    if (args.event) {
        auto text = read_file(*args.event);
        if (!text)
            throw Failure(Error::usage("--event " + *args.event + ": " + text.error().message));
        const nlohmann::json payload = nlohmann::json::parse(*text, nullptr, false);
        if (payload.is_discarded())
            throw Failure(
                Error::usage("--event " + *args.event + ": not valid JSON (a webhook payload)"));
        const char* name = std::getenv("GITHUB_EVENT_NAME");
        const auto request =
            scale::read_event(name ? name : "", payload, ws.config.trigger).value_or_throw();
        if (!request.gate) {
            notice("nothing to do: the event does not touch a pull request's gate");
            return 0;
        }
        if (!flags.names_a_source() && !request.repository.empty())
            flags.options.repo = request.repository;
        number = request.issue;
    }
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    github::GitHub& github = github_of(*source, "gate");
    const auto refreshed = scale::refresh_gate_of(github, ws.config, number).value_or_throw();
    notice(refreshed.notice);
    return 0;
}

}  // namespace cocode::dispatch_cli
