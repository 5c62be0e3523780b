// cocode-dispatch replay: the replay set (replay/task.h) — `mine` turns the default branch's
// changes that touched code and tests into tasks, `list` shows them.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/confined.h"
#include "agent/prepare.h"
#include "check/run_check.h"
#include "commands.h"
#include "common/executables.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "git/repository.h"
#include "proc/command.h"
#include "proc/sandbox.h"
#include "replay/mine.h"
#include "replay/run.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

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
    options.runner = agent::confined_runner(ws.config, ws.root);
    options.progress = [](const std::string& line) { notice(line); };
    const auto mined = replay::mine(options).value_or_throw();
    if (args.json) {
        json tasks = json::array(), skipped = json::array();
        for (const auto& t : mined.tasks) tasks.push_back(replay::task_json(t));
        for (const auto& [commit, why] : mined.skipped)
            skipped.push_back({{"commit", commit}, {"why", why}});
        std::cout << json_output({{"tasks", tasks},
                                  {"skipped", skipped},
                                  {"verify_runs", mined.verify_runs}},
                                 2)
                  << "\n";
        return 0;
    }
    if (!mined.tasks.empty()) print_tasks(mined.tasks);
    notice(std::to_string(mined.tasks.size()) + (mined.tasks.size() == 1 ? " task" : " tasks") +
           " mined, " + std::to_string(mined.skipped.size()) + " changes skipped (" +
           std::to_string(mined.verify_runs) + " verify runs), in " + replay::kTasksDir);
    return 0;
}

// One replay: its own repository, then `run` there with the main repository hidden; its run.
struct Replayed {
    std::string task, agent;
    int exit_code = 0;
    std::optional<run::RunRecord> run;
};

Replayed replay_one(const Workspace& ws, const replay::Task& task,
                    const config::AgentConfig& agent_config, const std::vector<std::string>& hide) {
    const std::string& agent = agent_config.name;
    const std::string name = task.id + "-" + agent + "-" + next_run_id();
    const auto space =
        replay::make_replay_space(ws.root, task, ws.root / replay::kTasksDir / task.id, name)
            .value_or_throw();
    replay::bring_program(ws.root, agent, agent_config.argv, space.repo).value_or_throw();
    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(),
                                     "run",
                                     std::to_string(space.issue),
                                     "--issues",
                                     ".cocode/issues",
                                     "--agent",
                                     agent,
                                     "--replay-task",
                                     task.id};
    for (const auto& path : hide) argv.insert(argv.end(), {"--hide", path});
    CommandOptions options;
    options.cwd = space.repo;
    // What `run` says, as it says it (its lines are terminal-safe already).
    options.on_err = [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stderr);
    };
    const auto ran = run_command(argv, options).value_or_throw();
    Replayed out{task.id, agent, ran.exit_code, std::nullopt};
    const auto runs = run::list_runs(space.repo / run::kRunsDir).runs;
    if (!runs.empty()) out.run = runs.back();
    return out;
}

int replay_run(const Workspace& ws, const ReplayArgs& args) {
    // Without the sandbox the answer is on the same disk: no replay (the run refuses it too).
    if (ws.config.sandbox == config::SandboxMode::none)
        throw Failure(Error::missing(
            "replay run: the configuration says sandbox: none, and a replay runs only in the "
            "sandbox (its answer is on the same disk)"));
    if (const auto& probe = probe_sandbox(*agent::sandbox_maker(ws.config)); !probe.available)
        throw Failure(Error::missing("replay run: no sandbox here (" + probe.why_not +
                                     "), and a replay runs only in it (its answer is on the same "
                                     "disk)"));
    auto tasks = replay::list_tasks(ws.root / replay::kTasksDir).value_or_throw();
    if (!args.tasks.empty()) {
        std::vector<replay::Task> chosen;
        for (const auto& id : args.tasks) {
            auto it = std::find_if(tasks.begin(), tasks.end(),
                                   [&](const replay::Task& t) { return t.id == id; });
            if (it == tasks.end())
                throw Failure(Error::usage("--task " + id + ": no such task in " +
                                           replay::kTasksDir + " (see `replay list`)"));
            chosen.push_back(*it);
        }
        tasks = std::move(chosen);
    }
    if (tasks.empty())
        throw Failure(Error::usage("replay run: no tasks (`replay mine` makes them)"));
    const auto agents = config::choose_agents(ws.config, args.agents).value_or_throw();
    const auto hide = replay::hidden_from_replays(
        ws.root, git::Repository::open(ws.root).value_or_throw().common_dir());
    std::vector<Replayed> done;
    std::vector<int> codes;
    for (const auto& task : tasks)
        for (const auto& agent : agents)
            for (int k = 0; k < args.repeat; ++k) {
                done.push_back(replay_one(ws, task, agent, hide));
                codes.push_back(done.back().exit_code);
            }
    const int code = replay::replay_exit_code(codes);
    json out = json::array();
    if (!args.json) std::printf("%-12s  %-16s  %-7s  %s\n", "TASK", "AGENT", "VERDICT", "RUN");
    for (const auto& r : done) {
        std::optional<check::Verdict> verdict;
        if (r.run) verdict = check::recorded_verdict(r.run->folder);
        const std::string said = verdict ? (verdict->pass ? "PASS" : "FAIL") : "-";
        const std::string run_id = r.run ? r.run->run_id : "";
        if (args.json)
            out.push_back({{"task", r.task},
                           {"agent", r.agent},
                           {"verdict", verdict ? json(said) : json(nullptr)},
                           {"run_id", run_id},
                           {"folder", r.run ? json(r.run->folder.string()) : json(nullptr)}});
        else
            std::printf("%s\n", terminal_safe_line([&] {
                                    char line[200];
                                    std::snprintf(line, sizeof line, "%-12s  %-16s  %-7s  %s",
                                                  r.task.c_str(), r.agent.c_str(), said.c_str(),
                                                  run_id.c_str());
                                    return std::string(line);
                                }())
                                    .c_str());
    }
    if (args.json) std::cout << json_output(out, 2) << "\n";
    return code;
}

}  // namespace

int run_replay(const ReplayArgs& args) {
    Workspace ws = open_workspace();
    if (args.verb == "mine") return mine(ws, args);
    if (args.verb == "run") return replay_run(ws, args);
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
