#include "hook/installer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/files.h"
#include "git/cli.h"
#include "hook/hook_files.h"
#include "proc/command.h"

namespace cocode::hook {
namespace fs = std::filesystem;

namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        lines.push_back(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    }
    return lines;
}

// What git prints about the repository the user named: its failure is the user's to fix (2).
Result<std::string> git_about(const fs::path& repo_dir, const std::vector<std::string>& args) {
    auto out = git::git_output(repo_dir, args);
    if (!out && out.error().code == ExitCode::general) return Error::usage(out.error().message);
    return out;
}

fs::path hook_path(const HooksLocation& where, const std::string& name) {
    return where.hooks_dir / name;
}
fs::path chained_path(const HooksLocation& where, const std::string& name) {
    return where.hooks_dir / (name + hook_files::kChainedSuffix);
}

bool exists_no_follow(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

bool inside(const fs::path& dir, const fs::path& root) {
    auto rel = dir.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
}

// A hooks folder we create inside the work tree (a relative core.hooksPath in a fresh linked
// worktree, where husky's `.husky/_` does not exist yet) gets the ignore file husky gives its
// own, so that nothing we put there can end up in a commit.
constexpr std::string_view kIgnoreAll = "*\n";

// Our shim: a regular file whose bytes carry the shim's magic.
bool is_our_shim(const fs::path& p, std::string* content = nullptr) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    auto bytes = read_file(p);
    if (!bytes) return false;
    bool ours = bytes->find(hook_files::kShimMagic) != std::string::npos;
    if (ours && content) *content = std::move(bytes).value();
    return ours;
}

