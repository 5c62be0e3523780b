// How the supervisor learns of a run's commits without any help from git hooks. The
// post-commit hook stays the fast path; but an agent may run git with hooks turned off
// (gemini's shell tool sets core.hooksPath empty, `git -c core.hooksPath=/dev/null`), and its
// marker commit must still make the run READY.
//
// Event-driven, no polling: inotify on the files git writes when a commit lands — the
// worktree's HEAD and its reflog, the branch ref HEAD names, packed-refs — and on the run folder's
// run-info.yaml, which the hook rewrites when it records READY. The supervisor waits on
// fd() with its signals, and asks changed() which runs to look at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/files.h"
#include "core/result.h"
#include "git/git_files.h"

namespace cocode::agent {

class ReadyWatch {
  public:
    static Result<ReadyWatch> create();

    int fd() const { return fd_.get(); }

    // Starts watching run `key`: its worktree's git folders and its run folder. Called again
    // after the worktree's HEAD moved to another branch, it adds that branch's folder.
    Result<void> watch(std::size_t key, const git::GitDirs& dirs,
                       const std::filesystem::path& run_folder);
    // Stops watching run `key` (a folder others still watch stays watched for them).
    void forget(std::size_t key);

    // Reads what arrived without waiting; returns which runs' refs changed and whose
    // run-info was rewritten.
    struct Changes {
        std::set<std::size_t> refs;
        std::set<std::size_t> run_info;
    };
    Changes changed();

  private:
    explicit ReadyWatch(UniqueFd fd) : fd_(std::move(fd)) {}
    enum class What { refs, run_info };
    struct Interest {
        std::size_t key;
        std::string name;  // the file in the watched folder
        What what;
    };
    Result<void> add(const std::filesystem::path& folder, Interest interest, uint32_t mask);

    UniqueFd fd_;
    std::map<int, std::vector<Interest>> by_watch_;  // watch descriptor → who cares
    std::map<std::filesystem::path, int> watch_of_;  // folder → watch descriptor
};

}  // namespace cocode::agent
