// A real repository with cocode's hook installed through the CLI, and runs made the way
// cocode-dispatch will make them: a linked worktree, a run folder, the run pointer.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "test_support.h"

namespace cocode::test {

struct RunWorktree {
    std::filesystem::path worktree;
    std::filesystem::path run_folder;
    std::string run_id;
    std::string base;
};

class HookRepo : public ::testing::Test {
  protected:
    void SetUp() override;
    // `cocode-hook install --repo <repo> <extra>`; fails the test unless it exits 0.
    std::string install(const std::string& extra = "");
    // A worktree on branch cocode/<name> with its run folder and pointer.
    RunWorktree add_run(const std::string& name,
                        const std::optional<std::string>& marker = std::nullopt,
                        const std::optional<std::filesystem::path>& bus = std::nullopt);
    std::vector<nlohmann::json> events(const RunWorktree& run) const;
    std::string head(const std::filesystem::path& worktree) const;

    TempDir dir;
    std::filesystem::path repo;
};

}  // namespace cocode::test
