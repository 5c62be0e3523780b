#include "hook/ready.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/flat_yaml.h"
#include "core/json_text.h"

namespace cocode::hook {
namespace fs = std::filesystem;

bool message_has_marker(std::string_view message, std::string_view marker) {
    return !marker.empty() && message.find(marker) != std::string_view::npos;
}

namespace {

std::string ready_event(const std::string& run_id, const std::string& commit, SystemTime now,
                        std::string_view found_by) {
    nlohmann::ordered_json event;
    event["type"] = "READY";
    event["run_id"] = run_id;
    event["commit"] = commit;
    event["time"] = format_utc_timestamp(now);
    if (!found_by.empty()) event["by"] = found_by;
    return json_dump(event);
}

}  // namespace

Result<ReadyResult> record_ready(const fs::path& run_folder, const std::string& commit_id,
                                 std::string_view message,
                                 const std::optional<std::string>& env_marker, SystemTime now,
                                 std::string_view found_by) {
    // Agents get the marker in their environment: a commit without it is settled here, with
    // no lock taken and no file read (most of an agent's commits).
    if (env_marker && !env_marker->empty() && !message_has_marker(message, *env_marker))
        return ReadyResult{ReadyOutcome::no_marker, {}, *env_marker};

    // Every lock here is one another sandboxed process can hold too (the bus is every run's):
    // waited on for a moment, then gone past, so that no agent stalls another's commit.
    const fs::path info_path = run_folder / kRunInfoFile;
    auto lock = FileLock::acquire_within(info_path.string() + ".lock", kAgentLockWait);
    if (!lock) return std::move(lock).error();

    auto text = read_file(info_path, 1 << 20);
    if (!text) return Error::general(info_path.string() + ": " + text.error().message);
    auto info = FlatYaml::parse(*text, info_path.string());
    if (!info) return std::move(info).error();

    ReadyResult result;
    auto run_id = info->get("run_id");
    if (!run_id || run_id->empty())
        return Error::general(info_path.string() + ": field run_id is missing");
    result.run_id = *run_id;
    if (env_marker && !env_marker->empty())
        result.marker = *env_marker;
    else if (auto configured = info->get("ready_marker"); configured && !configured->empty())
        result.marker = *configured;
    else
        result.marker = kDefaultReadyMarker;

    if (!message_has_marker(message, result.marker)) return result;
    if (info->get("base_commit") == commit_id) {
        result.outcome = ReadyOutcome::base_commit;
        return result;
    }
    if (info->get("ready_commit") == commit_id) {
        result.outcome = ReadyOutcome::already_recorded;
        return result;
    }

    const std::string event = ready_event(result.run_id, commit_id, now, found_by);
    if (auto appended = append_line_locked(run_folder / kEventsFile, event, kAgentLockWait);
        !appended)
        return std::move(appended).error();
    if (auto bus = info->get("message_bus"); bus && !bus->empty()) {
        if (auto appended = append_line_locked(*bus, event, kAgentLockWait); !appended)
            return std::move(appended).error();
    }
    info->set("ready_commit", commit_id);
    // One flush, not two: the run folder is flushed when the run ends (as it is not after each
    // file when the run is made). A power loss right after may bring back run-info without
    // ready_commit; the READY event, the supervisor's own watch of the branch and the check,
    // which reads the marker from the commits, do not depend on it.
    if (auto written = write_file_atomic(info_path, info->render(), 0644, Durability::content);
        !written)
        return std::move(written).error();
    result.outcome = ReadyOutcome::recorded;
    return result;
}

}  // namespace cocode::hook
