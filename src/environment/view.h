// How a prepared environment reaches a tree (an agent's worktree, a check's clean tree) so
// that what is written there reaches neither the store nor another tree: an overlay over each
// of its folders, in the mount namespace of the process that uses it (proc/spawn.h), writing
// into an upper folder of that tree's own; else a reflink copy, where the file system shares
// blocks; else a plain copy. Nothing is written into the store either way.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "environment/store.h"
#include "proc/spawn.h"

namespace cocode::environment {

enum class Mode { overlay, reflink, copy };
std::string_view mode_name(Mode mode);  // "overlay", "reflink", "copy"

struct ModeChoice {
    Mode mode = Mode::copy;
    std::string why;  // why not an overlay (and not a reflink), for doctor and the notices
};

// The view this machine gives a tree at `tree_dir` of an environment in `store`: an overlay
// when `overlay_wanted` (a sandboxed agent, a check) and the kernel mounts one with its upper
// folders in `scratch`; else a reflink copy when the store and the tree share a file system
// that makes them; else a copy. Each answer is tried for real, once per file system.
ModeChoice choose_mode(bool overlay_wanted, const std::filesystem::path& scratch,
                       const std::filesystem::path& store, const std::filesystem::path& tree_dir);

struct View {
    Mode mode = Mode::copy;
    // For the processes that use the tree: ChildOptions::overlays.
    std::vector<OverlayMount> overlays;
};

// The environment's paths made visible in `tree`. overlay: the mount points made in the tree,
// upper and work folders made (or, for a restart, kept) in `scratch`; a path the tree already
// has something at, or a file, is copied instead. reflink, copy: copied into the tree, never
// over a file the tree has.
Result<View> attach(const Entry& entry, const std::filesystem::path& tree,
                    const std::filesystem::path& scratch, Mode mode);

// Copies `from` (a file, a link or a folder, recursively; a link copied as a link, never
// followed) to `rel` beneath the folder `root`, sharing blocks when `reflink` and the file
// system can; modes kept, owner-writable; what is there already stays. Nothing is written
// through a link on the way or at the end (the tree may be an agent's commit): such a path is
// left as it is, and said in the answer (false).
Result<bool> copy_beneath(const std::filesystem::path& from, const std::filesystem::path& root,
                          const std::filesystem::path& rel, bool reflink);

}  // namespace cocode::environment
