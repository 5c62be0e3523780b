// Supervising a batch of runs: at most N agents alive, the rest waiting in FIFO order;
// timeouts, idle limits, restarts, READY then quiet, and Ctrl-C — each ending with every
// process of the run gone and the run's state written (docs/runs.md, "Supervision").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/prepare.h"
#include "core/result.h"

namespace cocode::agent {

enum class UpdateKind { started, ready, restarting, stopping, finished };

struct RunUpdate {
    const PlannedRun* run = nullptr;
    UpdateKind kind = UpdateKind::started;
    std::string detail;  // "pid 123", "commit abc…", "timeout", "completed (exit 0)", …
};

struct RunResult {
    run::RunStatus status = run::RunStatus::queued;  // completed or failed once it has ended
    run::StopReason reason = run::StopReason::none;
    int exit_code = 0;
    int restarts = 0;
    std::string ready_commit;
};

// Where a run is, as the live view shows it: its status, and the supervisor's own steps.
enum class ViewState { queued, running, stopping, restarting, completed, failed };
std::string_view view_state_name(ViewState state);

// What the live view shows of a run, at a moment.
struct RunView {
    const PlannedRun* run = nullptr;
    ViewState state = ViewState::queued;
    std::chrono::steady_clock::time_point started{};  // of the run's first attempt; epoch if none
    std::chrono::steady_clock::time_point ended{};    // epoch while it runs
    std::uintmax_t output_bytes = 0;                  // stdout and stderr so far
    std::optional<run::RunUsage> usage;               // tokens and cost so far, once started
    int commits = 0;                                  // since the base
    std::string ready_commit;
    std::optional<RunResult> result;  // once it has ended
};

struct SupervisorOptions {
    int concurrency = 5;
    config::Duration grace = std::chrono::seconds(5);
    config::Duration ready_quiet = std::chrono::seconds(60);
    config::Duration restart_backoff = std::chrono::seconds(1);
    // A detached supervisor has no terminal to lose; SIGHUP then means nothing to it.
    bool stop_on_hangup = true;
    std::function<void(const RunUpdate&)> on_update;
    // Called once, after the first runs have started (--detach lets the terminal go then).
    std::function<void()> on_started;
    // Every run as it stands: after any update, and about once a second in between.
    std::function<void(const std::vector<RunView>&)> on_tick;
    // The configuration's `pricing`, over the shipped price table (agent/usage.h).
    std::map<std::string, config::Price> pricing;
    // Where deadlines are read from; steady_clock when empty. Tests jump it forward to reach
    // a timeout or the end of a grace period on an event of theirs, not after a wall-clock wait.
    std::function<std::chrono::steady_clock::time_point()> clock;
};

struct BatchResult {
    bool interrupted = false;
    std::vector<RunResult> runs;  // in the order of the batch
    // What supervising cost this process, from the first start to the last run's end: its
    // own CPU time (user + system; the agents' is theirs) and the wall time it covered.
    std::chrono::microseconds cpu{0};
    std::chrono::microseconds wall{0};
    // Runs whose end could not be written to run-info.yaml (a full disk): one line each.
    std::vector<std::string> unrecorded;
};

// The exit code a batch earns: 130 when interrupted, 3 when an agent's program is missing,
// 1 when any run failed or an end could not be written, 130 when the only runs that did not
// complete were stopped (`stop`, the dashboard), else 0 (docs/runs.md).
int batch_exit_code(const BatchResult& batch);

// Whether the runs of a batch are judged when it ends: when checking was asked for and the
// batch was not interrupted (an interrupted batch leaves its runs to `cocode-check --run`:
// judging minutes of verify commands after Ctrl-C is not what was asked).
bool judged_after(const BatchResult& batch, bool check_requested);

// Runs the batch to the end. SIGINT, SIGTERM and SIGHUP stop every agent (SIGTERM to its
// processes, grace, SIGKILL) and mark waiting runs interrupted; the result says so.
Result<BatchResult> supervise(std::vector<PlannedRun>& runs, const SupervisorOptions& options);

}  // namespace cocode::agent
