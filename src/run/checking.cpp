#include "run/checking.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "proc/process_tree.h"
#include "run/run_folder.h"
#include "run/seal.h"

namespace cocode::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path checking_path(const fs::path& repo_root, const std::string& run_id) {
    return repo_root / kSealsDir / (run_id + ".checking");
}

Result<void> note_checking(const fs::path& repo_root, const std::string& run_id,
                           const Checking& step) {
    const ProcessStamp me = stamp_of(::getpid());
    json record = {{"pid", me.pid},     {"pid_start", me.start},
                   {"pid_ino", me.ino}, {"boot_id", boot_id()},
                   {"step", step.step}, {"step_started", step.step_started}};
    if (step.timeout) record["timeout_ms"] = step.timeout->count();
    return write_file_atomic(checking_path(repo_root, run_id), record.dump() + "\n");
}

void clear_checking(const fs::path& repo_root, const std::string& run_id) {
    std::error_code ec;
    fs::remove(checking_path(repo_root, run_id), ec);
}

std::optional<Checking> checking_now(const fs::path& repo_root, const std::string& run_id) {
    const fs::path path = checking_path(repo_root, run_id);
    auto text = read_file_no_follow(path, 64 * 1024);
    if (!text) return std::nullopt;
    const json record = json::parse(*text, nullptr, false);
    if (!record.is_object()) return std::nullopt;
    if (json_value(record, "boot_id", std::string()) != boot_id()) return std::nullopt;
    const ProcessStamp writer{static_cast<pid_t>(json_value(record, "pid", 0)),
                              json_value(record, "pid_start", std::uint64_t{0}),
                              json_value(record, "pid_ino", std::uint64_t{0})};
    if (writer.pid <= 0 || writer.start == 0 || !is_alive(writer)) return std::nullopt;
    Checking step;
    step.step = json_value(record, "step", std::string());
    step.step_started = json_value(record, "step_started", std::string());
    if (record.contains("timeout_ms") && record["timeout_ms"].is_number_integer())
        step.timeout = std::chrono::milliseconds(record["timeout_ms"].get<long long>());
    return step;
}

namespace {

// How a step after the agent (its check, its publishing) ended, kept in the run's state under
// `field`. Only where a state is kept already: a run from before states were kept gets none
// of only this field (record_from would take its empty issue and branch from it).
Result<void> note_ended(const fs::path& run_folder, const char* field, bool interrupted) {
    if (!kept_status(run_folder)) return {};
    return keep_state(
        run_folder, [&](FlatYaml& kept) { kept.set(field, interrupted ? "interrupted" : "done"); });
}

}  // namespace

Result<void> note_check_ended(const fs::path& run_folder, bool interrupted) {
    return note_ended(run_folder, "check", interrupted);
}

bool check_interrupted(const fs::path& run_folder) {
    return kept_field(run_folder, "check") == "interrupted";
}

Result<void> note_publish_ended(const fs::path& run_folder, bool interrupted) {
    return note_ended(run_folder, "publish", interrupted);
}

bool publish_interrupted(const fs::path& run_folder) {
    return kept_field(run_folder, "publish") == "interrupted";
}

}  // namespace cocode::run
