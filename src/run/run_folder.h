// A run's folder (.cocode/runs/<run_id>/), its run-info.yaml and its events, as the runner
// contract lays them out plus cocode's own fields (docs/runs.md).
//
// run-info.yaml is shared with cocode-hook, which sets `ready_commit` from inside git: every
// change here is a read-modify-write under `run-info.yaml.lock`, the lock the hook takes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/files.h"
#include "core/flat_yaml.h"
#include "core/result.h"
#include "core/run_id.h"
#include "proc/process_tree.h"
#include "run/states.h"
#include "run/usage.h"

namespace cocode::run {

inline constexpr char kRunsDir[] = ".cocode/runs";
inline constexpr char kBusFile[] = "events.jsonl";  // in kRunsDir: every run's events
// A run folder is made under this prefix and the run id, then renamed to the run id once its
// files are all there: a start cut short leaves no run folder that cannot be read.
inline constexpr char kMakingPrefix[] = ".making-";
inline constexpr char kRunInfoVersion[] = "1";
inline constexpr char kCheckJsonFile[] = "check.json";  // cocode-check's verdict, in the folder

struct RunFiles {
    std::filesystem::path folder;

    std::filesystem::path prompt() const { return folder / "prompt.md"; }
    std::filesystem::path stdout_file() const { return folder / "agent-stdout.txt"; }
    std::filesystem::path stderr_file() const { return folder / "agent-stderr.txt"; }
    std::filesystem::path output() const { return folder / "output.md"; }
    std::filesystem::path info() const { return folder / "run-info.yaml"; }
    // Taken for every change to run-info.yaml, by the dispatcher and by the hook.
    std::filesystem::path info_lock() const { return folder / "run-info.yaml.lock"; }
    std::filesystem::path events() const { return folder / "events.jsonl"; }
    std::filesystem::path issue_body() const { return folder / "issue.md"; }
    // A round's feedback (a review, a failing check, words typed at `continue`), as data.
    std::filesystem::path feedback() const { return folder / "feedback.md"; }
    // cocode-check's verdict on the run (docs/check.schema.json).
    std::filesystem::path check_json() const { return folder / kCheckJsonFile; }
    // The run's end, once it has ended: absent before, complete JSON from the moment it shows.
    std::filesystem::path end() const { return folder / "run-end.json"; }
    // Space kept from the start for the end, which is written there first and then renamed to
    // end(): that needs no new block, so the end survives a full disk (see RunEnd).
    std::filesystem::path end_reserved() const { return folder / ".run-end.reserved"; }
};

// A pair's (issue, agent) own HOME, /tmp and git storage in the sandbox (docs/security.md,
// "The sandbox"): .cocode/sandboxes/<issue>-<agent>/ beside the runs folder, not in a run's (its
// CLI's login is copied into that HOME, and a run folder holds no secret). One per pair, kept
// for its rounds: a CLI records its sessions' paths in its own state, and goes on there.
struct PairSandbox {
    std::filesystem::path folder;
    std::filesystem::path home() const { return folder / "home"; }
    std::filesystem::path tmp() const { return folder / "tmp"; }
    // The agent's git storage of its own (git/agent_repo.h), made afresh for each run.
    std::filesystem::path git() const { return folder / "git"; }
};
PairSandbox pair_sandbox(const std::filesystem::path& runs_dir, long issue,
                         const std::string& agent);
// The same by the pair's name ("<issue>-<agent>", the worktree's).
PairSandbox pair_sandbox(const std::filesystem::path& runs_dir, const std::string& pair);

// What `status` shows and `check` reads: run-info.yaml, typed.
struct RunRecord {
    std::filesystem::path folder;
    std::string run_id;
    long issue = 0;
    std::string issue_url;
    std::string issue_title;  // as the run got it: the agent's to rewrite, shown escaped
    std::string agent;
    RunStatus status = RunStatus::unknown;
    StopReason reason = StopReason::none;
    std::string reason_text;  // as written: the word itself when reason is `other`
    std::optional<int> exit_code;
    pid_t pid = 0;
    pid_t pgid = 0;
    std::uint64_t pid_start = 0;  // the agent's start time (clock ticks since boot)
    std::uint64_t pid_ino = 0;    // the agent's pidfs inode (0: not known)
    pid_t supervisor_pid = 0;
    std::uint64_t supervisor_start = 0;
    std::uint64_t supervisor_ino = 0;
    std::string boot_id;  // the boot both were started in
    std::string start_time;
    std::string end_time;
    std::string branch;
    std::string base_commit;
    std::filesystem::path worktree;
    std::string ready_commit;
    std::string ready_time;    // when cocode saw READY (its state file); empty: not known
    std::string ready_marker;  // the one this run's agent was given
    int restarts = 0;
    std::string error_summary;
    // Rounds on the pull request (docs/review.md): a round is a run of its own, continuing
    // `parent_run_id` on the same branch. A run resumed with --resume keeps its parent's round.
    std::string parent_run_id;
    int round = 1;
    std::string round_trigger;      // "terminal", "review by @login", "check <name>"
    std::string round_from;         // the branch's head when the round began
    bool plan_round = false;        // a plan round (round_kind: plan), which writes nothing
    long long request_comment = 0;  // the GitHub comment that asked for the round, if one did
};

RunRecord record_from(const FlatYaml& info, const std::filesystem::path& folder);

// What proves a pid is still the process recorded, into run-info's fields: the supervisor's
// (supervisor_pid, supervisor_start, supervisor_ino) and the agent's (pid, pgid, pid_start,
// pid_ino; the agent leads its own group).
void set_supervisor(FlatYaml& info, const ProcessStamp& supervisor);
void set_agent(FlatYaml& info, const ProcessStamp& agent);

// The run's state as cocode knows it, kept beside its seal (`.cocode/seals/<run id>.state`),
// where its agent cannot write: issue, agent, branch, base_commit, status, reason, exit_code,
// start_time, end_time, ready_commit and ready_time (READY as cocode read it in the commits it
// took back), and the process fields above with `boot_id`. Read-modify-written under a lock of its
// own there. run-info.yaml keeps the same fields for the runner contract's readers, but it is the
// agent's to rewrite: record_from takes these from here, so that what cocode signals, whether a run
// is running and how it ended are never what an agent wrote.
Result<void> keep_state(const std::filesystem::path& folder,
                        const std::function<void(FlatYaml&)>& edit);

// One field of the state kept beside its seal; "" when there is none.
std::string kept_field(const std::filesystem::path& folder, std::string_view key);

// The run's status as kept beside its seal; nullopt when no state is kept for `folder` (a run
// from before states were kept, or a folder that is not a run's: a check's report).
std::optional<RunStatus> kept_status(const std::filesystem::path& folder);

// What the agent may have planted, when it is gone, under the names cocode writes only after
// it (the verdict, its report and logs, the end): files and links removed (links as links), so
// that whatever is read under those names afterwards is cocode's; a folder, which no reader
// takes for a record, is left for the writer to fail on. Called with none of the run's
// processes left.
Result<void> drop_planted_records(const RunFiles& files);

// How a run ended, as the dispatcher knew it. Written first into run-end.json, in the space
// reserved when the run was prepared, then into run-info.yaml and the events; should those
// fail (a full disk), the supervisor keeps it and tries again, and reconcile() writes it
// into run-info from run-end.json once there is room — never "crashed" for a run that ended.
struct RunEnd {
    RunStatus status = RunStatus::failed;
    StopReason reason = StopReason::none;
    int exit_code = 0;
    int restarts = 0;
    std::string end_time;
    std::string error_summary;
    std::string ready_commit;  // as the dispatcher knew it, for its report; run-info keeps its own
    std::optional<RunUsage> usage;  // tokens and cost, when the agent reported any
};
inline constexpr std::size_t kRunEndSize = 4096;
Result<void> reserve_run_end(const RunFiles& files);
Result<void> write_run_end(const RunFiles& files, const RunEnd& end);
std::optional<RunEnd> read_run_end(const RunFiles& files);
// The end in run-end.json's text; nullopt when it is not an end (the reserved blanks, a
// half-written or foreign file, a state that has not ended).
std::optional<RunEnd> parse_run_end(std::string_view text);

// The end in run-info.yaml (status, reason, exit code, end time, summary, restarts) and the
// RUN_STOP or RUN_CRASH event; the updated fields are returned.
Result<FlatYaml> record_end(const RunFiles& files, const std::string& run_id, const RunEnd& end);

Result<FlatYaml> read_run_info(const std::filesystem::path& folder);

// Read-modify-write of run-info.yaml under its lock; `edit` gets the current fields.
Result<FlatYaml> update_run_info(const std::filesystem::path& folder,
                                 const std::function<void(FlatYaml&)>& edit,
                                 Durability durability = Durability::full);

// One JSON line in the run's events.jsonl and in the bus beside the run folders, each
// appended under its lock. `type` is RUN_START, RUN_STOP, RUN_CRASH (READY comes from the
// hook); `time` and `run_id` are added.
Result<void> append_event(const std::filesystem::path& folder, const std::string& run_id,
                          const std::string& type,
                          nlohmann::json fields = nlohmann::json::object());
// The type of the last event in the run's events.jsonl that is one of `types`; "" when none
// is (or the file cannot be read: it is read as data, no link followed, 64 MiB at most).
std::string last_event_of(const std::filesystem::path& folder,
                          std::initializer_list<std::string_view> types);
// The line append_event writes, without its newline: one line of JSON whatever the fields
// hold (an agent's stderr can hold any bytes; those that are not UTF-8 are replaced).
std::string event_line(const std::string& run_id, const std::string& type,
                       const nlohmann::json& fields);

// Every run under `runs_dir`, oldest first (run ids sort by time). A folder whose
// run-info.yaml cannot be read is skipped and named in `problems`.
struct RunList {
    std::vector<RunRecord> runs;
    std::vector<std::string> problems;
};
RunList list_runs(const std::filesystem::path& runs_dir);

// Is the process alive (and not a zombie)? A bare pid: for what this process started itself.
bool process_alive(pid_t pid);

// Is the run's recorded dispatcher still the process that recorded it (same boot, same pid,
// same start time)? A pid that was handed to another process since is not.
bool dispatcher_alive(const RunRecord& record);

// What proves a process is the run's (process_tree.h): its group while the recorded agent
// provably led it, and its JRUN_ID tag. After a reboot only the tag.
RunMarks marks_of(const RunRecord& record);

// A run marked running whose dispatcher is gone cannot finish: mark it failed (crashed),
// write RUN_CRASH, and return true. Its agent's processes, if any survive, are killed
// first (they would otherwise keep writing into a run nobody watches); only those proven
// to be the run's.
Result<bool> reconcile(RunRecord& record);

// What reconcile() does with a run, from what it finds: an ended run, or one whose dispatcher
// lives, is left; a run whose dispatcher is gone gets the end it kept in run-end.json (it ended
// while the disk was full), else is marked failed, reason crashed ("never started" when it was
// still queued, else "unfinished").
enum class Reconciliation { leave, record_kept_end, mark_crashed };
Reconciliation reconciliation_of(RunStatus status, bool dispatcher_alive, bool end_kept);

}  // namespace cocode::run
