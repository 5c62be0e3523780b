// cocode-dispatch run: issues × agents, each in its own worktree, supervised to the end.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "batch.h"
#include "commands.h"
#include "common/executables.h"
#include "core/closest_word.h"
#include "core/json_text.h"
#include "core/redact.h"
#include "core/terminal_text.h"
#include "hook/installer.h"
#include "live.h"
#include "proc/interrupt.h"
#include "proc/spawn.h"
#include "progress.h"
#include "routing.h"
#include "scale/approval.h"
#include "scale/gate.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The post-commit hook is how READY arrives while an agent still runs. Installed (chained)
// into every hooks folder the worktrees use; a failure costs only live READY, so it warns.
void ensure_hooks(const std::vector<agent::PlannedRun>& runs) {
    hook::InstallOptions options{tool::sibling_executable("cocode-hook-shim"),
                                 tool::sibling_executable("cocode-hook"), false};
    std::set<fs::path> done;
    auto ensure = [&](const hook::HooksLocation& where) {
        if (!done.insert(where.hooks_dir).second) return;
        auto installed = hook::install_hook(where, "post-commit", options);
        if (!installed)
            notice("warning: post-commit hook not installed in " + where.hooks_dir.string() + " (" +
                   installed.error().message +
                   "); READY will be known only when the check reads the commits");
    };
    // Each run's own repository (git/agent_repo.h), made just now without a hook: the shim
    // goes in its hooks folder. The main repository's hooks are not the agent's to run.
    for (const auto& run : runs) {
        if (run.failed) continue;
        ensure(hook::HooksLocation{run.own.git() / "hooks", run.own.git(), run.worktree,
                                   std::nullopt, false});
    }
}

