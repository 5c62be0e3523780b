#include "run/run_folder.h"

#include <signal.h>
#include <stdio.h>

#include <algorithm>
#include <chrono>

#include "core/files.h"
#include "core/json_text.h"
#include "proc/process_tree.h"
#include "run/seal.h"

namespace cocode::run {
namespace fs = std::filesystem;

namespace {

long long to_number(const std::optional<std::string>& text, long long fallback = 0) {
    if (!text || text->empty()) return fallback;
    try {
        std::size_t used = 0;
        long long n = std::stoll(*text, &used);
        return used == text->size() ? n : fallback;
    } catch (...) {
        return fallback;
    }
}

}  // namespace

namespace {

fs::path state_path(const fs::path& folder) {
    // <root>/.cocode/runs/<run id> -> <root>/.cocode/seals/<run id>.state
    return seal_path(folder.parent_path().parent_path().parent_path(), folder.filename().string())
        .replace_extension(".state");
}

// A run's state — which issue and agent, its status and end, READY, its processes — from the
// file that holds it: cocode's state beside the seal (keep_state) or, for a run from before
// that file was kept, run-info.
void read_state(const FlatYaml& from, RunRecord& r) {
    auto text_of = [&](const char* key) { return from.get(key).value_or(""); };
    r.issue = to_number(from.get("issue"));
    r.agent = text_of("agent");
    r.status = parse_status(text_of("status")).value_or(RunStatus::unknown);
    r.reason_text = text_of("reason");
    r.reason = parse_reason(r.reason_text);
    r.exit_code.reset();
    if (auto code = from.get("exit_code"); code && !code->empty())
        r.exit_code = static_cast<int>(to_number(code, -1));
    r.start_time = text_of("start_time");
    r.end_time = text_of("end_time");
    r.ready_commit = text_of("ready_commit");
    r.ready_time = text_of("ready_time");
    r.pid = static_cast<pid_t>(to_number(from.get("pid")));
    r.pgid = static_cast<pid_t>(to_number(from.get("pgid")));
    r.pid_start = static_cast<std::uint64_t>(to_number(from.get("pid_start")));
    r.pid_ino = static_cast<std::uint64_t>(to_number(from.get("pid_ino")));
    r.supervisor_pid = static_cast<pid_t>(to_number(from.get("supervisor_pid")));
    r.supervisor_start = static_cast<std::uint64_t>(to_number(from.get("supervisor_start")));
    r.supervisor_ino = static_cast<std::uint64_t>(to_number(from.get("supervisor_ino")));
    r.boot_id = text_of("boot_id");
}

// The state cocode kept beside the seal, when there is such a file: one that cannot be read
// as kept leaves the run with no process to signal and an unknown status. nullopt: none.
std::optional<FlatYaml> kept_state(const fs::path& folder) {
    const fs::path path = state_path(folder);
    std::error_code ec;
    if (fs::symlink_status(path, ec).type() == fs::file_type::not_found) return std::nullopt;
    auto text = read_file_no_follow(path, 64 << 10);
    if (!text) return FlatYaml{};
    auto parsed = FlatYaml::parse(*text, path.string());
    return parsed ? std::move(*parsed) : FlatYaml{};
}

}  // namespace

namespace {

// A run whose run-info cannot be read, from what cocode kept of it: its state beside the
// seal, and its branch and base from the seal.
RunRecord record_from_kept(const fs::path& folder) {
    RunRecord r = record_from(FlatYaml{}, folder);
    const fs::path root = folder.parent_path().parent_path().parent_path();
    if (auto seal = read_seal(root, r.run_id); seal && *seal) {
        r.branch = (*seal)->branch;
        r.base_commit = (*seal)->base_commit;
        r.ready_marker = (*seal)->marker;
    }
    return r;
}

}  // namespace

std::string kept_field(const fs::path& folder, std::string_view key) {
    const auto kept = kept_state(folder);
    return kept ? kept->get(key).value_or("") : std::string();
}

std::optional<RunStatus> kept_status(const fs::path& folder) {
    const auto kept = kept_state(folder);
    if (!kept) return std::nullopt;
    RunRecord r;
    read_state(*kept, r);
    return r.status;
}

RunRecord record_from(const FlatYaml& info, const fs::path& folder) {
    auto text = [&](const char* key) { return info.get(key).value_or(""); };
    RunRecord r;
    r.folder = folder;
    // The run is the one its folder's name says: cocode named the folder; run-info.yaml (its
    // run_id field kept for the runner contract's readers) is the agent's to rewrite.
    r.run_id = folder.filename().string();
    r.issue_url = text("issue_url");
    r.issue_title = text("issue_title");
    // Its state from what cocode kept beside its seal, not from run-info (the agent's to have
    // rewritten); run-info's for a run from before that was kept.
    const auto kept = kept_state(folder);
    read_state(kept ? *kept : info, r);
    r.branch = text("branch");
    r.base_commit = text("base_commit");
    // Its branch and base as cocode made them (a run from before they were kept: run-info's).
    if (kept)
        for (auto [key, slot] : {std::pair{"branch", &r.branch}, {"base_commit", &r.base_commit}})
            if (auto value = kept->get(key); value && !value->empty()) *slot = *value;
    r.worktree = text("worktree");
    r.ready_marker = text("ready_marker");
    r.restarts = static_cast<int>(to_number(info.get("restarts")));
    r.error_summary = text("error_summary");
    r.parent_run_id = text("parent_run_id");
    r.round = std::max(1, static_cast<int>(to_number(info.get("round"), 1)));
    r.round_trigger = text("round_trigger");
    r.round_from = text("round_from");
    r.plan_round = text("round_kind") == "plan";
    r.request_comment = static_cast<long long>(to_number(info.get("request_comment")));
    return r;
}

Result<void> keep_state(const fs::path& folder, const std::function<void(FlatYaml&)>& edit) {
    const fs::path path = state_path(folder);
    return update_file_locked(
        path,
        [&](const std::optional<std::string>& current) -> Result<std::string> {
            FlatYaml fields;
            if (current) {
                auto parsed = FlatYaml::parse(*current, path.string());
                if (!parsed) return std::move(parsed).error();
                fields = std::move(*parsed);
            }
            edit(fields);
            return fields.render();
        },
        // Its lock can be seen, so held, by an agent: waited on for a moment, as theirs.
        0644, Durability::content, {}, kAgentLockWait);
}

Result<void> drop_planted_records(const RunFiles& files) {
    std::error_code ec;
    std::vector<fs::path> planted = {files.check_json(), files.folder / "check.md", files.end(),
                                     files.folder / "check-setup.log",
                                     files.folder / "check-egress.jsonl"};
    for (const auto& entry : fs::directory_iterator(files.folder, ec))
        if (const std::string name = entry.path().filename().string();
            name.rfind("verify-", 0) == 0)
            planted.push_back(entry.path());
    if (ec) return Error::general("cannot list " + files.folder.string() + ": " + ec.message());
    for (const auto& path : planted) {
        // A folder under such a name is no record anyone could read, and it stays: writing the
        // record there then fails, and says so.
        const auto type = fs::symlink_status(path, ec).type();
        if (type == fs::file_type::not_found || type == fs::file_type::directory) continue;
        fs::remove(path, ec);
        if (ec) return Error::general("cannot remove " + path.string() + ": " + ec.message());
    }
    return {};
}

Result<FlatYaml> read_run_info(const fs::path& folder) {
    RunFiles files{folder};
    // The agent's to rewrite: a regular file only, no link followed, no FIFO waited on.
    auto text = read_file_no_follow(files.info(), std::size_t{1} << 20);
    if (!text) return std::move(text).error();
    return FlatYaml::parse(*text, files.info().string());
}

Result<FlatYaml> update_run_info(const fs::path& folder, const std::function<void(FlatYaml&)>& edit,
                                 Durability durability) {
    RunFiles files{folder};
    FlatYaml result;
    auto updated = update_file_locked(
        files.info(),
        [&](const std::optional<std::string>& current) -> Result<std::string> {
            FlatYaml info;
            if (current) {
                auto parsed = FlatYaml::parse(*current, files.info().string());
                if (!parsed) return std::move(parsed).error();
                info = std::move(*parsed);
            }
            edit(info);
            result = info;
            return info.render();
        },
        0644, durability, {}, kAgentLockWait);
    if (!updated) return std::move(updated).error();
    return result;
}

std::string event_line(const std::string& run_id, const std::string& type,
                       const nlohmann::json& fields) {
    nlohmann::json event = {{"type", type},
                            {"run_id", run_id},
                            {"time", format_utc_timestamp(std::chrono::system_clock::now())}};
    if (fields.is_object()) event.update(fields);
    return json_dump(event);
}

std::string last_event_of(const fs::path& folder, std::initializer_list<std::string_view> types) {
    auto text = read_file_no_follow(RunFiles{folder}.events(), std::size_t{64} << 20);
    if (!text) return {};
    std::string last;
    std::size_t start = 0;
    while (start < text->size()) {
        std::size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        const auto event = nlohmann::json::parse(std::string_view(*text).substr(start, end - start),
                                                 nullptr, false);
        start = end + 1;
        if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) continue;
        const auto& type = event["type"].get_ref<const std::string&>();
        if (std::find(types.begin(), types.end(), type) != types.end()) last = type;
    }
    return last;
}

