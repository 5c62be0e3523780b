// cocode-dispatch replay: the replay set (replay/task.h) — `mine` turns the default branch's
// changes that touched code and tests into tasks, `list` shows them.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/prepare.h"
#include "agent/setup_runner.h"
#include "commands.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "replay/mine.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;

void print_tasks(const std::vector<replay::Task>& tasks) {
    std::printf("%-12s  %-9s  %4s  %4s  %s\n", "TASK", "KIND", "F2P", "P2P", "STATEMENT");
    for (const auto& t : tasks)
        std::printf("%s\n", terminal_safe_line([&] {
                                char line[160];
                                std::snprintf(line, sizeof line, "%-12s  %-9s  %4zu  %4zu  ",
                                              t.id.c_str(), t.kind.c_str(), t.fail_to_pass.size(),
                                              t.pass_to_pass.size());
                                return std::string(line) + t.statement.title;
                            }())
                                .c_str());
}

// Where the statements come from: the issues the changes close (the configured source), when
// it can be opened; else the commit messages alone, said once.
std::unique_ptr<issues::IssueSource> statement_source(const Workspace& ws, const ReplayArgs& args) {
    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    auto source = issues::open_source(flags.resolve("cocode-dispatch"));
    if (source.ok()) return std::move(*source);
    notice("statements from commit messages only: " + source.error().message);
    return nullptr;
}

int mine(const Workspace& ws, const ReplayArgs& args) {
    agent::DispatchContext context;
    context.repo_root = ws.root;
    context.config = ws.config;
    const auto base = agent::resolve_base(context).value_or_throw();
    auto source = statement_source(ws, args);
    replay::MineOptions options;
    options.repo_root = ws.root;
    options.revision = base.branch;
    options.limit = args.limit;
    if (args.since) options.since = since_flag(*args.since);
    options.limits.paths = args.paths;
    options.limits.max_lines = args.max_lines;
    options.config = &ws.config;
    options.source = source.get();
    options.setup_runner = agent::setup_runner(ws.config, ws.root);
    options.progress = [](const std::string& line) { notice(line); };
    const auto mined = replay::mine(options).value_or_throw();
    if (args.json) {
        json tasks = json::array(), skipped = json::array();
        for (const auto& t : mined.tasks) tasks.push_back(replay::task_json(t));
        for (const auto& [commit, why] : mined.skipped)
            skipped.push_back({{"commit", commit}, {"why", why}});
        std::cout << json_output({{"tasks", tasks}, {"skipped", skipped}}, 2) << "\n";
        return 0;
    }
    if (!mined.tasks.empty()) print_tasks(mined.tasks);
    notice(std::to_string(mined.tasks.size()) + (mined.tasks.size() == 1 ? " task" : " tasks") +
           " mined, " + std::to_string(mined.skipped.size()) + " changes skipped, in " +
           replay::kTasksDir);
    return 0;
}

}  // namespace

int run_replay(const ReplayArgs& args) {
    Workspace ws = open_workspace();
    if (args.verb == "mine") return mine(ws, args);
    const auto tasks = replay::list_tasks(ws.root / replay::kTasksDir).value_or_throw();
    if (args.json) {
        json out = json::array();
        for (const auto& t : tasks) out.push_back(replay::task_json(t));
        std::cout << json_output(out, 2) << "\n";
        return 0;
    }
    if (tasks.empty()) {
        std::printf("no tasks in %s: `cocode-dispatch replay mine` makes them\n",
                    replay::kTasksDir);
        return 0;
    }
    print_tasks(tasks);
    return 0;
}

}  // namespace cocode::dispatch_cli
