// cocode-dispatch watch: a self-hosted machine that takes labelled issues by itself. The
// policy (claims, durable steps, answering) is src/scale/watch; here: flags, the runs started
// as `cocode-dispatch run --detach`, and the loop with its signals — SIGTERM or Ctrl-C finish
// the step under way, hand back the claims whose runs have not started, and exit 0.
#include <signal.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common/executables.h"
#include "proc/command.h"
#include "scale/watch.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& text) {
    auto parsed = config::parse_duration(text);
    if (!parsed) throw Failure(Error::usage(flag + " " + text + ": " + parsed.error().message));
    if (parsed->count() < 1000) throw Failure(Error::usage(flag + " " + text + ": at least 1s"));
    return *parsed;
}

// `cocode-dispatch run N --detach --publish --json`: the runs' ids. Their supervisor lives on
// by itself (a session of its own), so the runs outlive a watcher that is killed.
Result<std::vector<std::string>> start_runs(const Workspace& ws, const SourceFlags& flags,
                                            long issue, const std::vector<std::string>& agents) {
    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(),
                                     "run",
                                     std::to_string(issue),
                                     "--detach",
                                     "--publish",
                                     "--json"};
    for (const auto& agent : agents) argv.insert(argv.end(), {"--agent", agent});
    auto source = flags.as_args();
    argv.insert(argv.end(), source.begin(), source.end());
    CommandOptions options;
    options.cwd = ws.root;
    auto ran = run_command(argv, options);
    if (!ran) return std::move(ran).error();
    if (ran->exit_code != 0) {
        std::string why = ran->err;
        while (!why.empty() && why.back() == '\n') why.pop_back();
        why = why.substr(why.rfind('\n') == std::string::npos ? 0 : why.rfind('\n') + 1);
        return Error::general("cocode-dispatch run exited " + std::to_string(ran->exit_code) +
                              (why.empty() ? std::string() : ": " + why));
    }
    const json out = json::parse(ran->out, nullptr, false);
    std::vector<std::string> ids;
    if (out.is_object() && out.contains("runs") && out["runs"].is_array())
        for (const auto& r : out["runs"])
            if (r.is_object() && r.contains("run_id") && r["run_id"].is_string())
                ids.push_back(r["run_id"].get<std::string>());
    if (ids.empty()) return Error::general("cocode-dispatch run --json named no runs");
    return ids;
}

}  // namespace

int run_watch(const WatchArgs& args) {
    const auto interval = duration_flag("--interval", args.interval);
    const auto lease = duration_flag("--lease", args.lease);
    Workspace ws = open_workspace();
    const auto agents = config::choose_agents(ws.config, args.agents).value_or_throw();
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();

    scale::WatchOptions options;
    options.label = args.label.value_or(ws.config.trigger.label);
    options.lease = std::chrono::duration_cast<std::chrono::seconds>(lease);
    options.max_parallel = args.max_parallel;
    options.repo_root = ws.root;
    options.config = &ws.config;
    options.source = source.get();
    std::string names;
    for (const auto& a : agents) names += (names.empty() ? "" : ", ") + ("`" + a.name + "`");
    options.note = "agents: " + names;
    options.dispatch = [&](long issue, const std::vector<std::string>& named) {
        return start_runs(ws, args.source, issue, named.empty() ? args.agents : named);
    };
    options.notice = notice;

    // The signals that stop a watcher wait here, between steps, never in the middle of one.
    sigset_t stops;
    sigemptyset(&stops);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stops, sig);
    ::sigprocmask(SIG_BLOCK, &stops, nullptr);

    auto watcher = scale::Watcher::open(std::move(options)).value_or_throw();
    notice("watching " + source->describe() + " for label `" +
           args.label.value_or(ws.config.trigger.label) + "` as watcher " + watcher->id() +
           (args.once ? " (once)" : ", every " + args.interval));

    auto next_poll = Clock::now();
    bool polled = false;
    for (;;) {
        const bool poll = args.once ? !polled : Clock::now() >= next_poll;
        auto passed = watcher->pass(poll);
        if (poll) {
            polled = true;
            next_poll = Clock::now() + interval;
        }
        if (!passed) {
            if (args.once) throw Failure(std::move(passed).error());
            notice(passed.error().message + "; trying again at the next poll");
        }
        if (args.once && watcher->idle()) return 0;

        // Runs in flight are looked at every second; GitHub only at the interval.
        auto wait = watcher->idle() ? next_poll - Clock::now() : std::chrono::seconds(1);
        if (wait < Clock::duration::zero()) wait = Clock::duration::zero();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wait).count();
        timespec timeout{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
        if (::sigtimedwait(&stops, nullptr, &timeout) > 0) {
            notice("stopping: handing back the claims whose runs have not started");
            watcher->hand_back().value_or_throw();
            return 0;
        }
    }
}

}  // namespace cocode::dispatch_cli