Result<void> append_event(const fs::path& folder, const std::string& run_id,
                          const std::string& type, nlohmann::json fields) {
    const std::string line = event_line(run_id, type, fields);
    RunFiles files{folder};
    // Both are the agent's to lock too: waited on for a moment, then written past.
    if (auto ok = append_line_locked(files.events(), line, kAgentLockWait); !ok) return ok;
    return append_line_locked(folder.parent_path() / kBusFile, line, kAgentLockWait);
}

RunList list_runs(const fs::path& runs_dir) {
    RunList list;
    std::error_code ec;
    std::vector<fs::path> folders;
    for (const auto& entry : list_folder(runs_dir, ec))
        if (entry.is_directory && is_run_id(entry.path.filename().string()))
            folders.push_back(entry.path);
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) {
        auto info = read_run_info(folder);
        if (!info) {
            list.problems.push_back(info.error().message);
            // Its agent may have put a FIFO or garbage there to hide it: what cocode kept of
            // it (its state, its seal) still lists it — status, logs and clean still find it.
            if (kept_state(folder)) list.runs.push_back(record_from_kept(folder));
            continue;
        }
        list.runs.push_back(record_from(*info, folder));
    }
    return list;
}

bool process_alive(pid_t pid) {
    if (pid <= 0 || ::kill(pid, 0) != 0) return false;
    auto info = process_info(pid);
    return info && info->state != 'Z';
}

