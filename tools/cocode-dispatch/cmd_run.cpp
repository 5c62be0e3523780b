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

#include "agent/supervisor.h"
#include "check/run_check.h"
#include "commands.h"
#include "common/executables.h"
#include "core/redact.h"
#include "core/terminal_text.h"
#include "hook/installer.h"
#include "progress.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<config::AgentConfig> choose_agents(const config::Config& config,
                                               const std::vector<std::string>& names) {
    if (config.agents.empty())
        throw Failure(Error::usage(
            "no agents configured in " +
            (config.source.empty() ? std::string(config::kConfigFile) : config.source.string()) +
            " (run `cocode-dispatch init`)"));
    std::vector<std::string> wanted = names;
    if (wanted.empty()) wanted = config.default_agents;
    std::vector<config::AgentConfig> chosen;
    if (wanted.empty()) return config.agents;
    std::vector<std::string> known;
    for (const auto& a : config.agents) known.push_back(a.name);
    for (const auto& name : wanted) {
        const auto* agent = config.find_agent(name);
        if (!agent) {
            std::string message = "--agent: no agent '" + name + "' in " + config::kConfigFile;
            if (auto near = config::closest_word(name, known))
                message += " (did you mean '" + *near + "'?)";
            throw Failure(Error::usage(message));
        }
        if (std::none_of(chosen.begin(), chosen.end(),
                         [&](const config::AgentConfig& a) { return a.name == name; }))
            chosen.push_back(*agent);
    }
    return chosen;
}

// The post-commit hook is how READY arrives while an agent still runs. Installed (chained)
// into every hooks folder the worktrees use; a failure costs only live READY, so it warns.
void ensure_hooks(const fs::path& root, const std::vector<agent::PlannedRun>& runs) {
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
    auto main = hook::locate_hooks(root);
    if (main) ensure(*main);
    // Usually every worktree runs the main folder's hooks and one look is enough; asking git
    // in each worktree costs three git processes per run.
    if (main && main->shared_by_worktrees) return;
    for (const auto& run : runs) {
        if (run.failed) continue;
        if (auto where = hook::locate_hooks(run.worktree)) ensure(*where);
    }
}

std::string run_line(const agent::PlannedRun& run, const std::string& what) {
    return format_utc_timestamp(std::chrono::system_clock::now()).substr(11, 8) + "  " +
           run.run_id + "  #" + std::to_string(run.issue) + " " + run.agent.name + "  " + what;
}

// One run in the live view: state, elapsed time, output so far, commits, READY, verdict.
std::string view_line(const agent::RunView& view, const std::string& verdict) {
    using Clock = std::chrono::steady_clock;
    const agent::PlannedRun& run = *view.run;
    std::string state = view.state;
    if (view.result && view.result->reason != run::StopReason::none)
        state += " (" + std::string(run::reason_name(view.result->reason)) + ")";
    const bool started = view.started != Clock::time_point{};
    const auto until = view.ended != Clock::time_point{} ? view.ended : Clock::now();
    const long seconds =
        started ? static_cast<long>(
                      std::chrono::duration_cast<std::chrono::seconds>(until - view.started).count())
                : 0;
    char buf[512];
    std::snprintf(buf, sizeof buf, "#%-5ld %-12s %-24s %7s %9s %10s  %-18s %s", run.issue,
                  run.agent.name.c_str(), state.c_str(),
                  started ? format_elapsed(seconds).c_str() : "-",
                  started ? format_bytes(view.output_bytes).c_str() : "-",
                  started ? (std::to_string(view.commits) + (view.commits == 1 ? " commit" : " commits")).c_str()
                          : "-",
                  view.ready_commit.empty() ? "" : ("READY " + view.ready_commit.substr(0, 10)).c_str(),
                  verdict.c_str());
    return buf;
}

const char* color_of(const std::string& state) {
    if (state == "completed") return "completed";
    if (state == "failed") return "failed";
    if (state == "queued") return "queued";
    return "running";
}

