// A run's state and why it stopped: enums everywhere in cocode, text only in run-info.yaml,
// events and what the tools print (docs/runs.md, "run-info.yaml").
#pragma once

#include <optional>
#include <string_view>

namespace cocode::run {

// The runner contract's statuses, and ours: `queued` waits for a free slot.
enum class RunStatus { queued, running, completed, failed, unknown };

// Why a run is in its state when that is not plain.
enum class StopReason {
    none,
    timeout,             // its time limit (exit 124)
    idle,                // no output for idle_timeout (exit 124)
    output_cap,          // wrote more than output_cap (exit 1)
    budget,              // its cost or tokens crossed max_cost_usd or max_tokens (exit 125)
    interrupted,         // Ctrl-C, SIGTERM, SIGHUP (exit 130)
    missing_dependency,  // the agent's program is not installed (exit 3)
    setup,               // making its worktree or worktree_setup failed
    spawn,               // the program could not be started
    crashed,             // the dispatcher died and no end was recorded
    ready_quiet,         // READY, then quiet for ready_quiet: ended as completed
    restarting,          // an attempt failed; another is coming
    other,               // a word cocode does not know (another tool's run-info)
};

std::string_view status_name(RunStatus status);
// nullopt for a word that is not a status.
std::optional<RunStatus> parse_status(std::string_view text);

std::string_view reason_name(StopReason reason);  // "" for none
StopReason parse_reason(std::string_view text);   // other for an unknown word

// A run that ended with nothing of its agent's doing to judge: interrupted (Ctrl-C, `stop`),
// or its agent never started (its program missing, its setup failed, it could not be
// started). Such a run gets no verdict, and the scorecard and routing count it apart.
enum class NotJudged { no, interrupted, never_started };
inline NotJudged not_judged(StopReason reason) {
    switch (reason) {
        case StopReason::interrupted:
            return NotJudged::interrupted;
        case StopReason::missing_dependency:
        case StopReason::setup:
        case StopReason::spawn:
            return NotJudged::never_started;
        default:
            return NotJudged::no;
    }
}

// Still to end: queued or running. Everything else has ended, and nothing changes it again.
inline bool is_active(RunStatus status) {
    return status == RunStatus::queued || status == RunStatus::running;
}

}  // namespace cocode::run
