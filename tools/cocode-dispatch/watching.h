// What `watch` and `serve` share: the watcher they feed (claims, runs, answers; src/scale/watch)
// set up from their flags, and the signals that end them between steps.
#pragma once

#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "scale/watch.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

// A duration flag of at least a second ("--interval 5m"); a usage error otherwise.
std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& text);

// The issue source and the watcher, with its lock taken; runs are started as
// `cocode-dispatch run N --detach --publish` with the flags' source.
struct Watching {
    Workspace ws;
    std::unique_ptr<issues::IssueSource> source;
    std::unique_ptr<scale::Watcher> watcher;
    std::string label;
    // What became of the runs' pull requests, learnt at the watcher's passes every ten minutes;
    // `serve` asks at once when a pull request closed.
    std::function<void()> learn_outcomes;
};
// Held by pointer: the watcher keeps pointers into the workspace and the source.
std::unique_ptr<Watching> start_watching(const WatcherArgs& args);

// How long GitHub still asks for no requests (Retry-After, an exhausted rate limit) when that
// is longer than its client waits by itself; said once as a notice. Watch and serve hold every
// step for it: no request goes out before, so none is refused.
std::optional<std::chrono::milliseconds> hold_for_github(const Watching& w);

// SIGTERM, SIGINT and SIGHUP, blocked so that they wait to be taken between steps (by
// stop_requested). Call before starting threads: they inherit the mask.
sigset_t block_stop_signals();
// Waits up to `limit` for a stop signal; true when one came.
bool stop_requested(const sigset_t& stops, std::chrono::milliseconds limit);

}  // namespace cocode::dispatch_cli