// One run in the live view: state, elapsed time, output so far, commits, tokens and cost so
// far, READY, verdict.
// view_line's columns, named.
constexpr char kViewColumns[] = "%-6s %-12s %-24s %7s %9s %10s %6s %7s  %-18s %s";
std::string view_header() {
    char buf[256];
    std::snprintf(buf, sizeof buf, kViewColumns, "ISSUE", "AGENT", "STATE", "ELAPSED", "OUTPUT",
                  "COMMITS", "TOKENS", "COST", "READY", "VERDICT");
    std::string line = buf;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

std::string view_line(const agent::RunView& view, const std::string& verdict) {
    using Clock = std::chrono::steady_clock;
    const agent::PlannedRun& run = *view.run;
    std::string state(agent::view_state_name(view.state));
    if (view.result && view.result->reason != run::StopReason::none)
        state += " (" + std::string(run::reason_name(view.result->reason)) + ")";
    const bool started = view.started != Clock::time_point{};
    const auto until = view.ended != Clock::time_point{} ? view.ended : Clock::now();
    const long seconds =
        started
            ? static_cast<long>(
                  std::chrono::duration_cast<std::chrono::seconds>(until - view.started).count())
            : 0;
    const run::RunUsage usage = view.usage.value_or(run::RunUsage{});
    char buf[512];
    std::snprintf(
        buf, sizeof buf, kViewColumns, ("#" + std::to_string(run.issue)).c_str(),
        run.agent.name.c_str(), state.c_str(), started ? format_elapsed(seconds).c_str() : "-",
        started ? format_bytes(view.output_bytes).c_str() : "-",
        started
            ? (std::to_string(view.commits) + (view.commits == 1 ? " commit" : " commits")).c_str()
            : "-",
        run::tokens_cell(usage).c_str(), run::cost_cell(usage).c_str(),
        view.ready_commit.empty() ? "" : ("READY " + view.ready_commit.substr(0, 10)).c_str(),
        verdict.c_str());
    return buf;
}

const char* color_of(agent::ViewState state) {
    switch (state) {
        case agent::ViewState::completed:
            return "completed";
        case agent::ViewState::failed:
            return "failed";
        case agent::ViewState::queued:
            return "queued";
        default:
            return "running";
    }
}

json result_json(const agent::PlannedRun& run, const agent::RunResult& result) {
    return {
        {"run_id", run.run_id},
        {"issue", run.issue},
        {"agent", run.agent.name},
        {"status", run::status_name(result.status)},
        {"reason", run::reason_name(result.reason)},
        {"exit_code", result.exit_code},
        {"restarts", result.restarts},
        {"ready_commit", result.ready_commit.empty() ? json(nullptr) : json(result.ready_commit)},
        {"branch", run.branch},
        {"worktree", run.worktree.string()},
        {"run_folder", run.files.folder.string()}};
}

// --detach: runs that cannot start are written ended here; the others go to a supervisor of
// their own, `cocode-dispatch supervise`, started with posix_spawn in a new session with its
// output in a log beside the runs. We return once it has started the first runs.
int detach(std::vector<agent::PlannedRun>& runs, const RunArgs& args, const Workspace& ws) {
    std::vector<agent::PlannedRun> unstartable, startable;
    for (auto& run : runs) (run.failed ? unstartable : startable).push_back(run);
    if (!unstartable.empty()) (void)agent::supervise(unstartable, supervisor_options(ws.config));
    if (startable.empty()) {
        for (const auto& run : unstartable)
            notice(run.run_id + ": " + (run.failed ? run.failed->message : std::string()));
        return static_cast<int>(unstartable.front().failed->code);
    }

    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(), "supervise",
                                     "--runs"};
    for (const auto& run : startable) argv.push_back(run.run_id);
    auto source_args = args.source.as_args();
    argv.insert(argv.end(), source_args.begin(), source_args.end());
    if (args.concurrency)
        argv.insert(argv.end(), {"--concurrency", std::to_string(*args.concurrency)});
    if (args.timeout) argv.insert(argv.end(), {"--timeout", *args.timeout});
    if (args.no_check) argv.push_back("--no-check");
    if (args.publish) argv.push_back("--publish");

    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0)
        throw Failure(Error::from_errno("cannot create a pipe", errno));
    UniqueFd ready_read(ready[0]), ready_write(ready[1]);
    const fs::path log = ws.runs_dir() / ("dispatch-" + startable.front().run_id + ".log");
    UniqueFd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!log_fd.valid()) throw Failure(Error::from_errno("cannot open " + log.string(), errno));

    ChildOptions supervisor;
    supervisor.argv = argv;
    supervisor.out = ChildStream::descriptor(log_fd.get());
    supervisor.err = ChildStream::descriptor(log_fd.get());
    supervisor.fd3 = ready_write.get();  // it writes a byte there once the first runs started
    supervisor.group = ChildOptions::Group::own_session;
    std::fflush(nullptr);
    const pid_t child = start_child(supervisor).value_or_throw();
    ready_write = UniqueFd();
    char byte = 0;
    ssize_t got;
    do got = ::read(ready_read.get(), &byte, 1);
    while (got < 0 && errno == EINTR);
    if (got != 1)
        throw Failure(Error::general("the detached dispatcher stopped before starting (see " +
                                     log.string() + ")"));
    if (args.json) {
        json out = json::array();
        for (const auto& run : runs)
            out.push_back({{"run_id", run.run_id},
                           {"issue", run.issue},
                           {"agent", run.agent.name},
                           {"run_folder", run.files.folder.string()}});
        std::cout << json_output(
                         json{{"dispatcher_pid", child}, {"log", log.string()}, {"runs", out}}, 2)
                  << "\n";
    } else {
        for (const auto& run : runs)
            std::printf("%s  #%ld %s\n", run.run_id.c_str(), run.issue, run.agent.name.c_str());
        std::fprintf(stderr,
                     "cocode-dispatch: detached (pid %d, log %s); follow with `cocode-dispatch "
                     "status --watch`\n",
                     static_cast<int>(child), log.c_str());
    }
    return 0;
}

}  // namespace

namespace {}  // namespace