Result<void> reserve_run_end(const RunFiles& files) {
    return reserve_file(files.end_reserved(), kRunEndSize);
}

Result<void> write_run_end(const RunFiles& files, const RunEnd& end) {
    nlohmann::json record = {
        {"status", status_name(end.status)}, {"reason", reason_name(end.reason)},
        {"exit_code", end.exit_code},        {"restarts", end.restarts},
        {"end_time", end.end_time},          {"ready_commit", end.ready_commit},
        {"error_summary", end.error_summary}};
    if (end.usage) record["usage"] = usage_json(*end.usage);
    std::string text = json_dump(record);
    // A summary too long for the space kept is cut, not the record.
    while (text.size() > kRunEndSize && !record["error_summary"].get<std::string>().empty()) {
        std::string summary = record["error_summary"];
        summary.resize(summary.size() > 256 ? summary.size() - 256 : 0);
        record["error_summary"] = summary;
        text = json_dump(record);
    }
    // Into the space kept for it, then under its name in one step: a reader finds no end, or
    // all of it (trailing blanks are JSON's whitespace). Written again (no space kept any
    // more), it is replaced atomically.
    std::error_code ec;
    if (!fs::exists(files.end_reserved(), ec))
        return write_file_atomic(files.end(), text, 0644, Durability::full);
    if (auto kept = overwrite_reserved(files.end_reserved(), text); !kept) return kept;
    if (::rename(files.end_reserved().c_str(), files.end().c_str()) != 0)
        return Error::from_errno(
            "cannot rename " + files.end_reserved().string() + " to " + files.end().string(),
            errno);
    return {};
}

