#pragma once
// The fixture of the tests that run cocode-dispatch as a user does: a real repository made
// with the git CLI and six local issues, the reference agents of examples/agents/, and what is
// left in /proc afterwards.
#include <gtest/gtest.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/files.h"
#include "proc/process_tree.h"
#include "run/run_folder.h"
#include "test_support.h"

namespace cocode::test {

namespace fs = std::filesystem;

inline std::string agent_path(const std::string& name) {
    // As a path: g++ 12 at -O1 took the concatenation of the literal for an overflow (a false
    // -Warray-bounds, GCC bug 105329's kin) once the standard headers came precompiled.
    return (fs::path(COCODE_SOURCE_DIR) / "examples/agents" / name).string();
}

// Processes whose command line holds `mark`, read from /proc: seen from outside any sandbox.
inline std::vector<pid_t> processes_marked(const std::string& mark) {
    std::vector<pid_t> out;
    for (const auto& p : list_processes()) {
        if (p.state == 'Z') continue;
        std::string cmdline = read_text("/proc/" + std::to_string(p.pid) + "/cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(mark) != std::string::npos) out.push_back(p.pid);
    }
    return out;
}

// Whether `needle` (a key, a token) is in any file below `folder`.
inline bool found_below(const fs::path& folder, const std::string& needle) {
    for (const auto& entry : fs::recursive_directory_iterator(folder))
        if (entry.is_regular_file() && read_text(entry.path()).find(needle) != std::string::npos)
            return true;
    return false;
}

class DispatchRun : public ::testing::Test {
  protected:
    using json = nlohmann::json;
    using Clock = std::chrono::steady_clock;
    void SetUp() override {
        repo_ = dir_ / "repo";
        make_repo(repo_);
        sh_ok("git config user.name 'cocode agent' && git config user.email agent@cocode.invalid",
              repo_);
        fs::create_directories(repo_ / ".cocode/issues");
        for (int n = 1; n <= 6; ++n) {
            json issue = {{"number", n},
                          {"title", "Issue " + std::to_string(n)},
                          {"body", "Do thing " + std::to_string(n) + ".\n"},
                          {"state", "open"},
                          {"labels", {{{"name", n <= 2 ? "cocode" : "later"}}}}};
            write_text(repo_ / ".cocode/issues" / (std::to_string(n) + ".json"), issue.dump());
        }
    }

    // Writes the configuration and commits it with the issues, so the repository is clean.
    void configure(json config) {
        for (auto& [name, agent] : config["agents"].items()) {
            // Agents' git stays hermetic too: the test's own config isolation passes through.
            if (!agent.contains("env")) agent["env"] = json::array();
            for (const char* variable : {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"}) {
                if (agent["env"].is_object())
                    agent["env"][variable] = true;
                else
                    agent["env"].push_back(variable);
            }
        }
        write_text(repo_ / ".cocode/config.json", config.dump(2));
        sh_ok("git add -A .cocode && git commit -q -m 'cocode config' && true", repo_);
    }

    Shell dispatch(const std::string& args, const std::string& env = "") {
        return sh(env + quote(tool_path("cocode-dispatch").string()) + " " + args, repo_);
    }

    std::vector<run::RunRecord> runs() { return run::list_runs(repo_ / ".cocode/runs").runs; }

    const run::RunRecord& only_run() {
        all_ = runs();
        EXPECT_EQ(all_.size(), 1u);
        if (all_.empty()) throw std::runtime_error("no run");
        return all_.front();
    }

    std::vector<json> events(const fs::path& file) {
        std::vector<json> out;
        for (const auto& line : read_lines(file)) out.push_back(json::parse(line));
        return out;
    }

    std::vector<std::string> event_types(const run::RunRecord& r) {
        std::vector<std::string> out;
        for (const auto& e : events(r.folder / "events.jsonl")) out.push_back(e["type"]);
        return out;
    }

    static bool nothing_left(const run::RunRecord& r) {
        return run_processes(RunMarks{{}, "JRUN_ID=" + r.run_id}).empty();
    }

    TempDir dir_;
    fs::path repo_;
    std::vector<run::RunRecord> all_;
};

}  // namespace cocode::test
