// Stop means stop: Ctrl-C (SIGINT), SIGTERM and SIGHUP, and a person's stop request for one
// run, end whatever cocode is running for it — an agent, a setup command, an environment's
// build, a verify — within a tick, its process group included (docs/runs.md, "Stopping").
//
// Two ways to be asked:
// - the process is interrupted: `request_interrupt()` (the signal watch below, or the
//   supervisor's own signal handling), seen by every thread;
// - the work a thread does is stopped: a `StopScope` on that thread names how it learns it
//   (a judge checking one run looks for that run's stop request).
// `run_to_log` (proc/command_runner.h) ends its command's group as soon as either is asked,
// and says so; the caller turns that into the run's `interrupted`, never into a verdict.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <thread>

namespace cocode {

// The whole process is asked to stop. Idempotent; safe from any thread.
void request_interrupt();
bool interrupt_requested();
// Readable once an interrupt was requested (an eventfd that stays readable): a poll loop
// waits on it beside its other descriptors.
int interrupt_fd();

// Whether the work on this thread is asked to stop: the process was interrupted, or this
// thread's StopScope says so.
bool stop_asked();

// stop_asked() as this thread answers it now, for another thread to ask while this thread's
// StopScope lives (a watcher that cuts this thread's blocking request short).
std::function<bool()> stop_asked_here();

// While it lives, `asked` also says whether this thread's work is to stop (checked often:
// it must be cheap, a file's existence at most). Scopes nest; the innermost is asked.
class StopScope {
  public:
    explicit StopScope(std::function<bool()> asked);
    ~StopScope();
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;

  private:
    std::function<bool()> asked_;
    StopScope* outer_;
};

// While it lives, SIGINT, SIGTERM and SIGHUP request an interrupt instead of ending the
// process at once: they are blocked on the thread that makes it (and on every thread started
// from it afterwards) and taken by a thread of its own. Make it before any other thread, at
// the start of a command that runs children; the process then ends on its own terms, its
// children's groups ended and its records written. Restores the signal mask when it ends.
class InterruptWatch {
  public:
    InterruptWatch();
    ~InterruptWatch();
    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

  private:
    sigset_t previous_{};
    int wake_ = -1;  // an eventfd: the watch ends
    std::atomic<bool> ending_{false};
    std::thread taker_;
};

}  // namespace cocode