std::optional<RunEnd> read_run_end(const RunFiles& files) {
    auto text = read_file_no_follow(files.end(), kRunEndSize * 2);
    if (!text) return std::nullopt;
    return parse_run_end(*text);
}

std::optional<RunEnd> parse_run_end(std::string_view text) {
    auto record = nlohmann::json::parse(text, nullptr, false);
    if (!record.is_object() || !record.contains("status")) return std::nullopt;
    auto status = parse_status(json_value(record, "status", ""));
    if (!status || is_active(*status)) return std::nullopt;
    RunEnd end;
    end.status = *status;
    end.reason = parse_reason(json_value(record, "reason", ""));
    end.exit_code = json_value(record, "exit_code", 1);
    end.restarts = json_value(record, "restarts", 0);
    end.end_time = json_value(record, "end_time", "");
    end.error_summary = json_value(record, "error_summary", "");
    end.ready_commit = json_value(record, "ready_commit", "");
    if (record.contains("usage")) end.usage = usage_from_json(record["usage"]);
    return end;
}

Result<FlatYaml> record_end(const RunFiles& files, const std::string& run_id, const RunEnd& end) {
    const std::string status(status_name(end.status));
    const std::string reason(reason_name(end.reason));
    // First where the agent cannot write: the end is cocode's from then on.
    if (auto kept = keep_state(files.folder,
                               [&](FlatYaml& fields) {
                                   fields.set("status", status);
                                   fields.set("reason", reason);
                                   fields.set_number("exit_code", end.exit_code);
                                   fields.set("end_time", end.end_time);
                                   if (!end.ready_commit.empty())
                                       fields.set("ready_commit", end.ready_commit);
                               });
        !kept)
        return std::move(kept).error();
    auto info = update_run_info(files.folder, [&](FlatYaml& fields) {
        fields.set("status", status);
        fields.set("reason", reason);
        fields.set_number("exit_code", end.exit_code);
        fields.set("end_time", end.end_time);
        fields.set("error_summary", end.error_summary);
        fields.set_number("restarts", end.restarts);
    });
    if (!info) return info;
    nlohmann::json event = {{"exit_code", end.exit_code}, {"status", status}};
    if (!reason.empty()) event["reason"] = reason;
    if (!end.error_summary.empty()) event["error"] = end.error_summary;
    if (auto ok = append_event(files.folder, run_id, end.exit_code == 0 ? "RUN_STOP" : "RUN_CRASH",
                               event);
        !ok)
        return std::move(ok).error();
    return info;
}

void set_supervisor(FlatYaml& info, const ProcessStamp& supervisor) {
    info.set_number("supervisor_pid", supervisor.pid);
    info.set_number("supervisor_start", static_cast<long long>(supervisor.start));
    info.set_number("supervisor_ino", static_cast<long long>(supervisor.ino));
}

void set_agent(FlatYaml& info, const ProcessStamp& agent) {
    info.set_number("pid", agent.pid);
    info.set_number("pgid", agent.pid);
    info.set_number("pid_start", static_cast<long long>(agent.start));
    info.set_number("pid_ino", static_cast<long long>(agent.ino));
}

bool dispatcher_alive(const RunRecord& record) {
    if (!record.boot_id.empty() && record.boot_id != boot_id()) return false;
    // Records from before start times were kept: only the pid to go by.
    return is_alive({record.supervisor_pid, record.supervisor_start, record.supervisor_ino},
                    /*legacy_pid_only=*/record.supervisor_start == 0);
}

