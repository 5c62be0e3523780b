// Shared test fixtures: temporary folders and real git repositories made with the git CLI.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cocode::test {

// A fresh folder under $TMPDIR, removed with everything in it at the end of the test.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& child) const { return path_ / child; }

  private:
    std::filesystem::path path_;
    bool keep_ = false;
};

struct Shell {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// Runs `/bin/sh -c script` in `cwd`.
Shell sh(const std::string& script, const std::filesystem::path& cwd,
         const std::string& input = "");
// Runs the script and fails the test (with its output) when it does not exit 0; returns stdout.
std::string sh_ok(const std::string& script, const std::filesystem::path& cwd);

// `git init` with one commit ("base"), made with the CLI.
void make_repo(const std::filesystem::path& dir);

// A project on an origin, as the machines and runners of the watch and action tests clone it:
// make_repo(dir), then for each (name, work) a script agent .cocode/<name>.sh that runs the
// shell lines `work` and commits everything with the ready marker, a .cocode/config.json naming
// those agents and holding the rest of `config`, all committed and pushed to a bare
// `origin.git` beside `dir` whose HEAD is main.
void make_project_on_origin(const std::filesystem::path& dir,
                            const std::vector<std::pair<std::string, std::string>>& agents,
                            nlohmann::json config);

std::string read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const std::string& text);
std::vector<std::string> read_lines(const std::filesystem::path& path);
std::string quote(const std::string& s);  // single-quoted for sh

// The build's binaries.
std::filesystem::path hook_tool();
std::filesystem::path hook_shim();
std::filesystem::path tool_path(const std::string& name);

// Waits until `done` holds (looking every 20 ms), at most `limit`; whether it came to hold.
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
}

// The reliability campaign (ci/reliability) sets COCODE_CAMPAIGN=1: its cases run at the
// campaign's scale then, and at a small one in the normal test run.
bool campaign();
inline int at_scale(int here, int in_campaign) { return campaign() ? in_campaign : here; }

}  // namespace cocode::test