json result_json(const agent::PlannedRun& run, const agent::RunResult& result) {
    return {{"run_id", run.run_id},
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

// After the batch, the check (docs/check.md): every run that ended is judged, and its verdict
// published when asked. Nothing after an interrupt: the user wants to stop.
struct AfterRun {
    bool check = true;
    bool publish = false;
    const config::Config* config = nullptr;
    issues::IssueSource* source = nullptr;
    std::function<void(const check::BatchCheck&)> on_judged;  // from the judging threads
};

std::vector<check::BatchCheck> check_after(const std::vector<agent::PlannedRun>& runs,
                                           const agent::BatchResult& batch, const AfterRun& after) {
    if (!after.check || batch.interrupted) return {};
    std::vector<run::RunRecord> records;
    for (const auto& run : runs) {
        auto info = run::read_run_info(run.files.folder);
        if (info) records.push_back(run::record_from(*info, run.files.folder));
    }
    return check::check_batch(records, *after.config, after.config->concurrency,
                              after.publish ? after.source : nullptr, after.on_judged);
}

const check::BatchCheck* check_of(const std::vector<check::BatchCheck>& checks,
                                  const std::string& run_id) {
    for (const auto& c : checks)
        if (c.run_id == run_id) return &c;
    return nullptr;
}

std::string check_line(const check::BatchCheck& c) {
    if (!c.verdict) return "check: " + c.error;
    std::string line = std::string(c.verdict->pass ? "PASS" : "FAIL") + "  " +
                       (c.verdict->report_dir / check::kCheckMarkdown).string();
    if (!c.comment_url.empty()) line += "  " + c.comment_url;
    if (!c.error.empty()) line += "  (" + c.error + ")";
    return line;
}

// --detach: the supervisor goes on in a new session, its own output in a log beside the
// runs; we return once it has started the first runs.
int detach_and_supervise(std::vector<agent::PlannedRun>& runs, agent::SupervisorOptions options,
                         const fs::path& runs_dir, bool as_json, const AfterRun& after) {
    int ready_pipe[2];
    if (::pipe2(ready_pipe, O_CLOEXEC) != 0)
        throw Failure(Error::from_errno("cannot create a pipe", errno));
    std::fflush(nullptr);
    pid_t child = ::fork();
    if (child < 0) throw Failure(Error::from_errno("cannot fork", errno));
    if (child == 0) {
        ::close(ready_pipe[0]);
        ::setsid();
        ::signal(SIGHUP, SIG_IGN);
        const fs::path log = runs_dir / ("dispatch-" + std::to_string(::getpid()) + ".log");
        int null_fd = ::open("/dev/null", O_RDONLY);
        int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (null_fd >= 0) ::dup2(null_fd, 0);
        if (log_fd >= 0) ::dup2(log_fd, 1), ::dup2(log_fd, 2);
        for (auto& run : runs)
            (void)run::update_run_info(run.files.folder, [](FlatYaml& info) {
                const ProcessStamp self = stamp_of(::getpid());
                info.set_number("supervisor_pid", self.pid);
                info.set_number("supervisor_start", static_cast<long long>(self.start));
            });
        options.stop_on_hangup = false;
        const int signal_fd = ready_pipe[1];
        options.on_started = [signal_fd] {
            (void)!::write(signal_fd, "1", 1);
            ::close(signal_fd);
        };
        options.on_update = [](const agent::RunUpdate& u) {
            std::printf("%s\n", run_line(*u.run, terminal_safe_line(redact(u.detail))).c_str());
            std::fflush(stdout);
        };
        auto batch = agent::supervise(runs, options);
        int code = batch ? agent::batch_exit_code(*batch) : 1;
        if (batch) {
            auto checks = check_after(runs, *batch, after);
            for (const auto& run : runs)
                if (auto* c = check_of(checks, run.run_id))
                    std::printf("%s\n", run_line(run, redact(check_line(*c))).c_str());
        }
        std::fflush(nullptr);
        ::_exit(code);
    }
    ::close(ready_pipe[1]);
    char byte = 0;
    ssize_t got;
    do got = ::read(ready_pipe[0], &byte, 1);
    while (got < 0 && errno == EINTR);
    ::close(ready_pipe[0]);
    if (got != 1) throw Failure(Error::general("the detached dispatcher stopped before starting"));
    if (as_json) {
        json out = json::array();
        for (const auto& run : runs)
            out.push_back({{"run_id", run.run_id},
                           {"issue", run.issue},
                           {"agent", run.agent.name},
                           {"run_folder", run.files.folder.string()}});
        std::cout << json{{"dispatcher_pid", child}, {"runs", out}}.dump(2) << "\n";
    } else {
        for (const auto& run : runs)
            std::printf("%s  #%ld %s\n", run.run_id.c_str(), run.issue, run.agent.name.c_str());
        std::fprintf(stderr,
                     "cocode-dispatch: detached (pid %d); follow with `cocode-dispatch status "
                     "--watch`\n",
                     static_cast<int>(child));
    }
    return 0;
}

}  // namespace

int run_run(const RunArgs& args) {
    Workspace ws = open_workspace();
    if (args.concurrency) ws.config.concurrency = *args.concurrency;
    std::optional<config::Duration> timeout;
    if (args.timeout) {
        auto parsed = config::parse_duration(*args.timeout);
        if (!parsed) throw Failure(Error::usage("--timeout: " + parsed.error().message));
        timeout = *parsed;
    }
    if (args.issues.empty() && args.labels.empty())
        throw Failure(Error::usage("run: name at least one ISSUE or a --label"));
    const auto agents = choose_agents(ws.config, args.agents);

    SourceFlags flags = args.source;
    flags.options.repo_dir = ws.root;
    auto source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
    std::vector<github::Issue> issues;
    std::set<long> seen;
    for (long number : args.issues) {
        if (!seen.insert(number).second) continue;
        issues.push_back(source->get(number).value_or_throw());
    }
    if (!args.labels.empty()) {
        github::IssueQuery query;
        query.labels = args.labels;
        for (auto& issue : source->list(query).value_or_throw())
            if (seen.insert(issue.number).second) issues.push_back(std::move(issue));
        if (issues.empty()) {
            notice("no open issues with those labels; nothing to run");
            return 0;
        }
    }
    for (auto& issue : issues)
        if (issue.html_url.empty()) issue.html_url = source->issue_url(issue.number);

    agent::DispatchContext context;
    context.repo_root = ws.root;
    context.config = ws.config;
    context.project_id = ws.project_id();
    context.resume = args.resume;
    context.timeout = timeout;
    context.notice = notice;
    auto runs = agent::plan_runs(context, issues, agents).value_or_throw();
    ensure_hooks(ws.root, runs);

    agent::SupervisorOptions options;
    options.concurrency = ws.config.concurrency;
    options.grace = ws.config.grace;
    options.ready_quiet = ws.config.ready_quiet;
    options.restart_backoff = ws.config.restart_backoff;
    AfterRun after;
    after.check = !args.no_check;
    after.publish = args.publish || ws.config.publish.after_run;
    after.config = &ws.config;
    after.source = source.get();
    if (args.detach) return detach_and_supervise(runs, options, ws.runs_dir(), args.json, after);

    Progress progress(stderr);
    std::mutex shown;  // the judging threads report too
    std::map<std::string, std::string> verdicts;  // run id → "PASS", "FAIL", "judging…"
    std::vector<agent::RunView> last_views;
    auto redraw = [&](const std::vector<agent::RunView>& views) {
        for (const auto& view : views)
            progress.set(view.run->run_id, view_line(view, verdicts[view.run->run_id]),
                         color_of(view.state));
    };
    if (progress.in_place()) {
        // On a terminal: every run on its own line, rewritten as it changes; the clocks tick.
        options.on_tick = [&](const std::vector<agent::RunView>& views) {
            std::lock_guard<std::mutex> lock(shown);
            last_views = views;
            redraw(views);
        };
    } else {
        // A pipe or a CI log: one line per event.
        options.on_update = [&](const agent::RunUpdate& u) {
            static const char* kNames[] = {"started", "READY", "restarting", "stopping",
                                           "finished"};
            std::string state =
                u.kind == agent::UpdateKind::finished
                    ? (u.detail.rfind("completed", 0) == 0 ? "completed" : "failed")
                    : "running";
            std::string what = u.kind == agent::UpdateKind::finished
                                   ? u.detail
                                   : std::string(kNames[static_cast<int>(u.kind)]) + " " + u.detail;
            progress.set(u.run->run_id, run_line(*u.run, terminal_safe_line(redact(what))), state);
        };
    }
    after.on_judged = [&](const check::BatchCheck& c) {
        if (!progress.in_place()) return;
        std::lock_guard<std::mutex> lock(shown);
        verdicts[c.run_id] = c.verdict ? (c.verdict->pass ? "PASS" : "FAIL") : "check failed";
        redraw(last_views);
    };
    auto batch = agent::supervise(runs, options).value_or_throw();
    if (progress.in_place() && after.check && !batch.interrupted) {
        std::lock_guard<std::mutex> lock(shown);
        for (const auto& view : last_views) verdicts[view.run->run_id] = "judging…";
        redraw(last_views);
    }
    const auto checks = check_after(runs, batch, after);
    if (args.json) {
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
            out["runs"].push_back(std::move(result));
        }
        std::cout << out.dump(2) << "\n";
    } else {
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
                std::printf("%s\n", run_line(run, redact(check_line(*c))).c_str());
    }
    if (batch.interrupted) notice("interrupted; every run's state is written");
    // The runs decide the exit code; a verdict is the check's to gate on (docs/check.md).
    return agent::batch_exit_code(batch);
}

}  // namespace cocode::dispatch_cli
