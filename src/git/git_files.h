// Reading a repository's files directly, without libgit2: where its git folders are, what
// HEAD points at, a loose commit, and whether a short walk of loose commits finds a marker.
//
// This is the post-commit hook's path. Loading libgit2 and its libraries costs ~3.5 ms per
// process start, more than the whole budget of a commit hook (docs/performance.md), while
// the commit git has just written is a loose object two small file reads away. Anything
// unusual (a packed object, a reftable) is reported as `Unavailable`, and the caller asks
// the git CLI instead.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::git {

struct GitDirs {
    std::filesystem::path git_dir;     // this worktree's own: .git, or .git/worktrees/<name>
    std::filesystem::path common_dir;  // shared by all worktrees: objects, refs, hooks
};

// From what git hands a hook: `git_dir_env` (GIT_DIR, set by git in linked worktrees) when
// given, else `<work_tree>/.git` (a folder, or a file holding `gitdir: <path>`).
// nullopt when there is no repository there.
std::optional<GitDirs> locate_git_dirs(const std::filesystem::path& work_tree,
                                       const char* git_dir_env);

// Whether `dir` may be in a git repository, asked of the file system alone: false only when
// GIT_DIR is unset and neither `dir` nor any folder above it holds `.git` or is a repository's
// own folder (HEAD, objects/ and refs/). A command that reads only GitHub then never loads
// libgit2 outside a repository (docs/performance.md); true means "ask libgit2".
bool may_be_in_repository(const std::filesystem::path& dir);

// The commit id HEAD resolves to (hex), following symbolic refs through loose refs and
// packed-refs. Error when HEAD is unborn or the files are not in a form we read.
Result<std::string> read_head_id(const GitDirs& dirs);

// The ref HEAD points at ("refs/heads/main"), or nullopt when HEAD is detached or unreadable.
std::optional<std::string> head_symbolic_ref(const GitDirs& dirs);

// A loose commit's message (everything after the header), or nullopt when the object is not
// loose (packed, or in an alternate): the caller falls back to `git cat-file`.
Result<std::optional<std::string>> read_loose_commit_message(
    const std::filesystem::path& common_dir, const std::string& id);

// The message part of a raw commit object ("tree …\nparent …\n…\n\n<message>").
std::string commit_message_of(std::string_view raw_commit);

// A loose commit as the walk below needs it.
struct LooseCommit {
    std::vector<std::string> parents;
    std::string message;
};
// nullopt when the object is not loose.
Result<std::optional<LooseCommit>> read_loose_commit(const std::filesystem::path& common_dir,
                                                     const std::string& id);

// The ids of every ref under refs/remotes/<remote>/, loose or packed; nullopt when the refs are
// not in files we read (a reftable).
std::optional<std::vector<std::string>> remote_tips(const std::filesystem::path& common_dir,
                                                    const std::string& remote);

// Whether any commit reachable from `from`, walking parents but not past the `stops`, has
// `needle` in its message: the pre-push gate's question for a push that is not cocode's,
// answered from git's loose objects as the post-commit hook reads its commit. nullopt when
// the walk cannot answer exactly — an object not loose, more than `limit` commits, grafts,
// replace refs or a shallow history — and the caller asks `git rev-list`. Every commit the
// push sends is walked (the stops are commits the remote has), so `false` is exact.
std::optional<bool> loose_walk_finds(const std::filesystem::path& common_dir,
                                     const std::string& from, const std::vector<std::string>& stops,
                                     std::string_view needle, std::size_t limit = 256);

}  // namespace cocode::git
