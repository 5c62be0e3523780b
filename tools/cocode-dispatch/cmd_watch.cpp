// cocode-dispatch watch: a self-hosted machine that takes labelled issues by polling GitHub. The
// policy (claims, durable steps, answering) is src/scale/watch; here: the loop and its
// signals — SIGTERM or Ctrl-C finish the step under way, hand back the claims whose runs have
// not started, and exit 0.
#include "watching.h"

namespace cocode::dispatch_cli {

int run_watch(const WatchArgs& args) {
    using Clock = std::chrono::steady_clock;
    const auto interval = duration_flag("--interval", args.interval);
    const sigset_t stops = block_stop_signals();
    auto watching = start_watching(args.watcher);
    Watching& w = *watching;
    notice("watching " + w.source->describe() + " for label `" + w.label + "` as watcher " +
           w.watcher->id() + (args.once ? " (once)" : ", every " + args.interval));

    auto next_poll = Clock::now();
    bool polled = false;
    for (;;) {
        const bool poll = args.once ? !polled : Clock::now() >= next_poll;
        auto passed = w.watcher->pass(poll);
        if (poll) {
            polled = true;
            next_poll = Clock::now() + interval;
        }
        if (!passed) {
            if (args.once) throw Failure(std::move(passed).error());
            notice(passed.error().message + "; trying again at the next poll");
        }
        if (args.once && w.watcher->idle()) return 0;

        // Runs in flight are looked at every second; GitHub only at the interval.
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
            w.watcher->idle() ? next_poll - Clock::now() : std::chrono::seconds(1));
        if (auto quiet = hold_for_github(w)) {
            wait = std::max(wait, *quiet);
            next_poll = std::max(next_poll, Clock::now() + *quiet);
        }
        if (stop_requested(stops, wait)) {
            notice("stopping: handing back the claims whose runs have not started");
            w.watcher->hand_back().value_or_throw();
            return 0;
        }
    }
}

}  // namespace cocode::dispatch_cli
