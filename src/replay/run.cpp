#include "replay/run.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"
#include "git/cli.h"
#include "git/repository.h"

namespace cocode::replay {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// 'text' for sh.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The main configuration as the replay is judged by: its verify commands the task's, each
// putting the hidden tests in first, and its base branch the replay repository's.
Result<std::string> replay_config(const fs::path& main_root, const Task& task,
                                  const fs::path& script) {
    json config = json::object();
    if (auto text = read_file(main_root / config::kConfigFile, std::size_t{1} << 20)) {
        config = json::parse(*text, nullptr, false);
        if (!config.is_object())
            return Error::usage(config::kConfigFile + std::string(": not a JSON object"));
    }
    json verify = json::array();
    for (const auto& v : task.verify) {
        json command = {{"name", v.name},
                        {"run", "sh " + quoted(script.string()) + " && " + v.run}};
        if (v.timeout) command["timeout"] = config::format_duration(*v.timeout);
        verify.push_back(command);
    }
    config["check"]["verify"] = verify;
    config["base_branch"] = "main";
    // Published nowhere: a replay has no issue on GitHub.
    config.erase("publish");
    return json_dump(config, 2) + "\n";
}

}  // namespace

fs::path replay_runs_dir(const fs::path& common_dir) {
    return common_dir / "cocode" / "replay" / "runs";
}

std::string hidden_tests_script(const std::string& base, const std::vector<std::string>& at_base,
                                const std::vector<std::string>& new_files, const fs::path& patch) {
    std::string script = "set -e\n";
    if (!at_base.empty()) {
        script += "git checkout -q " + base + " --";
        for (const auto& f : at_base) script += " " + quoted(f);
        script += "\n";
    }
    if (!new_files.empty()) {
        script += "rm -f --";
        for (const auto& f : new_files) script += " " + quoted(f);
        script += "\n";
    }
    return script + "git apply --whitespace=nowarn " + quoted(patch.string()) + "\n";
}

