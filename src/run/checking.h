// A run being checked: which step of its check runs now (its clean tree, which verify) and
// since when, beside its seal where its agent cannot write (<root>/.cocode/seals/<run
// id>.checking). The judge writes it as each step starts and removes it when the check ends;
// `status` and the dashboard show the run as `checking` while the process that wrote it lives,
// and `cocode-dispatch stop` stops the check as it stops an agent (run::stop_request_path).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "core/result.h"

namespace cocode::run {

struct Checking {
    std::string step;                                  // "clean tree", "verify: tests"
    std::string step_started;                          // UTC timestamp
    std::optional<std::chrono::milliseconds> timeout;  // the step's, when it has one
};

std::filesystem::path checking_path(const std::filesystem::path& repo_root,
                                    const std::string& run_id);

// Written atomically, with this process's stamp (pid, start, boot).
Result<void> note_checking(const std::filesystem::path& repo_root, const std::string& run_id,
                           const Checking& step);
void clear_checking(const std::filesystem::path& repo_root, const std::string& run_id);

// The step under way, when a live process is checking the run; nullopt otherwise (none, or
// the process that wrote it is gone: a check that crashed is not `checking`).
std::optional<Checking> checking_now(const std::filesystem::path& repo_root,
                                     const std::string& run_id);

// Whether the run's last check was interrupted: kept in its state beside its seal (an agent's
// CHECK_INTERRUPTED in events.jsonl says nothing). `interrupted` false: its check ended.
Result<void> note_check_ended(const std::filesystem::path& run_folder, bool interrupted);
bool check_interrupted(const std::filesystem::path& run_folder);

// The same of publishing its verdict: a stop while the verdict went to GitHub leaves the
// verdict here, and says so (`stop`, `status`); `cocode-check --run ID --publish` sends it.
Result<void> note_publish_ended(const std::filesystem::path& run_folder, bool interrupted);
bool publish_interrupted(const std::filesystem::path& run_folder);

}  // namespace cocode::run