RunMarks marks_of(const RunRecord& record) {
    RunMarks marks;
    marks.tag = "JRUN_ID=" + record.run_id;
    const bool same_boot = record.boot_id.empty() || record.boot_id == boot_id();
    if (same_boot && record.pgid == record.pid)
        marks.leader = {record.pid, record.pid_start, record.pid_ino};
    return marks;
}

Reconciliation reconciliation_of(RunStatus status, bool dispatcher_alive, bool end_kept) {
    if (!is_active(status) || dispatcher_alive) return Reconciliation::leave;
    return end_kept ? Reconciliation::record_kept_end : Reconciliation::mark_crashed;
}

Result<bool> reconcile(RunRecord& record) {
    const bool alive = is_active(record.status) && dispatcher_alive(record);
    if (reconciliation_of(record.status, alive, false) == Reconciliation::leave) return false;
    // The supervisor is gone: nobody will ever write this run's end. Stop what is left of
    // it so it cannot keep changing the worktree, then say what happened.
    stop_run_blocking(marks_of(record), std::chrono::seconds(2));
    // A run from before its state was kept beside its seal: what run-info said of it goes
    // there first, so that the end written below leaves it whole.
    if (!kept_state(record.folder))
        if (auto seeded = keep_state(record.folder,
                                     [&](FlatYaml& kept) {
                                         kept.set_number("issue", record.issue);
                                         kept.set("agent", record.agent);
                                         kept.set("start_time", record.start_time);
                                         kept.set("ready_commit", record.ready_commit);
                                     });
            !seeded)
            return std::move(seeded).error();
    // It may have ended for real, its end kept in run-end.json while the disk was full.
    RunFiles files{record.folder};
    const auto end = read_run_end(files);
    if (reconciliation_of(record.status, alive, end.has_value()) ==
        Reconciliation::record_kept_end) {
        auto written = record_end(files, record.run_id, *end);
        if (!written) return std::move(written).error();
        record = record_from(*written, record.folder);
        return true;
    }
    const std::string now = format_utc_timestamp(std::chrono::system_clock::now());
    const std::string summary =
        "the dispatcher (pid " + std::to_string(record.supervisor_pid) +
        ") is gone; the run was found " +
        (record.status == RunStatus::queued ? "never started" : "unfinished");
    // Whether it is still to be marked is cocode's record's to say (run-info's status is the
    // agent's to have rewritten); another process may have marked it meanwhile.
    bool changed = false;
    if (auto kept = keep_state(record.folder,
                               [&](FlatYaml& fields) {
                                   auto status = parse_status(fields.get("status").value_or(""));
                                   if (status && !is_active(*status)) return;
                                   changed = true;
                                   fields.set("status", status_name(RunStatus::failed));
                                   fields.set("reason", reason_name(StopReason::crashed));
                                   fields.set("end_time", now);
                               });
        !kept)
        return std::move(kept).error();
    auto updated = update_run_info(record.folder, [&](FlatYaml& info) {
        if (!changed) return;
        info.set("status", status_name(RunStatus::failed));
        info.set("reason", reason_name(StopReason::crashed));
        info.set("end_time", now);
        info.set("error_summary", summary);
    });
    if (!updated) return std::move(updated).error();
    if (!changed) {
        record = record_from(*updated, record.folder);
        return false;
    }
    if (auto ok = append_event(record.folder, record.run_id, "RUN_CRASH",
                               {{"reason", reason_name(StopReason::crashed)}, {"error", summary}});
        !ok)
        return std::move(ok).error();
    record = record_from(*updated, record.folder);
    return true;
}

PairSandbox pair_sandbox(const std::filesystem::path& runs_dir, const std::string& pair) {
    return {runs_dir.parent_path() / "sandboxes" / pair};
}

PairSandbox pair_sandbox(const std::filesystem::path& runs_dir, long issue,
                         const std::string& agent) {
    return pair_sandbox(runs_dir, std::to_string(issue) + "-" + agent);
}

}  // namespace cocode::run
