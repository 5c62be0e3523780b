#include "hook/run_locator.h"

#include <sys/stat.h>

#include <cerrno>

#include "core/files.h"
#include "hook/hook_files.h"

namespace cocode::hook {
namespace fs = std::filesystem;

namespace {

Result<fs::path> checked_folder(const fs::path& folder, const std::string& found_by) {
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0)
        return Error::general("run folder " + folder.string() + " (from " + found_by + ") is gone");
    if (!S_ISDIR(st.st_mode))
        return Error::general("run folder " + folder.string() + " (from " + found_by +
                              ") is not a folder");
    return folder;
}

}  // namespace

Result<std::optional<RunLocation>> locate_run(const char* run_folder_env,
                                              const std::optional<git::GitDirs>& dirs) {
    if (run_folder_env && *run_folder_env) {
        fs::path folder(run_folder_env);
        if (folder.is_relative())
            return Error::general(std::string(hook_files::kRunFolderEnv) +
                                  " must be an absolute path, got '" + folder.string() + "'");
        auto checked = checked_folder(folder, hook_files::kRunFolderEnv);
        if (!checked) return std::move(checked).error();
        return std::optional<RunLocation>(RunLocation{folder, hook_files::kRunFolderEnv});
    }
    if (!dirs) return std::optional<RunLocation>{};
    fs::path pointer = dirs->git_dir / hook_files::kRunPointer;
    struct stat st {};
    if (::stat(pointer.c_str(), &st) != 0) {
        if (errno == ENOENT) return std::optional<RunLocation>{};
        return Error::from_errno("cannot read " + pointer.string(), errno);
    }
    auto content = read_file(pointer, 8192);
    if (!content) {
        return Error::general(pointer.string() + ": corrupt run pointer (" +
                              content.error().message + ")");
    }
    std::string_view text = *content;
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    auto corrupt = [&](std::string_view why) {
        return Error::general(pointer.string() + ": corrupt run pointer: " + std::string(why) +
                              "; expected one line holding the run folder's absolute path");
    };
    if (text.empty()) return corrupt("it is empty");
    if (text.find('\0') != std::string_view::npos) return corrupt("it holds a NUL byte");
    if (text.find('\n') != std::string_view::npos) return corrupt("it has more than one line");
    if (text.front() != '/') return corrupt("the path is not absolute");
    fs::path folder{std::string(text)};
    auto checked = checked_folder(folder, pointer.string());
    if (!checked) return std::move(checked).error();
    return std::optional<RunLocation>(RunLocation{folder, pointer.string()});
}

Result<void> write_run_pointer(const fs::path& worktree_git_dir, const fs::path& run_folder) {
    if (run_folder.is_relative())
        return Error::usage("run folder must be absolute: " + run_folder.string());
    return write_file_atomic(worktree_git_dir / hook_files::kRunPointer,
                             run_folder.string() + "\n");
}

}  // namespace cocode::hook
