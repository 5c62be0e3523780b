// cocode-dispatch supervise (hidden): the detached half of `run --detach`. `run` plans the
// runs and leaves them queued, then starts this with posix_spawn in a session of its own —
// a fresh process, not a fork of one holding threads and a TLS client — its stdout and
// stderr on the log beside the runs. It supervises them to the end, judges them, and tells
// `run` it has started the first ones by writing a byte to descriptor 3.
#include <unistd.h>

#include <cstdio>

#include "batch.h"
#include "commands.h"
#include "core/redact.h"
#include "core/terminal_text.h"
#include "live.h"
#include "proc/process_tree.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

int run_supervise(const SuperviseArgs& args) {
    Workspace ws = open_workspace();
    if (args.concurrency) ws.config.concurrency = *args.concurrency;
    agent::DispatchContext context;
    context.repo_root = ws.root;
    context.config = ws.config;
    context.project_id = ws.project_id();
    context.notice = notice;
    if (args.timeout) {
        auto parsed = config::parse_duration(*args.timeout);
        if (!parsed) throw Failure(Error::usage("--timeout: " + parsed.error().message));
        context.timeout = *parsed;
    }

    std::vector<agent::PlannedRun> runs;
    for (const auto& id : args.runs) {
        if (!is_run_id(id)) throw Failure(Error::usage("--runs: '" + id + "' is not a run id"));
        const auto folder = ws.runs_dir() / id;
        auto info = run::read_run_info(folder).value_or_throw();
        runs.push_back(agent::replan_run(context, run::record_from(info, folder)).value_or_throw());
    }
    // From here on this process is the runs' dispatcher, for status and recovery alike.
    const ProcessStamp self = stamp_of(::getpid());
    for (const auto& run : runs) {
        run::update_run_info(run.files.folder, [&](FlatYaml& info) {
            run::set_supervisor(info, self);
        }).value_or_throw();
        run::keep_state(run.files.folder, [&](FlatYaml& kept) {
            run::set_supervisor(kept, self);
        }).value_or_throw();
    }

    agent::SupervisorOptions options = supervisor_options(ws.config);
    options.stop_on_hangup = false;
    options.on_started = [] {
        (void)!::write(3, "1", 1);
        ::close(3);
    };
    options.on_update = [](const agent::RunUpdate& u) {
        std::printf("%s\n", run_line(*u.run, terminal_safe_line(redact(u.detail))).c_str());
        std::fflush(stdout);
    };
    std::unique_ptr<issues::IssueSource> source;
    AfterRun after;
    after.check = !args.no_check;
    after.publish = args.publish || ws.config.publish.after_run;
    after.config = &ws.config;
    if (after.publish) {
        SourceFlags flags = args.source;
        flags.options.repo_dir = ws.root;
        source = issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
        after.source = source.get();
    }
    LiveProgress live(runs, ws.config, source.get(), after.publish, after.check);
    live.attach(options);
    after.on_judged = [&live](const check::BatchCheck& c) { live.judged(c); };
    JudgeAsTheyEnd judges(runs, after);  // each run as soon as it ends
    judges.attach(options);
    auto batch = agent::supervise(runs, options).value_or_throw();
    const auto checks = judges.finish(batch);
    live.finish(checks);
    for (const auto& run : runs)
        if (const auto* c = check_of(checks, run.run_id))
            std::printf("%s\n", run_line(run, terminal_safe_line(redact(check_line(*c)))).c_str());
    for (const auto& line : batch.unrecorded) std::printf("error: %s\n", line.c_str());
    std::fflush(stdout);
    return agent::batch_exit_code(batch);
}

}  // namespace cocode::dispatch_cli