bool same_file_content(const fs::path& a, const fs::path& b) {
    struct stat sa {
    }, sb{};
    if (::lstat(a.c_str(), &sa) != 0 || ::lstat(b.c_str(), &sb) != 0) return false;
    if ((sa.st_mode & 07777) != (sb.st_mode & 07777) ||
        (sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
        return false;
    if (S_ISLNK(sa.st_mode)) {
        std::error_code ea, eb;
        auto ta = fs::read_symlink(a, ea), tb = fs::read_symlink(b, eb);
        return !ea && !eb && ta == tb;
    }
    auto ca = read_file(a), cb = read_file(b);
    return ca && cb && *ca == *cb;
}

// Files we write must not show up as changes in the work tree, where an agent's
// `git add .` would commit them.
Result<void> check_not_seen_by_git(const HooksLocation& where, const std::string& name) {
    if (!where.work_tree) return {};
    if (inside(where.hooks_dir, where.common_dir)) return {};  // .git/hooks: git never sees it
    if (!inside(where.hooks_dir, *where.work_tree)) return {};
    for (const std::string& file :
         {name, name + hook_files::kChainedSuffix, std::string(hook_files::kToolFile)}) {
        // check-ignore exits 1 for a path git does not ignore: an answer, not a failure.
        auto r = git::run_git(*where.work_tree, {"check-ignore", "-q", "--no-index",
                                                 (where.hooks_dir / file).string()});
        if (!r) return std::move(r).error();
        if (r->exit_code != 0) {
            return Error::usage("hooks folder " + where.hooks_dir.string() +
                                " is inside the work tree and git does not ignore " + file +
                                ": installing would put files in commits. Ignore the folder "
                                "(e.g. a .gitignore holding '*' in it, as husky does) or pass "
                                "--allow-tracked");
        }
    }
    return {};
}

}  // namespace

std::string_view state_name(HookState state) {
    switch (state) {
        case HookState::absent:
            return "absent";
        case HookState::installed:
            return "installed";
        case HookState::outdated:
            return "outdated";
        case HookState::foreign:
            return "foreign";
    }
    return "unknown";
}

Result<HooksLocation> locate_hooks(const fs::path& repo_dir) {
    auto paths = git_about(repo_dir, {"rev-parse", "--path-format=absolute", "--git-path", "hooks",
                                      "--git-common-dir", "--is-bare-repository"});
    if (!paths) {
        if (paths.error().message.find("not a git repository") != std::string::npos)
            return Error::usage("not a git repository (nor any of its parents): " +
                                fs::weakly_canonical(fs::absolute(repo_dir)).string());
        return std::move(paths).error();
    }
    std::vector<std::string_view> lines = lines_of(*paths);
    if (lines.size() < 3) return Error::general("unexpected answer from git rev-parse: " + *paths);
    HooksLocation where;
    where.hooks_dir = fs::path(lines[0]).lexically_normal();
    where.common_dir = fs::path(lines[1]).lexically_normal();
    if (lines[2] != "true") {
        auto top = git_about(repo_dir, {"rev-parse", "--show-toplevel"});
        if (!top) return std::move(top).error();
        where.work_tree = fs::path(first_line(*top));
    }
    // One call for both keys; names come back lower-cased, "<key> <value>" per line.
    // Exit 1: neither key is set.
    auto configured = git::run_git(
        repo_dir, {"config", "--get-regexp", "^(core\\.hookspath|extensions\\.worktreeconfig)$"});
    bool worktree_config = false;
    if (configured && configured->exit_code == 0) {
        for (std::string_view line : lines_of(configured->out)) {
            std::size_t space = line.find(' ');
            std::string_view key = line.substr(0, space);
            std::string_view value =
                space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
            if (key == "core.hookspath") where.hooks_path_config = std::string(value);
            // Conservative: anything git would not read as false may turn it on.
            if (key == "extensions.worktreeconfig")
                worktree_config =
                    value != "false" && value != "no" && value != "off" && value != "0";
        }
    }
    where.shared_by_worktrees =
        !worktree_config &&
        (!where.hooks_path_config || fs::path(*where.hooks_path_config).is_absolute());
    return where;
}

Result<InstallResult> install_hook(const HooksLocation& where, const std::string& name,
                                   const InstallOptions& options) {
    if (std::find(kManagedHooks.begin(), kManagedHooks.end(), name) == kManagedHooks.end())
        return Error::usage("--hook " + name + ": expected post-commit or pre-push");
    auto shim = read_file(options.shim);
    if (!shim) return Error::missing("the hook shim is missing: " + shim.error().message);
    if (shim->find(hook_files::kShimMagic) == std::string::npos)
        return Error::general(options.shim.string() + " is not a cocode-hook-shim binary");
    std::error_code ec;
    if (!fs::exists(where.hooks_dir, ec)) {
        fs::create_directories(where.hooks_dir, ec);
        if (ec)
            return Error::general("cannot create " + where.hooks_dir.string() + ": " +
                                  ec.message());
        if (where.work_tree && inside(where.hooks_dir, *where.work_tree) &&
            !inside(where.hooks_dir, where.common_dir)) {
            if (auto w = write_file_atomic(where.hooks_dir / ".gitignore", kIgnoreAll); !w)
                return std::move(w).error();
        }
    }
    if (!options.allow_tracked) {
        if (auto seen = check_not_seen_by_git(where, name); !seen) return std::move(seen).error();
    }

    const fs::path target = hook_path(where, name);
    const fs::path chained = chained_path(where, name);
    InstallResult result;
    std::string current;

    if (is_our_shim(target, &current)) {
        result.outcome = current == *shim ? InstallOutcome::unchanged : InstallOutcome::updated;
        if (result.outcome == InstallOutcome::updated) {
            if (auto w = write_file_atomic(target, *shim, 0755); !w) return std::move(w).error();
        }
    } else {
        if (exists_no_follow(target)) {
            if (exists_no_follow(chained)) {
                // Something (husky, lefthook) rewrote the hook over ours. Identical to what we
                // chained before: that copy stands. Different: we will not guess which to keep.
                if (!same_file_content(target, chained)) {
                    return Error::general("both " + target.string() + " and " + chained.string() +
                                          " exist and differ; move one of them away and install "
                                          "again");
                }
                if (::unlink(chained.c_str()) != 0)
                    return Error::from_errno("cannot replace " + chained.string(), errno);
            }
            // A hard link keeps the original's bytes, mode and inode; the rename below then
            // swaps our shim in atomically, so git never sees the hook missing.
            if (::link(target.c_str(), chained.c_str()) != 0)
                return Error::from_errno(
                    "cannot keep " + target.string() + " as " + chained.string(), errno);
            result.chained = chained;
        }
        if (auto w = write_file_atomic(target, *shim, 0755); !w) {
            if (result.chained) ::unlink(chained.c_str());
            return std::move(w).error();
        }
        result.outcome = InstallOutcome::installed;
    }
    if (exists_no_follow(chained)) result.chained = chained;

    const fs::path tool_file = where.hooks_dir / hook_files::kToolFile;
    const std::string tool_line = options.tool.string() + "\n";
    auto recorded = read_file(tool_file, 8192);
    if (!recorded || *recorded != tool_line) {
        if (auto w = write_file_atomic(tool_file, tool_line); !w) return std::move(w).error();
        if (result.outcome == InstallOutcome::unchanged) result.outcome = InstallOutcome::updated;
    }
    return result;
}

Result<UninstallOutcome> uninstall_hook(const HooksLocation& where, const std::string& name) {
    const fs::path target = hook_path(where, name);
    const fs::path chained = chained_path(where, name);
    UninstallOutcome outcome = UninstallOutcome::not_installed;
    if (is_our_shim(target)) {
        if (exists_no_follow(chained)) {
            if (::rename(chained.c_str(), target.c_str()) != 0)
                return Error::from_errno("cannot restore " + target.string(), errno);
            outcome = UninstallOutcome::restored;
        } else {
            if (::unlink(target.c_str()) != 0)
                return Error::from_errno("cannot remove " + target.string(), errno);
            outcome = UninstallOutcome::removed;
        }
    } else if (exists_no_follow(chained)) {
        return Error::general(target.string() +
                              " is no longer cocode's hook (something rewrote "
                              "it); the hook cocode chained is still at " +
                              chained.string() + " — restore it by hand if you want it back");
    }
    bool any_left = false;
    for (const std::string& other : kManagedHooks) any_left |= is_our_shim(hook_path(where, other));
    if (!any_left) {
        ::unlink((where.hooks_dir / hook_files::kToolFile).c_str());
        // The folder we made, holding only our ignore file: take it away again.
        std::error_code ec;
        const auto entries = list_folder(where.hooks_dir, ec).size();
        auto ignore = read_file(where.hooks_dir / ".gitignore", 64);
        if (!ec && entries == 1 && ignore && *ignore == kIgnoreAll) {
            fs::remove(where.hooks_dir / ".gitignore", ec);
            fs::remove(where.hooks_dir, ec);
        }
    }
    return outcome;
}

HooksStatus hooks_status(const HooksLocation& where, const fs::path& shim) {
    HooksStatus status;
    status.where = where;
    if (auto recorded = read_file(where.hooks_dir / hook_files::kToolFile, 8192)) {
        status.tool = fs::path(first_line(*recorded));
        status.tool_exists = ::access(status.tool->c_str(), X_OK) == 0;
    }
    auto current_shim = read_file(shim);
    for (const std::string& name : kManagedHooks) {
        HookStatus hs;
        hs.name = name;
        const fs::path target = hook_path(where, name);
        std::string content;
        if (is_our_shim(target, &content)) {
            hs.state = current_shim && *current_shim == content ? HookState::installed
                                                                : HookState::outdated;
        } else if (exists_no_follow(target)) {
            hs.state = HookState::foreign;
        }
        if (exists_no_follow(chained_path(where, name))) hs.chained = chained_path(where, name);
        status.hooks.push_back(std::move(hs));
    }
    return status;
}

}  // namespace cocode::hook