// The workspace with the run's flags over its configuration, and the --timeout they name.
std::pair<Workspace, std::optional<config::Duration>> configured_workspace(const RunArgs& args) {
    Workspace ws = open_workspace();
    config::Overrides overrides;
    overrides.ready_marker = args.marker;
    if (!args.allowed_paths.empty()) overrides.allowed_paths = args.allowed_paths;
    if (!args.verify.empty()) overrides.verify = args.verify;
    overrides.sandbox = args.sandbox;
    auto overridden = config::with_overrides(ws.config, overrides, ws.root);
    if (!overridden)
        throw Failure(
            Error::usage("--marker, --allowed-path or --verify: " + overridden.error().message));
    ws.config = std::move(overridden).value();
    if (args.concurrency) ws.config.concurrency = *args.concurrency;
    std::optional<config::Duration> timeout;
    if (args.timeout) {
        auto parsed = config::parse_duration(*args.timeout);
        if (!parsed) throw Failure(Error::usage("--timeout: " + parsed.error().message));
        timeout = *parsed;
    }
    return {std::move(ws), timeout};
}

namespace {

// Supervises the batch with the live view: on a terminal every run on a line of its own,
// rewritten as it changes (verdicts too, as they come); in a pipe or a CI log, one line per
// event. Each run is judged as soon as it ends (JudgeAsTheyEnd).
std::pair<agent::BatchResult, std::vector<check::BatchCheck>> supervise_in_view(
    std::vector<agent::PlannedRun>& runs, const Workspace& ws, AfterRun& after) {
    agent::SupervisorOptions options = supervisor_options(ws.config);
    Progress progress(stderr);
    std::mutex shown;                             // the judging threads report too
    std::map<std::string, std::string> verdicts;  // run id → "PASS", "FAIL", "judging…"
    std::vector<agent::RunView> last_views;
    auto redraw = [&](const std::vector<agent::RunView>& views) {
        for (const auto& view : views)
            progress.set(view.run->run_id, view_line(view, verdicts[view.run->run_id]),
                         color_of(view.state));
    };
    if (progress.in_place()) {
        // The table's header, above its first line (its columns: view_line's).
        progress.set(" header", view_header(), "");
        options.on_tick = [&](const std::vector<agent::RunView>& views) {
            std::lock_guard<std::mutex> lock(shown);
            last_views = views;
            redraw(views);
        };
    } else {
        options.on_update = [&](const agent::RunUpdate& u) {
            static const char* kNames[] = {"started", "READY", "restarting", "stopping",
                                           "finished"};
            std::string state = u.kind == agent::UpdateKind::finished
                                    ? (u.detail.rfind("completed", 0) == 0 ? "completed" : "failed")
                                    : "running";
            std::string what = u.kind == agent::UpdateKind::finished
                                   ? u.detail
                                   : std::string(kNames[static_cast<int>(u.kind)]) + " " + u.detail;
            progress.set(u.run->run_id, run_line(*u.run, terminal_safe_line(redact(what))), state);
        };
    }
    // The live comment on each issue, when the batch publishes (check/progress.h).
    LiveProgress live(runs, ws.config, after.source, after.publish, after.check);
    live.attach(options);
    after.on_judged = [&](const check::BatchCheck& c) {
        live.judged(c);
        if (!progress.in_place()) return;
        std::lock_guard<std::mutex> lock(shown);
        verdicts[c.run_id] = c.verdict
                                 ? (c.verdict->pass ? std::string("PASS")
                                                    : "FAIL: " + check::first_failure(*c.verdict))
                             : c.interrupted ? "check interrupted"
                                             : "check failed";
        redraw(last_views);
    };
    // Each run judged as soon as it ends, not when the slowest has.
    JudgeAsTheyEnd judges(runs, after);
    judges.attach(options);
    auto batch = agent::supervise(runs, options).value_or_throw();
    if (progress.in_place() && agent::judged_after(batch, after.check)) {
        std::lock_guard<std::mutex> lock(shown);
        for (const auto& view : last_views)
            if (verdicts[view.run->run_id].empty()) verdicts[view.run->run_id] = "judging…";
        redraw(last_views);
    }
    auto checks = judges.finish(batch);
    after.on_judged = nullptr;  // it captured this frame
    live.finish(checks);
    return {std::move(batch), std::move(checks)};
}

// Each run's end and verdict: JSON, or a line each.
void print_results(const std::vector<agent::PlannedRun>& runs, const agent::BatchResult& batch,
                   const std::vector<check::BatchCheck>& checks, bool as_json) {
    if (as_json) {
        json out = {{"interrupted", batch.interrupted},
                    {"runs", json::array()},
                    {"supervisor",
                     {{"cpu_ms", static_cast<double>(batch.cpu.count()) / 1000.0},
                      {"wall_ms", static_cast<double>(batch.wall.count()) / 1000.0}}}};
        for (std::size_t i = 0; i < runs.size(); ++i) {
            json result = result_json(runs[i], batch.runs[i]);
            const auto* c = check_of(checks, runs[i].run_id);
            result["verdict"] =
                c && c->verdict ? json(c->verdict->pass ? "PASS" : "FAIL") : json(nullptr);
            result["check_report"] =
                c && c->verdict ? json((c->verdict->report_dir / check::kCheckMarkdown).string())
                                : json(nullptr);
            result["comment_url"] =
                c && !c->comment_url.empty() ? json(c->comment_url) : json(nullptr);
            result["check_error"] = c && !c->error.empty() ? json(redact(c->error)) : json(nullptr);
            result["check_interrupted"] = c && c->interrupted;
            out["runs"].push_back(std::move(result));
        }
        std::cout << json_output(out, 2) << "\n";
        return;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& r = batch.runs[i];
        const std::string reason(run::reason_name(r.reason));
        std::printf(
            "%s\t#%ld\t%s\t%s\texit %d%s%s\n", runs[i].run_id.c_str(), runs[i].issue,
            runs[i].agent.name.c_str(), std::string(run::status_name(r.status)).c_str(),
            r.exit_code, reason.empty() ? "" : (" (" + reason + ")").c_str(),
            r.ready_commit.empty() ? "" : ("\tready " + r.ready_commit.substr(0, 12)).c_str());
    }
    for (const auto& run : runs)
        if (const auto* c = check_of(checks, run.run_id))
            std::printf("%s\n", run_line(run, terminal_safe_line(redact(check_line(*c)))).c_str());
}

}  // namespace

