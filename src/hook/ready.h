// The ready marker: does a commit carry it, and recording that in the run folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/run_id.h"

namespace cocode::hook {

inline constexpr std::string_view kDefaultReadyMarker = "cocode ready for check";

// The marker counts anywhere in the message, subject or body, matched case-sensitively as a
// bytes substring (a message need not be UTF-8). An empty marker never matches.
bool message_has_marker(std::string_view message, std::string_view marker);

enum class ReadyOutcome {
    recorded,          // READY appended, run-info updated
    no_marker,         // the commit does not carry the marker
    base_commit,       // the commit is the run's base: not new, never counts
    already_recorded,  // this commit was recorded before (the hook ran twice)
};

struct ReadyResult {
    ReadyOutcome outcome = ReadyOutcome::no_marker;
    std::string run_id;
    std::string marker;
};

// Files of a run folder that the hook reads and writes (docs/hooks.md).
inline constexpr char kRunInfoFile[] = "run-info.yaml";
inline constexpr char kEventsFile[] = "events.jsonl";

// Decides whether `commit_id` with `message` makes the run in `run_folder` ready, and if so
// appends `{"type":"READY","run_id":…,"commit":…,"time":…}` to the run's events.jsonl (and
// to the bus named by run-info's `message_bus`, when set) under a lock, then sets
// `ready_commit` in run-info.yaml atomically. The marker is `env_marker` when given, else
// run-info's `ready_marker`, else the default. All of it happens under the run-info lock, so
// two hooks racing on one run — or the hook and the supervisor's own watch — record a commit
// once. `found_by` names who saw it when it is not the hook (the event's `by`: "watch").
Result<ReadyResult> record_ready(const std::filesystem::path& run_folder,
                                 const std::string& commit_id, std::string_view message,
                                 const std::optional<std::string>& env_marker, SystemTime now,
                                 std::string_view found_by = {});

}  // namespace cocode::hook
