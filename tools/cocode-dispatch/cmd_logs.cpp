// cocode-dispatch logs: an agent's output, readable. The coding CLIs' streams (claude
// stream-json, codex --json, gemini stream-json) are rendered as assistant text, tool calls and
// shortened results; the agent protocol's JSON log lines as `time LEVEL message`; anything
// else passes through. Control characters from the agent are shown escaped (--raw prints the
// bytes as the agent wrote them).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "agent/transcript.h"
#include "agent/usage.h"
#include "commands.h"
#include "core/terminal_text.h"
#include "net/proxy.h"
#include "run/run_folder.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using Clock = std::chrono::steady_clock;

void print(const std::vector<std::string>& lines) {
    for (const auto& line : lines) {
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fputc('\n', stdout);
    }
}

}  // namespace

int run_logs(const LogsArgs& args) {
    Workspace ws = open_workspace(false);
    auto runs = select_runs(ws, args.run);
    if (runs.size() != 1) {
        std::string ids;
        for (const auto& r : runs) ids += " " + r.run_id;
        throw Failure(Error::usage("'" + args.run + "' names " + std::to_string(runs.size()) +
                                   " runs:" + ids + "; give one run id"));
    }
    const run::RunRecord& shown = runs.front();
    // A round beyond the first says so first, on stderr; run-info is the agent's to write, so
    // what it says is shown escaped.
    if (shown.round > 1 && !args.raw)
        notice(terminal_safe_line(
            "round " + std::to_string(shown.round) + " of #" + std::to_string(shown.issue) + " " +
            shown.agent + " (" + shown.round_trigger + "), from " + shown.round_from.substr(0, 7)));
    run::RunFiles files{shown.folder};
    const auto path = args.stderr_stream ? files.stderr_file() : files.stdout_file();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(Error::general("cannot read " + path.string()));

    // The stream the agent's preset declared when the run began (what an agent writes there
    // later changes how its lines are drawn, never what they say).
    const auto declared = run::read_run_info(shown.folder);
    agent::TranscriptRenderer renderer(
        agent::stream_kind(declared ? declared->get("stream").value_or("") : std::string()));
    std::vector<std::string> lines;
    std::string pending;
    char buf[65536];
    auto emit = [&](std::string_view line) {
        if (args.raw) {
            std::fwrite(line.data(), 1, line.size(), stdout);
            std::fputc('\n', stdout);
            return;
        }
        lines.clear();
        renderer.feed(line, lines);
        print(lines);
    };
    auto drain = [&] {
        bool any = false;
        while (true) {
            in.read(buf, sizeof buf);
            std::streamsize got = in.gcount();
            if (got <= 0) break;
            any = true;
            pending.append(buf, static_cast<std::size_t>(got));
            std::size_t start = 0, nl;
            while ((nl = pending.find('\n', start)) != std::string::npos) {
                emit(std::string_view(pending).substr(start, nl - start));
                start = nl + 1;
            }
            pending.erase(0, start);
        }
        in.clear();
        std::fflush(stdout);
        return any;
    };
    auto flush_renderer = [&] {
        lines.clear();
        renderer.flush(lines);
        print(lines);
        std::fflush(stdout);
    };
    drain();
    auto last_output = Clock::now();
    while (args.follow) {
        if (drain()) {
            last_output = Clock::now();
            continue;
        }
        // Text held back to be joined with what follows is shown once the agent pauses.
        if (Clock::now() - last_output > std::chrono::milliseconds(500)) flush_renderer();
        auto info = run::read_run_info(files.folder);
        if (!info) break;
        auto record = run::record_from(*info, files.folder);
        // A run whose dispatcher died would never end: reconcile ends it (crashed).
        if (run::is_active(record.status)) (void)run::reconcile(record);
        if (!run::is_active(record.status)) {
            drain();
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!pending.empty()) emit(pending);
    flush_renderer();
    // What its proxy blocked (docs/security.md): host, port and the command that tried.
    if (!args.raw && !args.stderr_stream)
        for (const auto& e : net::read_egress(files.folder / "egress.jsonl"))
            if (!e.allowed)
                print({terminal_safe_line("[blocked] " + e.time + " " +
                                          net::entry_text({e.host, e.port, ""}) +
                                          (e.command.empty() ? "" : " by " + e.command))});
    // What it used, last: read as the supervisor reads it (docs/cost.md).
    if (!args.raw && !args.stderr_stream)
        if (auto usage = agent::usage_of_run(files.folder, ws.config.pricing); !usage.empty())
            print({terminal_safe_line("[usage] " + run::usage_summary(usage) +
                                      (usage.cost_source.empty() || !usage.cost_usd
                                           ? ""
                                           : " (" + usage.cost_source + ")"))});
    return 0;
}

}  // namespace cocode::dispatch_cli
