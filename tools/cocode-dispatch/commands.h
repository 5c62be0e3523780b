// The subcommands of cocode-dispatch, one file each; main.cpp only wires them to CLI11.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/source_flags.h"
#include "issues/source.h"

namespace cocode::dispatch_cli {

using tool::SourceFlags;

struct IssuesListArgs {
    SourceFlags source;
    std::vector<std::string> labels;
    std::optional<std::string> state;
    std::optional<std::string> assignee;
    bool json = false;
};

struct IssuesShowArgs {
    SourceFlags source;
    long number = 0;
    bool comments = false;
    bool json = false;
};

struct RunArgs {
    SourceFlags source;
    std::vector<long> issues;
    std::vector<std::string> agents;
    std::vector<std::string> labels;
    std::optional<int> concurrency;
    std::optional<std::string> timeout;
    bool detach = false;
    bool resume = false;
    bool json = false;
    bool no_check = false;  // do not run cocode-check's judging after the runs
    bool publish = false;   // publish each verdict (also: publish.after_run in the config)
    std::optional<std::string> marker;
    std::optional<std::string> sandbox;  // auto, bwrap, none (over the config)
    std::vector<std::string> allowed_paths;
    std::vector<std::string> verify;
    bool plan = false;         // plan rounds first (docs/review.md, "Plans")
    std::string requested_by;  // who asked on GitHub ("@login"): the gate does not count them
    // When a writer approved the runs (the label, the command; ISO 8601), or the event whose
    // issue text they approved: the agent gets no text edited since by anyone else.
    std::optional<std::string> approved_at;
    std::optional<std::string> approved_event;
    // `replay run` runs each task through `run` in a repository of its own: the task, and
    // what the agent must not see (the main repository).
    std::string replay_task;
    std::vector<std::string> hide;
};

// `continue`: the next round of a pair's run (docs/review.md), with feedback typed here.
struct ContinueArgs {
    SourceFlags source;
    std::string which;                 // a run id (or a unique prefix), or an issue number
    std::vector<std::string> agents;   // with an issue number: these pairs (default: all its)
    std::string message;               // -m: the feedback
    bool from_pr = false;              // the feedback from the pair's pull request
    std::optional<std::string> event;  // a webhook payload asking for the round (the action)
    bool detach = false;               // return once the rounds have started
    std::optional<std::string> timeout;
    bool json = false;
    bool no_check = false;
    bool publish = false;
    // What a person does with the pair's plan (docs/review.md, "Plans"): approve it (naming its
    // hash: --hash), revise it (-m: what to change), or reject it.
    bool approve = false;
    bool revise = false;
    bool reject = false;
    std::optional<std::string> hash;
    std::string by;            // who said it on GitHub ("@login"); empty: this terminal
    long long comment_id = 0;  // the comment that said it: a refusal is answered there
};

// The detached half of `run --detach` (hidden).
struct SuperviseArgs {
    SourceFlags source;
    std::vector<std::string> runs;
    std::optional<int> concurrency;
    std::optional<std::string> timeout;
    bool no_check = false;
    bool publish = false;
};

// The built-in agent of one run (hidden): what prepare puts on a built-in agent's command line.
struct AgentArgs {
    std::string repo;  // the main worktree, whose .cocode/seals/ holds the run's configuration
    std::string run;
    std::string agent;
};

struct StatusArgs {
    std::optional<std::string> which;  // a run id, or an issue number
    bool json = false;
    bool watch = false;
};

struct ReportArgs {
    SourceFlags source;        // where the pull requests are (--refresh)
    std::string since = "7d";  // a duration back from now
    std::string by = "agent";  // any of agent, model, kind, issue, day: "agent,kind"
    bool json = false;
    bool csv = false;
    bool refresh = false;            // ask GitHub what became of the pull requests first
    std::string runs = "live";       // --source: live runs, replays (replay/run.h), or all
    std::optional<std::string> svg;  // the chart (check/chart.h) written to this file
    bool markdown = false;           // the chart as a Markdown table (a step summary)
    bool published = false;  // the runs as their verdicts were published on GitHub (the action)
    bool prices = false;     // the shipped price table instead
};

struct LogsArgs {
    std::string run;
    std::string agent;  // of an issue's runs, this agent's
    bool follow = false;
    bool stderr_stream = false;
    bool raw = false;  // the bytes as the agent wrote them, not rendered
};

// `egress`: what runs' networks needed, as configuration (docs/security.md).
struct EgressArgs {
    std::string which;  // a run id (or a unique prefix), or an issue number
};

// `gate`: the merge gate of an agent's pull request (docs/review.md, "The gate").
struct GateArgs {
    SourceFlags source;
    std::optional<long> pull;          // the pull request's number
    std::optional<std::string> event;  // or the event that may have changed it (the action)
};

// `presets`: the coding CLIs cocode runs from a preset (docs/agents.md).
struct PresetsArgs {
    std::optional<std::string> name;  // print this preset's file
    bool json = false;
};

// `env`: the prepared environments (docs/environments.md).
struct EnvArgs {
    std::string verb;                   // key, build, list, prune
    std::optional<std::string> commit;  // key, build: this commit's, not the base's head
    int keep = 3;                       // prune: the most recently used kept
    std::optional<std::string> max_size;
    bool json = false;
};

// `replay`: the tasks mined from the repository's history (docs/report.md).
struct ReplayArgs {
    std::string verb;  // mine, run, list
    SourceFlags source;
    std::size_t limit = 200;           // mine: commits walked
    std::optional<std::string> since;  // mine: none older
    std::vector<std::string> paths;    // mine: globs of code a change must touch
    int max_lines = 1000;
    std::vector<std::string> agents;  // run: these (default: the configured)
    std::vector<std::string> tasks;   // run: these ids (default: every task)
    int repeat = 1;                   // run: each (task, agent) this many times
    bool json = false;
};

struct CleanArgs {
    std::optional<std::string> which;
    bool all = false;
    bool force = false;
    bool stop = false;  // stop what is still going first
};

struct InitArgs {
    bool force = false;
};

struct DoctorArgs {
    bool json = false;
};

struct PlanArgs {
    SourceFlags source;
    std::vector<long> issues;
    std::vector<std::string> agents;
    std::vector<std::string> labels;
    std::optional<std::string> event;  // a webhook payload file ($GITHUB_EVENT_PATH)
    bool json = false;
    bool publish = false;  // start each issue's live comment, every agent queued
};

// What `watch` and `serve` share: where the issues come from, which to take, and how.
struct WatcherArgs {
    SourceFlags source;
    std::optional<std::string> label;  // the configuration's trigger label unless given
    std::vector<std::string> agents;
    std::string lease = "1h";
    int max_parallel = 2;
};

struct WatchArgs {
    WatcherArgs watcher;
    std::string interval = "60s";
    bool once = false;
};

// `ui` and `serve`'s /ui: the dashboard (dashboard.h, docs/dashboard.md).
struct DashboardArgs {
    bool read_only = false;  // no actions: stop, plans, run again
};

struct ServeArgs {
    WatcherArgs watcher;
    std::string listen;  // HOST:PORT
    std::optional<std::string> tls_cert, tls_key;
    DashboardArgs dashboard;
    bool no_ui = false;  // no dashboard under /ui
};

struct UiArgs {
    std::string bind = "127.0.0.1";
    int port = 8377;  // 0: any free port
    DashboardArgs dashboard;
};

// `stop`: a person stops runs (run::stop_request_path), as Ctrl-C stops `run`'s.
struct StopArgs {
    std::string which;  // a run id (or a unique prefix), or an issue number (its active runs)
    bool no_wait = false;
};

int run_issues_list(const IssuesListArgs& args);
int run_issues_show(const IssuesShowArgs& args);
int run_run(const RunArgs& args);
int run_continue(const ContinueArgs& args);
int run_supervise(const SuperviseArgs& args);
int run_agent(const AgentArgs& args);
int run_status(const StatusArgs& args);
int run_logs(const LogsArgs& args);
int run_egress(const EgressArgs& args);
int run_gate(const GateArgs& args);
int run_presets(const PresetsArgs& args);
int run_report(const ReportArgs& args);
int run_env(const EnvArgs& args);
int run_replay(const ReplayArgs& args);
int run_clean(const CleanArgs& args);
int run_init(const InitArgs& args);
int run_doctor(const DoctorArgs& args);
int run_plan(const PlanArgs& args);
int run_watch(const WatchArgs& args);
int run_serve(const ServeArgs& args);
int run_ui(const UiArgs& args);
int run_stop(const StopArgs& args);

}  // namespace cocode::dispatch_cli
