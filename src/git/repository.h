// libgit2 behind RAII: open a repository from anywhere inside a worktree, read HEAD, walk
// commits, and manage linked worktrees.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

struct git_repository;
struct git_reference;

namespace cocode::git {

struct CommitInfo {
    std::string id;       // full hex id
    std::string message;  // raw message: subject and body
    std::string summary;  // first line
};

// One file that differs between two commits, as `git diff --numstat -M` sees it.
struct FileChange {
    std::string path;      // the new path (the old one for a deletion)
    std::string old_path;  // differs from path for a rename
    char status = 'M';     // A added, M modified, D deleted, R renamed, T type changed
    int insertions = 0;
    int deletions = 0;
    bool binary = false;
};

// A file of a worktree as it stands, by git's reckoning: its blob id is what `git add` would
// store for it now.
struct SnapshotFile {
    std::string path;  // relative, '/'-separated
    std::string blob;  // hex id
};

struct WorktreeInfo {
    std::string name;
    std::filesystem::path path;
    bool valid = true;  // false when its folder is gone (prunable)
    bool locked = false;
};

class Repository {
  public:
    // Opens the repository containing `dir` (any folder inside a worktree, linked or main).
    static Result<Repository> open(const std::filesystem::path& dir);

    std::filesystem::path git_dir() const;     // this worktree's own git folder
    std::filesystem::path common_dir() const;  // the folder all worktrees share
    std::filesystem::path work_dir() const;    // empty for a bare repository
    bool is_linked_worktree() const;
    // The main worktree's folder, also from a linked worktree (whose common dir is
    // <main>/.git): where .cocode/ lives. Empty for a bare repository.
    std::filesystem::path main_work_dir() const;

    Result<CommitInfo> head() const;
    // The branch HEAD names ("main"), or nullopt when HEAD is detached or unborn.
    std::optional<std::string> head_branch() const;
    bool branch_exists(const std::string& branch) const;  // a local branch
    // Whether HEAD points at a commit (false in a repository made by `git init` alone).
    bool has_commits() const;
    // Paths of the work tree that differ from HEAD, untracked ones included (as `git status`
    // lists them): what an agent, starting from the last commit, will not see.
    Result<std::vector<std::string>> uncommitted_paths() const;
    // How many commits of local branch `branch` after `base` neither a remote-tracking ref nor
    // another local branch holds: what would be lost with the branch. An error when it cannot be
    // told (no such base, a repository that cannot be walked): never read an error as zero.
    Result<std::size_t> unpushed_commits(const std::string& branch, const std::string& base) const;
    // Deletes a local branch that no worktree has checked out.
    Result<void> delete_branch(const std::string& branch);
    Result<CommitInfo> lookup(const std::string& revision) const;  // any rev-parse spelling
    // Is commit `ancestor` reachable from `descendant` (or the same commit)?
    Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) const;
    // A file's content as commit `revision` has it; nullopt when it has no such file.
    Result<std::optional<std::string>> file_at(const std::string& revision,
                                               const std::string& path) const;
    // The worktree as it stands — tracked and untracked files alike, ignored ones and
    // submodules left out — written into the object store as a tree (hex id): what
    // `git add -A && git write-tree` would make, without touching the index on disk. Files
    // whose stat matches the index are not read again; others are stored as blobs.
    Result<std::string> worktree_tree() const;
    // The same files (regular files only, no links), with their blob ids, sorted by path,
    // without a tree and without writing anything: one walk of the worktree against git's
    // index (its stat data), hashing only the files that differ from it and untracked ones.
    Result<std::vector<SnapshotFile>> worktree_files() const;
    // A commit of `tree` on `parent` with `message`, which no ref points at (nothing moves, no
    // hook runs): for judging a worktree as it stands with the tools that judge commits.
    Result<std::string> commit_unreferenced(const std::string& tree, const std::string& parent,
                                            const std::string& message) const;

    // Commits reachable from `head` and not from `base`, newest first: `git log base..head`.
    Result<std::vector<CommitInfo>> commits_between(const std::string& base,
                                                    const std::string& head) const;
    // Commits reachable from `head` and from none of `hidden`, newest first.
    Result<std::vector<CommitInfo>> commits_between(const std::vector<std::string>& hidden,
                                                    const std::string& head) const;

    // What changed from `base` to `head` (trees compared, renames found), sorted by path.
    Result<std::vector<FileChange>> changed_files(const std::string& base,
                                                  const std::string& head) const;

    // Creates branch `branch` at `from` and a linked worktree `name` at `path` with that
    // branch checked out. Refuses an existing branch or worktree name.
    Result<WorktreeInfo> add_worktree(const std::string& name, const std::filesystem::path& path,
                                      const std::string& branch, const std::string& from);
    // A linked worktree `name` at `path` with the existing branch `branch` checked out.
    Result<WorktreeInfo> add_worktree_on(const std::string& name, const std::filesystem::path& path,
                                         const std::string& branch);
    Result<std::vector<WorktreeInfo>> worktrees() const;
    // Deletes the worktree's folder, `expected` (where cocode made it, whatever its entry's
    // `gitdir` — the worktree's own to rewrite — names), and its administrative files. Without
    // `force`, refuses a worktree with uncommitted changes or a lock, or whose entry names
    // another folder.
    Result<void> remove_worktree(const std::string& name, bool force,
                                 const std::filesystem::path& expected);
    // Drops the administrative files of worktrees whose folder is gone; returns their names.
    Result<std::vector<std::string>> prune_worktrees();

    // The URL of remote `name` ("origin"); an error when there is no such remote.
    Result<std::string> remote_url(const std::string& name) const;
    // A configuration value as git resolves it here (repository, global and system files):
    // "user.name". nullopt when unset.
    std::optional<std::string> config_string(const std::string& name) const;
    // Adds `pattern` to the repository's own ignore list (`info/exclude` of the common dir),
    // once: what cocode writes into a work tree stays out of every tracked file.
    Result<void> exclude(const std::string& pattern) const;

    git_repository* raw() const { return repo_.get(); }

  private:
    struct Free {
        void operator()(git_repository* repo) const;
    };
    explicit Repository(git_repository* repo) : repo_(repo) {}
    Result<WorktreeInfo> check_out_worktree(const std::string& name,
                                            const std::filesystem::path& path,
                                            git_reference* branch);
    std::unique_ptr<git_repository, Free> repo_;
};

// libgit2's version, "1.5.1".
std::string libgit2_version();

}  // namespace cocode::git
