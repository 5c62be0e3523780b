// cocode-dispatch logs: an agent's output, JSON-line logs rendered as `time level message`
// (the agent protocol's log format), plain text passed through.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

std::string render(const std::string& line) {
    if (line.empty() || line.front() != '{') return line;
    auto entry = nlohmann::json::parse(line, nullptr, false);
    if (!entry.is_object() || !entry.contains("message")) return line;
    auto field = [&](const char* key) {
        if (!entry.contains(key)) return std::string();
        const auto& v = entry[key];
        return v.is_string() ? v.get<std::string>() : v.dump();
    };
    std::string time = field("timestamp");
    if (time.empty()) time = field("time");
    std::string level = field("level");
    for (auto& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return (time.empty() ? "-" : time) + " " + (level.empty() ? "-" : level) + " " +
           field("message");
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
    run::RunFiles files{runs.front().folder};
    const auto path = args.stderr_stream ? files.stderr_file() : files.stdout_file();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Failure(Error::general("cannot read " + path.string()));
    std::string pending;
    char buf[65536];
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
                std::string out = render(pending.substr(start, nl - start));
                std::fwrite(out.data(), 1, out.size(), stdout);
                std::fputc('\n', stdout);
                start = nl + 1;
            }
            pending.erase(0, start);
        }
        in.clear();
        std::fflush(stdout);
        return any;
    };
    drain();
    while (args.follow) {
        if (drain()) continue;
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
    if (!pending.empty()) std::printf("%s\n", render(pending).c_str());
    return 0;
}

}  // namespace cocode::dispatch_cli
