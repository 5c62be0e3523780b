// Names of the files cocode-hook keeps in a hooks folder and in a worktree's git folder.
// Header-only on purpose: the installed shim (tools/cocode-hook/shim.cpp) includes it without
// linking anything of ours. docs/hooks.md describes each file.
#pragma once

namespace cocode::hook_files {

// In a worktree's own git folder (.git/worktrees/<name>/): one line, the absolute path of the
// run folder this worktree belongs to. Written by cocode-dispatch.
inline constexpr char kRunPointer[] = "cocode-run";

// Beside an installed hook `<name>`: the hook that was there before, run after ours.
inline constexpr char kChainedSuffix[] = ".cocode-chained";

// In the hooks folder: one line, the absolute path of the cocode-hook that installed the shim.
inline constexpr char kToolFile[] = "cocode-hook.tool";

// Present in the shim binary so that status and uninstall can tell our hook from another.
inline constexpr char kShimMagic[] = "cocode-hook-shim:v1";

// The environment variable that names the run folder (runner contract).
inline constexpr char kRunFolderEnv[] = "JRUN_RUN_FOLDER";

}  // namespace cocode::hook_files