Result<ReplaySpace> make_replay_space(const fs::path& main_root, const Task& task,
                                      const fs::path& task_dir, const std::string& name) {
    auto main = git::Repository::open(main_root);
    if (!main.ok()) return std::move(main).error();
    ReplaySpace space;
    space.folder = replay_runs_dir(main->common_dir()) / name;
    space.repo = space.folder / "repo";
    std::error_code ec;
    fs::remove_all(space.folder, ec);
    fs::create_directories(space.folder, ec);
    if (ec) return Error::general("cannot create " + space.folder.string() + ": " + ec.message());

    // The base alone: a ref for the fetch to name, gone once fetched.
    const std::string ref = "refs/cocode/replay/" + name;
    if (auto ok = git::git_output(main_root, {"update-ref", ref, task.base}); !ok.ok())
        return std::move(ok).error();
    auto fetched = [&]() -> Result<void> {
        if (auto ok = git::git_output(space.folder, {"init", "-q", "-b", "main", "repo"}); !ok.ok())
            return std::move(ok).error();
        const std::string from = "file://" + main->common_dir().string();
        // The base and its history, nothing after it (a shallow copy would be smaller, but
        // libgit2, which judges the run, cannot walk a shallow history).
        if (auto ok = git::git_output(
                space.repo, {"fetch", "-q", "--no-tags", from, ref + ":refs/replay/base"});
            !ok.ok())
            return std::move(ok).error();
        if (auto ok = git::git_output(space.repo, {"checkout", "-q", "-B", "main", task.base});
            !ok.ok())
            return std::move(ok).error();
        if (auto ok = git::git_output(space.repo, {"update-ref", "-d", "refs/replay/base"});
            !ok.ok())
            return std::move(ok).error();
        return {};
    }();
    (void)git::git_output(main_root, {"update-ref", "-d", ref});
    if (!fetched.ok()) return std::move(fetched).error();
    // Who commits, as in the main repository; origin's address, so that environments are
    // shared with the main repository's (their key names the repository by it).
    for (const char* key : {"user.name", "user.email"})
        if (auto value = main->config_string(key))
            (void)git::git_output(space.repo, {"config", key, *value});
    if (auto url = main->remote_url("origin"); url.ok())
        (void)git::git_output(space.repo, {"remote", "add", "origin", *url});

    // The hidden tests, and the script that puts them in, where only the checker looks.
    const fs::path patch = space.folder / kHiddenTestsFile;
    auto text = read_file(task_dir / kHiddenTestsFile, std::size_t{64} << 20);
    if (!text)
        return Error::usage((task_dir / kHiddenTestsFile).string() + ": " + text.error().message);
    if (auto ok = write_file_atomic(patch, *text); !ok) return std::move(ok).error();
    std::vector<std::string> at_base, new_files;
    for (const auto& file : task.hidden_tests) {
        auto there = main->file_at(task.base, file);
        if (!there.ok()) return std::move(there).error();
        (*there ? at_base : new_files).push_back(file);
    }
    const fs::path script = space.folder / "hidden-tests.sh";
    if (auto ok =
            write_file_atomic(script, hidden_tests_script(task.base, at_base, new_files, patch));
        !ok)
        return std::move(ok).error();

    fs::create_directories(space.repo / ".cocode/issues", ec);
    if (ec)
        return Error::general("cannot create " + (space.repo / ".cocode").string() + ": " +
                              ec.message());
    auto config = replay_config(main_root, task, script);
    if (!config.ok()) return std::move(config).error();
    if (auto ok = write_file_atomic(space.repo / config::kConfigFile, *config); !ok)
        return std::move(ok).error();
    json labels = json::array();
    if (const std::string type = task.kind.substr(0, task.kind.find('/'));
        !type.empty() && type != "unknown")
        labels.push_back({{"name", type}});
    // A commit whose message is its subject alone: the subject is all there is to say, and an
    // agent given an empty issue.md would have nothing to read.
    const json issue = {
        {"number", space.issue},
        {"title", task.statement.title},
        {"body", task.statement.body.empty() ? task.statement.title + "\n" : task.statement.body},
        {"state", "open"},
        {"labels", labels}};
    if (auto ok =
            write_file_atomic(space.repo / ".cocode/issues/1.json", json_dump(issue, 2) + "\n");
        !ok)
        return std::move(ok).error();
    auto replay_repo = git::Repository::open(space.repo);
    if (!replay_repo.ok()) return std::move(replay_repo).error();
    if (auto ok = replay_repo->exclude(".cocode/"); !ok) return std::move(ok).error();
    return space;
}

std::vector<std::string> hidden_from_replays(const fs::path& main_root,
                                             const fs::path& common_dir) {
    std::vector<std::string> hide = {main_root.string()};
    if (common_dir.lexically_relative(main_root).native().rfind("..", 0) == 0)
        hide.push_back(common_dir.string());
    return hide;
}

int replay_exit_code(const std::vector<int>& codes) {
    int code = 0;
    for (int c : codes)
        if (c == 3 || (code == 0 && c != 0)) code = c;
    return code;
}

Result<void> bring_program(const fs::path& main_root, const std::string& agent,
                           const std::vector<std::string>& argv, const fs::path& repo) {
    if (argv.empty()) return {};
    const fs::path program(argv.front());
    const fs::path inside = program.lexically_relative(main_root);
    if (!program.is_absolute() || inside.empty() || inside.native().rfind("..", 0) == 0) return {};
    std::error_code ec;
    if (fs::exists(fs::symlink_status(repo / inside, ec)))
        return {};  // tracked: as the task has it
    const auto status = fs::symlink_status(program, ec);
    if (!fs::is_regular_file(status))
        return Error::missing(
            "replay run: agent '" + agent + "': its program " + program.string() +
            (fs::exists(status) ? " is not a regular file" : " does not exist") +
            "; a replay copies an untracked script of the repository into its own, and finds "
            "nothing else of the main repository (it is hidden)");
    auto text = read_file_no_follow(program, std::size_t{16} << 20);
    if (!text) return Error::general("replay run: agent '" + agent + "': " + text.error().message);
    fs::create_directories((repo / inside).parent_path(), ec);
    return write_file_atomic(repo / inside, *text,
                             static_cast<mode_t>(status.permissions() & fs::perms::mask));
}

}  // namespace cocode::replay
