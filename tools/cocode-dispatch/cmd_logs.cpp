// cocode-dispatch logs: an agent's output, readable. The coding CLIs' streams (claude
// stream-json, codex --json, gemini stream-json) are rendered as assistant text, tool calls and
// shortened results; the agent protocol's JSON log lines as `time LEVEL message`; anything
// else passes through. Control characters from the agent are shown escaped (--raw prints the
// bytes as the agent wrote them).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

#include "agent/transcript.h"
#include "agent/usage.h"
#include "commands.h"
#include "core/terminal_text.h"
#include "net/proxy.h"
#include "run/run_folder.h"
#include "views.h"
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

LogReader::LogReader(const run::RunFiles& files, bool stderr_stream, std::uint64_t from)
    : in_(stderr_stream ? files.stderr_file() : files.stdout_file(), std::ios::binary),
      offset_(from) {
    // The stream the agent's preset declared when the run began (what an agent writes there
    // later changes how its lines are drawn, never what they say).
    const auto declared = run::read_run_info(files.folder);
    renderer_ = std::make_unique<agent::TranscriptRenderer>(
        agent::stream_kind(declared ? declared->get("stream").value_or("") : std::string()));
    if (in_ && from > 0) in_.seekg(static_cast<std::streamoff>(from));
}

std::vector<std::string> LogReader::read(bool raw) {
    std::vector<std::string> lines;
    char buf[65536];
    while (in_) {
        in_.read(buf, sizeof buf);
        const std::streamsize got = in_.gcount();
        if (got <= 0) break;
        pending_.append(buf, static_cast<std::size_t>(got));
        std::size_t start = 0, nl;
        while ((nl = pending_.find('\n', start)) != std::string::npos) {
            const std::string_view line = std::string_view(pending_).substr(start, nl - start);
            if (raw)
                lines.emplace_back(line);
            else
                renderer_->feed(line, lines);
            offset_ += nl + 1 - start;
            start = nl + 1;
        }
        pending_.erase(0, start);
    }
    in_.clear();
    return lines;
}

std::vector<std::string> LogReader::flush() {
    std::vector<std::string> lines;
    renderer_->flush(lines);
    return lines;
}

std::vector<std::string> LogReader::rest(bool raw) {
    std::vector<std::string> lines;
    if (!pending_.empty()) {
        if (raw)
            lines.push_back(pending_);
        else
            renderer_->feed(pending_, lines);
        offset_ += pending_.size();
        pending_.clear();
    }
    if (!raw) renderer_->flush(lines);
    return lines;
}

int run_logs(const LogsArgs& args) {
    Workspace ws = open_workspace(false);
    auto runs = select_runs(ws, args.run, RunScope::with_replays);
    if (!args.agent.empty()) {
        std::erase_if(runs, [&](const run::RunRecord& r) { return r.agent != args.agent; });
        if (runs.empty())
            throw Failure(
                Error::usage("no run of agent '" + args.agent + "' matches '" + args.run + "'"));
    }
    // An issue's runs (a race, its rounds): one agent's newest is the one a person asks for;
    // of several agents, which one is theirs to say. Run ids sort by their start.
    std::set<std::string> agents;
    for (const auto& r : runs) agents.insert(r.agent);
    if (agents.size() > 1) {
        std::string names, ids;
        for (const auto& name : agents) names += (names.empty() ? "" : ", ") + name;
        for (const auto& r : runs) ids += " " + r.run_id;
        throw Failure(Error::usage("'" + args.run + "' names runs of " +
                                   std::to_string(agents.size()) + " agents (" + names +
                                   "): give --agent NAME, or one run id:" + ids));
    }
    runs = {runs.back()};
    const run::RunRecord& shown = runs.front();
    // A round beyond the first says so first, on stderr; run-info is the agent's to write, so
    // what it says is shown escaped.
    if (shown.round > 1 && !args.raw)
        notice(terminal_safe_line(
            "round " + std::to_string(shown.round) + " of #" + std::to_string(shown.issue) + " " +
            shown.agent + " (" + shown.round_trigger + "), from " + shown.round_from.substr(0, 7)));
    run::RunFiles files{shown.folder};
    LogReader reader(files, args.stderr_stream);
    if (!reader.opened())
        throw Failure(Error::general(
            "cannot read " +
            (args.stderr_stream ? files.stderr_file() : files.stdout_file()).string()));
    auto drain = [&] {
        const auto lines = reader.read(args.raw);
        print(lines);
        std::fflush(stdout);
        return !lines.empty();
    };
    drain();
    auto last_output = Clock::now();
    while (args.follow) {
        if (drain()) {
            last_output = Clock::now();
            continue;
        }
        // Text held back to be joined with what follows is shown once the agent pauses.
        if (!args.raw && Clock::now() - last_output > std::chrono::milliseconds(500))
            print(reader.flush());
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
    print(reader.rest(args.raw));
    std::fflush(stdout);
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
