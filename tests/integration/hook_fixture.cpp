#include "hook_fixture.h"

#include "core/flat_yaml.h"
#include "core/run_id.h"
#include "hook/run_locator.h"

namespace cocode::test {
namespace fs = std::filesystem;

void HookRepo::SetUp() {
    repo = dir / "repo";
    make_repo(repo);
}

std::string HookRepo::install(const std::string& extra) {
    return sh_ok(
        quote(hook_tool().string()) + " install --repo " + quote(repo.string()) + " " + extra,
        repo);
}

RunWorktree HookRepo::add_run(const std::string& name, const std::optional<std::string>& marker,
                              const std::optional<fs::path>& bus) {
    RunWorktree run;
    run.worktree = repo / ".cocode/worktrees" / name;
    sh_ok("git worktree add -q -b cocode/" + name + " " + quote(run.worktree.string()), repo);
    run.base = head(run.worktree);
    run.run_id = next_run_id();
    run.run_folder = repo / ".cocode/runs" / run.run_id;
    fs::create_directories(run.run_folder);
    FlatYaml info;
    info.set_number("version", 1);
    info.set("run_id", run.run_id);
    info.set("status", "running");
    info.set("base_commit", run.base);
    if (marker) info.set("ready_marker", *marker);
    if (bus) info.set("message_bus", bus->string());
    write_text(run.run_folder / "run-info.yaml", info.render());
    std::string git_dir = sh_ok("git rev-parse --absolute-git-dir", run.worktree);
    git_dir.pop_back();
    EXPECT_TRUE(hook::write_run_pointer(git_dir, run.run_folder));
    return run;
}

std::vector<nlohmann::json> HookRepo::events(const RunWorktree& run) const {
    std::vector<nlohmann::json> out;
    for (const std::string& line : read_lines(run.run_folder / "events.jsonl")) {
        EXPECT_TRUE(nlohmann::json::accept(line)) << line;
        if (nlohmann::json::accept(line)) out.push_back(nlohmann::json::parse(line));
    }
    return out;
}

std::string HookRepo::head(const fs::path& worktree) const {
    std::string id = sh_ok("git rev-parse HEAD", worktree);
    return id.substr(0, id.find('\n'));
}

}  // namespace cocode::test