namespace {

// The issues' text as a writer approved it (scale/approval.h): an issue edited since by
// someone without write access is refused (said on the issue once), unless the event holds
// the text as approved.
std::vector<github::Issue> approved_issues(const RunArgs& args, const Workspace& ws,
                                           issues::IssueSource& source,
                                           std::vector<github::Issue> issues) {
    github::GitHub& github = github_of(source, "--approved-at/--approved-event");
    scale::Approval approval;
    if (args.approved_event) {
        auto text = read_file(*args.approved_event);
        if (!text)
            throw Failure(Error::usage("--approved-event " + *args.approved_event + ": " +
                                       text.error().message));
        const auto payload = nlohmann::json::parse(*text, nullptr, false);
        approval = scale::approval_of_event(payload, "--approved-event " + *args.approved_event)
                       .value_or_throw();
    } else {
        approval.at = *args.approved_at;
    }
    for (auto& issue : issues) {
        auto approved = scale::approved_text(github, ws.config, issue, approval).value_or_throw();
        if (!approved.notice.empty()) notice(approved.notice);
        issue = std::move(approved.issue);
    }
    return issues;
}

}  // namespace

int run_run(const RunArgs& args) {
    auto [ws, timeout] = configured_workspace(args);
    if (args.issues.empty() && args.labels.empty())
        throw Failure(Error::usage("run: name at least one ISSUE or a --label"));
    const auto agents = config::choose_agents(ws.config, args.agents).value_or_throw();

    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    auto issues = issues::select_issues(*source, args.issues, args.labels).value_or_throw();
    if (issues.empty()) {
        notice("no open issues with those labels; nothing to run");
        return 0;
    }
    if (args.approved_at || args.approved_event)
        issues = approved_issues(args, ws, *source, issues);
    // The merge gate does not count its requester's approval: at a terminal, that is whoever
    // the token acts as, unless --requested-by says otherwise.
    RunArgs asked = args;
    if (asked.requested_by.empty() && ws.config.gate.approvals > 0)
        if (github::GitHub* github = source->github_api())
            asked.requested_by = scale::requester_of(*github).value_or_throw();
    return run_pairs(asked, ws, timeout, source.get(), issues, agents, std::nullopt, {},
                     route_issues(ws, issues, agents, args.agents));
}

