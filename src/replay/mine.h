// `cocode-dispatch replay mine` (docs/report.md, "The replay set"): the default branch's
// first-parent history turned into tasks. Each change that may be one (replay/task.h) is tried
// for real: its verify commands run, `repeats` times each, in a clean tree of its base with its
// test files (the hidden tests) and in a clean tree of the change, each with its environment.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "environment/store.h"
#include "issues/source.h"
#include "replay/task.h"

namespace cocode::replay {

struct MineOptions {
    std::filesystem::path repo_root;
    std::string revision;     // the default branch
    std::size_t limit = 200;  // commits walked
    std::optional<std::chrono::system_clock::time_point> since;
    MineLimits limits;
    const config::Config* config = nullptr;  // its verify commands judge the tasks
    issues::IssueSource* source = nullptr;   // the issues changes close; may be null
    // What runs the trees' setup and the verify commands (agent::confined_runner).
    CommandRunner runner;
    int repeats = 3;
    std::function<void(const std::string&)> progress;  // a line per change
};

struct Mined {
    std::vector<Task> tasks;                                   // new this time
    std::vector<std::pair<std::string, std::string>> skipped;  // commit, why
    std::size_t verify_runs = 0;                               // verify commands run
};

Result<Mined> mine(const MineOptions& options);

}  // namespace cocode::replay
