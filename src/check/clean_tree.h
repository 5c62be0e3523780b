// Where the verify commands run (docs/check.md, "The verdict is about the commit"): a clean
// checkout of exactly the judged commit (a clone sharing the repository's objects) — nothing an
// agent left in its worktree, committed or not, ignored or not — in a folder of cocode's own under
// the repository's git folder
// (`cocode/trees/`), with the run's sealed environment over it (environment/view.h) and
// worktree_setup made afresh. Removed when done; one a killed check left is removed by the
// next check.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/files.h"
#include "core/result.h"
#include "environment/spec.h"
#include "environment/store.h"
#include "environment/view.h"

namespace cocode::check {

// What the clean tree gets besides the commit: from the run's seal, else the base commit's
// configuration.
struct TreeRules {
    config::WorktreeSetup setup;
    std::optional<environment::Spec> environment;  // none: no environment
    // The run's environment (its seal); "" when not sealed: the judged commit's own key.
    std::string environment_key;
    std::string base;                 // the commit that key is of
    std::filesystem::path repo_root;  // the main worktree: worktree_setup.copy copies from it
    std::filesystem::path store;      // the environments' store (environment::default_store)
    // Made inside an agent's sandbox (its critic), where the store and the repository's git
    // folder are read-only: the tree goes under `trees` (the agent's own /tmp), and the sealed
    // environment is copied in as it is, without building, keying or recording a use (the run
    // holds one). Empty: a check's own tree, in <git common dir>/cocode/trees.
    std::filesystem::path trees;
};

// What the tree got, for the check's `setup` item.
struct TreeSetup {
    std::string key;  // the environment's, "" for none
    environment::Mode mode = environment::Mode::copy;
    std::string source;
    std::vector<std::string> changed;  // key files the judged commit changed: a key of its own
    int setup_commands = 0;
    std::string failure;  // the one line of a setup that failed; "" when it did not
};

class CleanTree {
  public:
    // The tree of `commit` of the repository at `repo_dir` (any of its worktrees). Errors
    // only for what leaves nothing to judge in (git cannot check it out, no disk); a setup
    // that fails is said in setup().failure, the tree still made. `environment` is what the
    // verify commands get before the environment's own variables; `log_dir` takes setup.log.
    static Result<std::unique_ptr<CleanTree>> make(const std::filesystem::path& repo_dir,
                                                   const std::string& commit,
                                                   const TreeRules& rules,
                                                   const CommandRunner& runner,
                                                   const std::vector<std::string>& environment,
                                                   const std::filesystem::path& log_dir);
    ~CleanTree();
    CleanTree(const CleanTree&) = delete;
    CleanTree& operator=(const CleanTree&) = delete;

    const std::filesystem::path& path() const { return path_; }
    const std::vector<OverlayMount>& overlays() const { return view_.overlays; }
    const std::vector<std::string>& environment() const { return environment_; }
    const TreeSetup& setup() const { return setup_; }

  private:
    CleanTree() = default;
    Result<void> prepare(const std::string& commit, const TreeRules& rules,
                         const CommandRunner& runner, const std::filesystem::path& log_dir);

    std::filesystem::path repo_dir_;
    std::filesystem::path path_;  // <common>/cocode/trees/<name>
    std::filesystem::path scratch_;
    std::optional<FileLock> held_;
    environment::View view_;
    std::vector<std::string> environment_;
    TreeSetup setup_;
    std::string store_key_;  // the use recorded on the store
    std::filesystem::path store_;
};

// Where cocode keeps its own folders beside a repository: <git common dir>/cocode.
Result<std::filesystem::path> cocode_git_dir(const std::filesystem::path& repo_dir);

}  // namespace cocode::check
