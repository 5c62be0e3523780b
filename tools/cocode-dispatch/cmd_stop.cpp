// cocode-dispatch stop: a person stops runs. The request goes beside the run's seal, where its
// agent cannot write (run::stop_request_path); the run's supervisor, wherever it runs on this
// machine, sees it within a tick and stops the run as Ctrl-C stops it (interrupted, exit 130).
// The dashboard's Stop button calls the same request_stop. A run being checked is stopped the
// same way: its check's command ends and the check is `interrupted` (run/checking.h).
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/files.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "run/checking.h"
#include "run/seal.h"
#include "views.h"

namespace cocode::dispatch_cli {

using json = nlohmann::json;

namespace {

// Its agent still going, or its check (run/checking.h).
bool stoppable(const Workspace& ws, const run::RunRecord& r) {
    return run::is_active(r.status) || run::checking_now(ws.root, r.run_id);
}

}  // namespace

Result<bool> request_stop(const Workspace& ws, const run::RunRecord& r, const std::string& by) {
    if (!stoppable(ws, r)) return false;
    const auto path = run::stop_request_path(ws.root, r.run_id);
    const json request = {{"run_id", r.run_id},
                          {"by", by},
                          {"at", format_utc_timestamp(std::chrono::system_clock::now())}};
    if (auto written = write_file_atomic(path, request.dump() + "\n"); !written)
        return std::move(written).error();
    if (auto recorded = run::append_event(r.folder, r.run_id, "STOP_REQUESTED", {{"by", by}});
        !recorded)
        return std::move(recorded).error();
    return true;
}

std::vector<run::RunRecord> stop_and_wait(const Workspace& ws,
                                          const std::vector<run::RunRecord>& runs,
                                          const std::string& by, bool wait) {
    std::vector<run::RunRecord> asked;
    for (const auto& r : runs) {
        if (!request_stop(ws, r, by).value_or_throw()) continue;
        std::printf("stopping %s (#%ld %s)\n", r.run_id.c_str(), r.issue, r.agent.c_str());
        asked.push_back(r);
    }
    if (!wait) return asked;
    // Until each has ended: its supervisor's grace, then SIGKILL, bound how long.
    std::fflush(stdout);
    for (const auto& r : asked) {
        while (true) {
            auto now = select_runs(ws, r.run_id);
            if (now.empty() || !stoppable(ws, now.front())) {
                if (!now.empty()) {
                    const auto& end = now.front();
                    std::string state(run::status_name(end.status));
                    if (!end.reason_text.empty()) state += " (" + end.reason_text + ")";
                    if (run::check_interrupted(end.folder)) state += ", its check interrupted";
                    if (run::publish_interrupted(end.folder))
                        state += ", its publishing interrupted (the verdict is only here)";
                    // run-info is the agent's to write: shown escaped.
                    std::printf("%s\n", terminal_safe_line(r.run_id + ": " + state).c_str());
                }
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    return asked;
}

int run_stop(const StopArgs& args) {
    Workspace ws = open_workspace(false);
    if (stop_and_wait(ws, select_runs(ws, args.which), "terminal", !args.no_wait).empty())
        std::printf("nothing to stop: '%s' has no run queued, running or being checked\n",
                    args.which.c_str());
    return 0;
}

}  // namespace cocode::dispatch_cli
