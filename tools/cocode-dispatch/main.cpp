// cocode-dispatch: fetch issues, give each agent its own worktree, supervise the runs.
// This file only wires the subcommands (cmd_*.cpp) to CLI11 and maps errors to exit codes.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <functional>
#include <string_view>

#include "agent/egress.h"
#include "commands.h"
#include "common/completion.h"
#include "common/tool_main.h"
#include "git/repository.h"
#include "proc/environment.h"
#include "workspace.h"

using namespace cocode::dispatch_cli;

namespace {

// Every subcommand's arguments, alive for as long as main is.
struct Arguments {
    IssuesListArgs list;
    IssuesShowArgs show;
    RunArgs run;
    ContinueArgs next;
    PlanArgs plan;
    WatchArgs watch;
    ServeArgs serve;
    SuperviseArgs supervise;
    AgentArgs agent;
    StatusArgs status;
    ReportArgs report;
    LogsArgs logs;
    EgressArgs egress;
    GateArgs gate;
    PresetsArgs presets;
    InitArgs init;
    EnvArgs env;
    ReplayArgs replay;
    CleanArgs clean;
    DoctorArgs doctor;
    UiArgs ui;
    StopArgs stop;
    std::string shell;
};

// The table of commands: each subcommand CLI11 parsed into, and what runs it.
using Commands = std::vector<std::pair<CLI::App*, std::function<int()>>>;

void add_issue_commands(CLI::App& app, Arguments& a, Commands& commands) {
    auto* issues_cmd = app.add_subcommand("issues", "show the issues cocode sees");
    issues_cmd->require_subcommand(1);

    auto* list_cmd = issues_cmd->add_subcommand("list", "list issues (pull requests left out)");
    a.list.source.add_to(*list_cmd);
    list_cmd->add_option("--label", a.list.labels, "only issues with this label (repeatable)");
    list_cmd->add_option("--state", a.list.state, "open (default), closed or all")
        ->check(CLI::IsMember({"open", "closed", "all"}));
    list_cmd->add_option("--assignee", a.list.assignee, "a login, none or *");
    list_cmd->add_flag("--json", a.list.json, "print JSON");
    commands.emplace_back(list_cmd, [&a] { return run_issues_list(a.list); });

    auto* show_cmd = issues_cmd->add_subcommand("show", "one issue: title, labels, body");
    a.show.source.add_to(*show_cmd);
    show_cmd->add_option("number", a.show.number, "the issue number")
        ->required()
        ->check(cocode::tool::issue_number());
    show_cmd->add_flag("--comments", a.show.comments, "also print its comments");
    show_cmd->add_flag("--json", a.show.json, "print JSON");
    commands.emplace_back(show_cmd, [&a] { return run_issues_show(a.show); });
}

// What `run` and `continue` exit with (docs/runs.md); the verdicts do not change it.
constexpr char kRunExitCodes[] =
    "Exit codes: 0 every run completed, 1 a run failed (or an error), 2 a mistake in the\n"
    "arguments or the configuration, 3 an agent's program is missing, 130 interrupted (or\n"
    "the only runs that did not complete were stopped). Gate on the verdicts with\n"
    "cocode-check --issue N --summary. See docs/runs.md.";

void add_run_command(CLI::App& app, Arguments& a, Commands& commands) {
    RunArgs& run = a.run;
    auto* run_cmd = app.add_subcommand("run", "run agents on issues, each in its own worktree");
    run.source.add_to(*run_cmd);
    run_cmd->add_option("issue", run.issues, "issue numbers")->check(cocode::tool::issue_number());
    run_cmd->add_option("--agent", run.agents, "an agent from .cocode/config.json (repeatable)");
    run_cmd->add_option("--label", run.labels, "also every open issue with this label");
    run_cmd->add_option("--concurrency", run.concurrency, "agents alive at once (1-64)")
        ->check(cocode::tool::whole_number(1, 64));
    run_cmd->add_option("--timeout", run.timeout, "per-run limit, e.g. 30m (over the config)");
    run_cmd->add_flag("--detach", run.detach, "return once the runs have started");
    run_cmd->add_flag("--resume", run.resume, "continue existing worktrees for the same pairs");
    run_cmd->add_flag("--json", run.json, "print the results as JSON");
    run_cmd->add_flag("--no-check", run.no_check, "do not judge the runs when they end");
    run_cmd->add_flag("--publish", run.publish,
                      "publish each verdict on its issue (comment, status, labels)");
    run_cmd->add_option("--marker", run.marker, "the ready marker (over the config)");
    run_cmd->add_option("--sandbox", run.sandbox, "auto, bwrap or none (over the config)")
        ->check(CLI::IsMember({"auto", "bwrap", "none"}));
    run_cmd->add_option("--allowed-path", run.allowed_paths,
                        "a path glob the change must stay within (repeatable; replaces "
                        "check.allowed_paths)");
    run_cmd->add_option("--verify", run.verify,
                        "a command that must pass (repeatable; replaces check.verify)");
    run_cmd->add_flag("--plan", run.plan,
                      "plan first: each agent answers with a plan in a read-only worktree, to "
                      "approve with `continue --approve`");
    run_cmd->add_option("--requested-by", run.requested_by,
                        "who asked for the runs on GitHub (@login; watch and serve pass it): "
                        "the merge gate does not count their approval");
    run_cmd->add_option("--approved-at", run.approved_at,
                        "when a writer approved the runs on GitHub (ISO 8601; watch passes it): "
                        "an issue edited since by anyone without write access is refused");
    run_cmd
        ->add_option("--approved-event", run.approved_event,
                     "the GitHub event (a webhook payload) that approved the runs, with the "
                     "issue's text as approved (serve and the action pass it)")
        ->excludes("--approved-at");
    // `replay run`'s own (not in the help): the task this run replays, what it must not see.
    run_cmd->add_option("--replay-task", run.replay_task)->group("");
    run_cmd->add_option("--hide", run.hide)->group("");
    run_cmd->footer(kRunExitCodes);
    commands.emplace_back(run_cmd, [&a] { return run_run(a.run); });

    ContinueArgs& next = a.next;
    auto* continue_cmd = app.add_subcommand(
        "continue", "a run's next round on its branch, with feedback, judged by its sealed rules");
    next.source.add_to(*continue_cmd);
    continue_cmd->add_option("which", next.which,
                             "a run id (or a unique prefix), or an issue (not with --event)");
    continue_cmd->add_option("--agent", next.agents,
                             "with an issue: this agent's run (repeatable; default: each agent "
                             "that ran on it)");
    // That -m or --from-pr is given is checked by the command, not by CLI11, whose words for
    // it differ between its versions (the help is held against golden files).
    continue_cmd->add_option("-m,--message", next.message,
                             "the feedback for the agent (with --from-pr: said before it)");
    continue_cmd->add_flag("--from-pr", next.from_pr,
                           "the feedback from the pair's pull request (the reviews asking for "
                           "changes, their threads, its own failing checks)");
    continue_cmd->add_option("--event", next.event,
                             "a pull request's event (GITHUB_EVENT_PATH) asking for the round; "
                             "its pair and feedback from the pull request");
    continue_cmd->add_option("--timeout", next.timeout,
                             "per-run limit, e.g. 30m (over the config)");
    continue_cmd->add_flag("--detach", next.detach, "return once the rounds have started");
    continue_cmd->add_flag("--json", next.json, "print the results as JSON");
    continue_cmd->add_flag("--no-check", next.no_check, "do not judge the round when it ends");
    continue_cmd->add_flag("--publish", next.publish,
                           "publish the verdict on the issue (comment, status, labels)");
    continue_cmd->add_flag("--approve", next.approve,
                           "approve the pair's plan: the code round starts, held to its files");
    continue_cmd->add_option("--hash", next.hash,
                             "with --approve: the plan's hash, refused when the plan changed");
    continue_cmd->add_flag("--revise", next.revise,
                           "a new plan round, with -m saying what to change or answering its "
                           "questions");
    continue_cmd->add_flag("--reject", next.reject, "reject the pair's plan: no code round");
    continue_cmd->add_option("--by", next.by,
                             "who said it on GitHub (@login; watch and serve pass it)");
    continue_cmd->add_option("--comment", next.comment_id,
                             "the GitHub comment that said it: a refusal is answered there");
    continue_cmd->footer(kRunExitCodes);
    commands.emplace_back(continue_cmd, [&a] { return run_continue(a.next); });
}

void add_plan_command(CLI::App& app, Arguments& a, Commands& commands) {
    PlanArgs& plan = a.plan;
    auto* plan_cmd = app.add_subcommand(
        "plan", "the runs `run` would make, as a GitHub Actions matrix (one job per run)");
    plan.source.add_to(*plan_cmd);
    plan_cmd->add_option("issue", plan.issues, "issue numbers")
        ->check(cocode::tool::issue_number());
    plan_cmd->add_option("--agent", plan.agents, "an agent from .cocode/config.json (repeatable)");
    plan_cmd->add_option("--label", plan.labels, "also every open issue with this label");
    plan_cmd->add_option("--event", plan.event,
                         "a GitHub event's payload ($GITHUB_EVENT_PATH): an issue labelled, or a "
                         "/cocode comment from someone with write access");
    plan_cmd->add_flag("--json", plan.json, "print the matrix as JSON");
    plan_cmd->add_flag("--publish", plan.publish,
                       "start each issue's live comment at once, every agent queued");
    commands.emplace_back(plan_cmd, [&a] { return run_plan(a.plan); });
}

// `watch` and `serve` take the same source and watcher options. Defaults go into the text:
// CLI11's own rendering of them differs between its versions.
void add_watcher_options(CLI::App& cmd, WatcherArgs& args) {
    args.source.add_to(cmd);
    cmd.add_option("--label", args.label,
                   "the label that asks for cocode (default: trigger.label, `cocode`)");
    cmd.add_option("--agent", args.agents,
                   "an agent from .cocode/config.json (repeatable; default: all)");
    cmd.add_option(
        "--lease", args.lease,
        "a claim left unrenewed this long is taken over by another watcher (default 1h)");
    cmd.add_option("--max-parallel", args.max_parallel, "issues in flight at once (default 2)")
        ->check(cocode::tool::whole_number(1, 64));
}

void add_watcher_commands(CLI::App& app, Arguments& a, Commands& commands) {
    auto* watch_cmd = app.add_subcommand(
        "watch", "take labelled issues by polling GitHub: claim, run, judge, answer");
    add_watcher_options(*watch_cmd, a.watch.watcher);
    watch_cmd->add_option("--interval", a.watch.interval, "between polls (default 60s; e.g. 5m)");
    watch_cmd->add_flag("--once", a.watch.once,
                        "one poll: take what is labelled, see it through, then exit");
    commands.emplace_back(watch_cmd, [&a] { return run_watch(a.watch); });

    auto* serve_cmd = app.add_subcommand(
        "serve", "take issues from GitHub's webhooks: verify, queue, claim, run, answer");
    add_watcher_options(*serve_cmd, a.serve.watcher);
    serve_cmd
        ->add_option("--listen", a.serve.listen, "HOST:PORT to listen on (e.g. 127.0.0.1:8080)")
        ->required();
    serve_cmd->add_option("--tls-cert", a.serve.tls_cert, "PEM certificate: serve HTTPS itself");
    serve_cmd->add_option("--tls-key", a.serve.tls_key, "PEM private key of --tls-cert");
    serve_cmd->add_flag("--no-ui", a.serve.no_ui, "no dashboard under /ui");
    serve_cmd->add_flag("--ui-read-only", a.serve.dashboard.read_only,
                        "the dashboard under /ui shows, and offers no actions");
    commands.emplace_back(serve_cmd, [&a] { return run_serve(a.serve); });

    auto* ui_cmd = app.add_subcommand(
        "ui", "the dashboard in a browser: races live, logs, verdicts, the scorecard");
    ui_cmd->add_option("--bind", a.ui.bind, "the address to listen on (default 127.0.0.1)");
    ui_cmd->add_option("--port", a.ui.port, "the port (default 8377; 0: any free one)")
        ->check(cocode::tool::whole_number(0, 65535));
    ui_cmd->add_flag("--read-only", a.ui.dashboard.read_only,
                     "show only: no stop, no plan verdicts, no run again");
    commands.emplace_back(ui_cmd, [&a] { return run_ui(a.ui); });
}

// Hidden: what `run --detach` starts (cmd_supervise.cpp), and a built-in agent (textproto,
// perplexity, xai, codali) as the supervisor starts it.
void add_hidden_commands(CLI::App& app, Arguments& a, Commands& commands) {
    SuperviseArgs& supervise = a.supervise;
    auto* supervise_cmd = app.add_subcommand("supervise", "");
    supervise_cmd->group("");
    supervise.source.add_to(*supervise_cmd);
    supervise_cmd->add_option("--runs", supervise.runs)->required();
    supervise_cmd->add_option("--concurrency", supervise.concurrency)
        ->check(cocode::tool::whole_number(1, 64));
    supervise_cmd->add_option("--timeout", supervise.timeout);
    supervise_cmd->add_flag("--no-check", supervise.no_check);
    supervise_cmd->add_flag("--publish", supervise.publish);
    commands.emplace_back(supervise_cmd, [&a] { return run_supervise(a.supervise); });

    auto* agent_cmd = app.add_subcommand("agent", "");
    agent_cmd->group("");
    agent_cmd->add_option("--repo", a.agent.repo)->required();
    agent_cmd->add_option("--run", a.agent.run)->required();
    agent_cmd->add_option("--agent", a.agent.agent)->required();
    commands.emplace_back(agent_cmd, [&a] { return run_agent(a.agent); });
}

void add_inspection_commands(CLI::App& app, Arguments& a, Commands& commands) {
    auto* status_cmd = app.add_subcommand("status", "the runs: state, commits, ready, exit");
    status_cmd->add_option("which", a.status.which, "a run id or an issue number");
    status_cmd->add_flag("--json", a.status.json, "print JSON");
    status_cmd->add_flag("--watch", a.status.watch, "keep showing until every run has finished");
    commands.emplace_back(status_cmd, [&a] { return run_status(a.status); });

    auto* report_cmd = app.add_subcommand(
        "report", "which agent to trust for which work: PASS rate, merges, reverts, cost");
    report_cmd->add_option("--since", a.report.since, "runs started this long ago or since (7d)");
    report_cmd->add_option("--by", a.report.by,
                           "rows by any of agent, model, kind, issue, day (agent,kind)");
    report_cmd->add_option("--source", a.report.runs, "live runs (default), replays, or all")
        ->check(CLI::IsMember({"live", "replay", "all"}));
    report_cmd->add_flag("--refresh", a.report.refresh,
                         "first ask GitHub what became of the pull requests");
    report_cmd->add_flag("--json", a.report.json, "print JSON");
    report_cmd->add_flag("--csv", a.report.csv, "print CSV");
    report_cmd->add_flag("--markdown", a.report.markdown,
                         "print the chart as a Markdown table (for a step summary)");
    report_cmd->add_flag("--published", a.report.published,
                         "count the runs whose verdicts were published on the repository's "
                         "issues (the action's), not the run folders here");
    report_cmd->add_option("--svg", a.report.svg,
                           "also draw the PASS rates and costs per PASS as an SVG picture here");
    report_cmd->add_flag("--prices", a.report.prices, "print the shipped price table");
    a.report.source.add_to(*report_cmd, true);  // --published, --refresh
    commands.emplace_back(report_cmd, [&a] { return run_report(a.report); });

    auto* logs_cmd = app.add_subcommand("logs", "an agent's output");
    logs_cmd
        ->add_option("run", a.logs.run,
                     "a run id (or a unique start of one), or an issue: its agent's newest run")
        ->required();
    logs_cmd->add_option("--agent", a.logs.agent, "of an issue's runs, this agent's newest");
    logs_cmd->add_flag("--follow,-f", a.logs.follow, "keep printing until the run ends");
    logs_cmd->add_flag("--stderr", a.logs.stderr_stream, "the agent's stderr instead of stdout");
    logs_cmd->add_flag("--raw", a.logs.raw,
                       "the output as the agent wrote it (no rendering, no escaping)");
    commands.emplace_back(logs_cmd, [&a] { return run_logs(a.logs); });

    auto* stop_cmd = app.add_subcommand("stop", "stop runs, as Ctrl-C stops those `run` started");
    stop_cmd->add_option("which", a.stop.which, "a run id (or a unique prefix) or an issue number")
        ->required();
    stop_cmd->add_flag("--no-wait", a.stop.no_wait, "ask, and return before they have stopped");
    commands.emplace_back(stop_cmd, [&a] { return run_stop(a.stop); });

    auto* egress_cmd = app.add_subcommand(
        "egress", "the hosts runs connected to, as network configuration to paste");
    egress_cmd
        ->add_option("which", a.egress.which, "a run id (or a unique prefix) or an issue number")
        ->required();
    commands.emplace_back(egress_cmd, [&a] { return run_egress(a.egress); });

    auto* gate_cmd = app.add_subcommand(
        "gate", "set the merge gate (cocode/gate) of an agent's pull request from GitHub");
    gate_cmd->add_option("pull", a.gate.pull, "the pull request's number");
    gate_cmd->add_option("--event", a.gate.event,
                         "the event (GITHUB_EVENT_PATH) of a review, an approve-merge comment "
                         "or a push on the pull request");
    a.gate.source.add_to(*gate_cmd, true);
    commands.emplace_back(gate_cmd, [&a] { return run_gate(a.gate); });

    auto* presets_cmd = app.add_subcommand(
        "presets", "the coding CLIs cocode runs from a preset, and where each comes from");
    presets_cmd->add_option("name", a.presets.name, "print this preset's file");
    presets_cmd->add_flag("--json", a.presets.json, "print JSON");
    commands.emplace_back(presets_cmd, [&a] { return run_presets(a.presets); });
}

void add_setup_commands(CLI::App& app, Arguments& a, Commands& commands) {
    auto* init_cmd = app.add_subcommand("init", "write .cocode/config.json and install the hook");
    init_cmd->add_flag("--force", a.init.force, "replace an existing configuration");
    commands.emplace_back(init_cmd, [&a] { return run_init(a.init); });

    auto* env_cmd = app.add_subcommand(
        "env", "the prepared environments: the base's key, built ahead, listed, pruned");
    env_cmd->require_subcommand(1);
    for (const auto& [verb, what] : std::vector<std::pair<std::string, std::string>>{
             {"key", "print the key of the base's environment (for a cache)"},
             {"build", "build the base's environment now, or take it when it is built"},
             {"list", "every environment on this machine: size, age, the runs using it"},
             {"prune", "remove what no live run uses, beyond the most recently used"}}) {
        auto* verb_cmd = env_cmd->add_subcommand(verb, what);
        if (verb == "key" || verb == "build")
            verb_cmd->add_option("--commit", a.env.commit,
                                 "this commit's environment, not the base's head");
        if (verb == "prune") {
            verb_cmd->add_option("--keep", a.env.keep, "the most recently used kept (default 3)");
            verb_cmd->add_option("--max-size", a.env.max_size,
                                 "then remove the least recently used until the rest fit (10GiB)");
        }
        verb_cmd->add_flag("--json", a.env.json, "print JSON");
        commands.emplace_back(verb_cmd, [&a, verb = verb] {
            a.env.verb = verb;
            return run_env(a.env);
        });
    }

    auto* replay_cmd = app.add_subcommand(
        "replay", "tasks mined from the repository's history, to race agents on known answers");
    replay_cmd->require_subcommand(1);
    auto* mine_cmd = replay_cmd->add_subcommand(
        "mine", "turn changes of the default branch that touched code and tests into tasks");
    a.replay.source.add_to(*mine_cmd);
    mine_cmd->add_option("--limit", a.replay.limit, "commits walked, newest first (200)");
    mine_cmd->add_option("--since", a.replay.since, "no commit older: 30d, 12h or 2026-11-20");
    mine_cmd->add_option("--paths", a.replay.paths,
                         "a glob of code a change must touch (repeatable)");
    mine_cmd->add_option("--max-lines", a.replay.max_lines,
                         "a change of more lines is no task (1000)");
    mine_cmd->add_flag("--json", a.replay.json, "print JSON");
    commands.emplace_back(mine_cmd, [&a] {
        a.replay.verb = "mine";
        return run_replay(a.replay);
    });
    auto* replay_run_cmd = replay_cmd->add_subcommand(
        "run", "race agents on the tasks, each at its base with no history after it");
    replay_run_cmd->add_option("--agent", a.replay.agents,
                               "an agent from .cocode/config.json (repeatable)");
    replay_run_cmd->add_option("--task", a.replay.tasks, "a task's id (repeatable)");
    replay_run_cmd->add_option("--repeat", a.replay.repeat, "each task and agent this many times")
        ->check(CLI::Range(1, 100));
    replay_run_cmd->add_flag("--json", a.replay.json, "print JSON");
    commands.emplace_back(replay_run_cmd, [&a] {
        a.replay.verb = "run";
        return run_replay(a.replay);
    });
    auto* list_cmd = replay_cmd->add_subcommand("list", "the tasks mined so far");
    list_cmd->add_flag("--json", a.replay.json, "print JSON");
    commands.emplace_back(list_cmd, [&a] {
        a.replay.verb = "list";
        return run_replay(a.replay);
    });

    auto* clean_cmd = app.add_subcommand("clean", "remove runs' worktrees and branches");
    clean_cmd->add_option("which", a.clean.which, "a run id or an issue number");
    clean_cmd->add_flag("--all", a.clean.all, "every run's");
    clean_cmd->add_flag("--force", a.clean.force, "even with unpushed commits or changes");
    clean_cmd->add_flag("--stop", a.clean.stop,
                        "stop runs still going (or being checked) first, as `stop` does");
    commands.emplace_back(clean_cmd, [&a] { return run_clean(a.clean); });

    auto* doctor_cmd = app.add_subcommand("doctor", "check git, agents, tokens, hook, disk");
    doctor_cmd->add_flag("--json", a.doctor.json, "print JSON");
    commands.emplace_back(doctor_cmd, [&a] { return run_doctor(a.doctor); });

    auto* completion_cmd = app.add_subcommand(
        "completion", "print the shell completion script (bash, zsh or fish) to source");
    completion_cmd->add_option("shell", a.shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish"}));
    commands.emplace_back(completion_cmd, [&a] {
        std::fputs(cocode::tool::completion_script("cocode-dispatch", a.shell).c_str(), stdout);
        return 0;
    });
}

}  // namespace

int main(int argc, char** argv) {
    // The GitHub token, the webhook's secret and the dashboard's token out of a same-user
    // agent's reach.
    cocode::hold_secrets(cocode::secret_variables());
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{
        "cocode-dispatch: fetch issues, give each agent its own worktree, supervise the runs",
        "cocode-dispatch"};
    const std::string version =
        cocode::tool::version_line("cocode-dispatch", "libgit2 " + cocode::git::libgit2_version());
    app.set_version_flag("--version", version);
    app.require_subcommand(1);
    app.set_help_all_flag("--help-all", "every command's options (what the man page shows)");
    // In the order --help lists them.
    Arguments a;
    Commands commands;
    add_issue_commands(app, a, commands);
    add_run_command(app, a, commands);
    add_plan_command(app, a, commands);
    add_watcher_commands(app, a, commands);
    add_hidden_commands(app, a, commands);
    add_inspection_commands(app, a, commands);
    add_setup_commands(app, a, commands);
    // Set after the commands are made, which would otherwise each repeat it under their help.
    app.footer(
        "Exit codes: 0 done, 1 a run failed or an error, 2 a mistake in the arguments or the\n"
        "configuration, or not a git repository, 3 a program that is needed is missing, 130\n"
        "interrupted. See docs/runs.md.");

    // `__complete WORD…`: what the completion scripts ask; never an error, only candidates.
    if (argc > 1 && std::string_view(argv[1]) == "__complete") {
        const std::vector<std::string> words(argv + 2, argv + argc);
        for (const auto& candidate : cocode::tool::complete(app, words, completion_values))
            std::printf("%s\n", candidate.c_str());
        return 0;
    }
    if (auto exit = cocode::tool::parse(app, argc, argv, "cocode-dispatch")) return *exit;
    return cocode::tool::run("cocode-dispatch", [&] {
        for (const auto& [command, run] : commands)
            if (*command) return run();
        return 0;
    });
}
