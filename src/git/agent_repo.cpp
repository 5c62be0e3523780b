#include "git/agent_repo.h"

#include "core/files.h"
#include "git/cli.h"

namespace cocode::git {
namespace fs = std::filesystem;

Result<void> make_agent_repo(const fs::path& common, const AgentRepo& repo,
                             const std::string& commit, bool checkout) {
    if (!is_object_id(commit))
        return Error::general("the agent's repository: '" + commit + "' is not a commit's id");
    // Whatever was there (the last run's, the agent's to have rewritten) goes, unread; so does
    // the worktree's `.git`, which names it.
    if (auto removed = remove_tree(repo.git_dir); !removed) return removed;
    std::error_code ec;
    fs::create_directories(repo.worktree, ec);
    if (ec) return Error::general("cannot create " + repo.worktree.string() + ": " + ec.message());
    if (auto removed = remove_tree(repo.worktree / ".git"); !removed) return removed;
    fs::create_directories(repo.git_dir.parent_path(), ec);
    // A repository of its own, no template (no hook a template would bring), its only branch.
    if (auto made = git_output(
            {}, {"init", "-q", "--template=", "--separate-git-dir=" + repo.git_dir.string(),
                 "--initial-branch=" + repo.branch, repo.worktree.string()});
        !made)
        return std::move(made).error();
    // The main repository's objects, borrowed: read, never written (the sandbox keeps them so).
    if (auto ok = write_file_atomic(repo.git_dir / "objects/info/alternates",
                                    (common / "objects").string() + "\n");
        !ok)
        return ok;
    const std::string git_dir = "--git-dir=" + repo.git_dir.string();
    if (auto moved = git_output({}, {git_dir, "update-ref", "refs/heads/" + repo.branch, commit});
        !moved)
        return std::move(moved).error();
    // The files (a new worktree), or only the index (a worktree holding the agent's last
    // work, left as it is).
    std::vector<std::string> args = {git_dir, "--work-tree=" + repo.worktree.string(), "reset",
                                     "-q"};
    if (checkout) args.push_back("--hard");
    // The worktree's files and attributes are the agent's: no filter of anyone's runs on them.
    GitOptions without_config;
    without_config.environment = environment_without_config();
    if (auto reset = git_output({}, args, without_config); !reset) return std::move(reset).error();
    return {};
}

Result<std::string> agent_git(const CommandRunner& runner, const fs::path& worktree,
                              const std::string& command, std::vector<std::string> environment,
                              std::vector<fs::path> writable, std::vector<fs::path> readable) {
    auto scratch = TempFolder::make("cocode-git");
    if (!scratch) return std::move(scratch).error();
    CommandRequest request;
    request.command = command;
    request.cwd = worktree;
    request.environment = std::move(environment);
    request.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    request.log = scratch->path() / "log";
    request.out = scratch->path() / "out";
    request.record = scratch->path() / "egress.jsonl";
    request.writes_cwd = !writable.empty();
    request.writable = std::move(writable);
    std::erase_if(readable, [](const fs::path& path) { return path.empty(); });
    request.readable = std::move(readable);
    auto ran = runner(request);
    if (!ran) return std::move(ran).error();
    if (ran->exit_code == 0 && !ran->timed_out) {
        auto out = read_file_no_follow(request.out, std::size_t{64} << 20);
        if (!out && fs::exists(request.out)) return std::move(out).error();
        return out ? std::move(*out) : std::string();
    }
    auto said = read_file_no_follow(request.log, 1 << 20);
    const std::string line = said ? first_line(*said) : std::string();
    return Error::general("`" + command + "` " +
                          (ran->timed_out ? std::string("did not end")
                                          : "exited with " + std::to_string(ran->exit_code)) +
                          (line.empty() ? "" : ": " + line));
}

std::string agent_branch_mark(const AgentRepo& repo) {
    if (auto loose = read_file_beneath(repo.git_dir, "refs/heads/" + repo.branch, 4096))
        return "loose " + *loose;
    if (auto packed = read_file_beneath(repo.git_dir, "packed-refs", std::size_t{1} << 20))
        return "packed " + *packed;
    return {};
}

Result<std::optional<std::string>> take_agent_branch(const fs::path& repo_dir,
                                                     const fs::path& git_dir,
                                                     const std::string& branch,
                                                     const std::string& upload_pack) {
    const std::string quarantine = "refs/cocode/quarantine/" + branch;
    // A file:// URL: git's transport, its serving side the sandboxed upload-pack, whatever the
    // agent left at that path (a path to a file would be read by this git as a bundle, on the
    // host, its objects unchecked). The deadline bounds an upload-pack the agent made hang.
    GitOptions bounded;
    bounded.deadline = std::chrono::seconds(60);
    auto fetched =
        run_git(repo_dir,
                {"-c", "transfer.fsckObjects=true", "fetch", "--quiet", "--no-tags",
                 "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
                 "--no-write-commit-graph", "--upload-pack=" + upload_pack,
                 "file://" + git_dir.string(), "+refs/heads/" + branch + ":" + quarantine},
                bounded);
    if (!fetched) return std::move(fetched).error();
    if (fetched->exit_code != 0) {
        if (fetched->err.find("couldn't find remote ref") != std::string::npos)
            return std::optional<std::string>();
        return Error::general("taking " + branch + " back from " + git_dir.string() + ": " +
                              first_line(fetched->err));
    }
    auto id = git_line(
        repo_dir, {"rev-parse", "--verify", "-q", "--end-of-options", quarantine + "^{commit}"});
    (void)run_git(repo_dir, {"update-ref", "-d", quarantine});
    if (!id) return Error::general("taking " + branch + " back: its head is not a commit");
    if (auto moved = git_output(repo_dir, {"update-ref", "refs/heads/" + branch, *id}); !moved)
        return std::move(moved).error();
    return std::optional<std::string>(*id);
}

}  // namespace cocode::git