int run_pairs(const RunArgs& args, const Workspace& ws, std::optional<config::Duration> timeout,
              issues::IssueSource* source, const std::vector<github::Issue>& issues,
              const std::vector<config::AgentConfig>& agents,
              std::optional<agent::RoundRequest> round,
              std::map<std::string, agent::RoundRequest> round_of_agent,
              const std::map<long, check::Routed>& routed) {
    // From here on Ctrl-C, SIGTERM and SIGHUP stop the runs in whatever phase they are —
    // setup, agent, check, publish — each command's group ended, never the process abruptly
    // (proc/interrupt.h).
    InterruptWatch interrupts;
    agent::DispatchContext context;
    context.repo_root = ws.root;
    context.config = ws.config;
    context.project_id = ws.project_id();
    context.resume = args.resume;
    context.plan = args.plan;
    context.requested_by = args.requested_by;
    context.replay_task = args.replay_task;
    for (const auto& path : args.hide) context.hidden_first.emplace_back(path);
    context.round = std::move(round);
    context.round_of_agent = std::move(round_of_agent);
    context.timeout = timeout;
    context.notice = notice;
    for (const auto& [issue, route] : routed) context.routed[issue] = {route.agents, route.why};
    if (ws.config.sandbox == config::SandboxMode::none)
        notice(
            "warning: sandbox: none: the agents, their verify commands, setup and builds run "
            "on this machine with no protection at all (docs/security.md)");
    const bool rounds = context.round || !context.round_of_agent.empty();
    if (auto unseen = changes_agents_will_not_see(ws); !unseen.empty() && !rounds)
        notice("warning: " + std::to_string(unseen.size()) +
               (unseen.size() == 1 ? " file has" : " files have") +
               " uncommitted changes in the main worktree (" + unseen.front() +
               (unseen.size() > 1 ? ", …" : "") +
               "): the agents start from the last commit and will not see them");
    auto runs = agent::plan_runs(context, issues, agents).value_or_throw();
    ensure_hooks(runs);

    if (args.detach) return detach(runs, args, ws);
    AfterRun after;
    after.check = !args.no_check;
    for (const auto& path : args.hide) after.around.hidden_first.emplace_back(path);
    // A replay's repository lies in its space, beside the hidden tests its verify runs.
    if (!args.replay_task.empty()) after.around.visible.push_back(ws.root.parent_path());
    after.publish = args.publish || ws.config.publish.after_run;
    after.config = &ws.config;
    after.source = source;
    const auto [batch, checks] = supervise_in_view(runs, ws, after);
    print_results(runs, batch, checks, args.json);
    for (const auto& line : batch.unrecorded) notice("error: " + line);
    const bool interrupted = batch.interrupted || interrupt_requested();
    if (interrupted) notice("interrupted; every run's state is written");
    // The runs decide the exit code; a verdict is the check's to gate on (docs/check.md). A
    // run asked to be judged that has no verdict (it could not be written: a full disk) is
    // an error of its own; one whose check was stopped is interrupted.
    int code =
        interrupted ? static_cast<int>(ExitCode::interrupted) : agent::batch_exit_code(batch);
    for (const auto& c : checks) {
        // A verdict whose publishing a person stopped: the run was interrupted too.
        if (c.publish_interrupted) code = static_cast<int>(ExitCode::interrupted);
        if (c.verdict) continue;
        if (c.interrupted) {
            code = static_cast<int>(ExitCode::interrupted);
            continue;
        }
        notice("error: run " + c.run_id + ": no verdict: " + redact(c.error));
        if (code == 0) code = static_cast<int>(ExitCode::general);
    }
    return code;
}

}  // namespace cocode::dispatch_cli
