// What `status`, `logs`, `report`, `env list` and `stop` show and do, as data and calls: the
// terminal and the dashboard (dashboard.h) draw the same facts, made by the same code.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/transcript.h"
#include "commands.h"
#include "run/run_folder.h"
#include "run/usage.h"
#include "workspace.h"

namespace cocode::git {
class Repository;
}

namespace cocode::dispatch_cli {

// A run as `status --json` gives it (`repo`: the workspace's, null when it cannot be opened).
nlohmann::json run_row(const git::Repository* repo, const run::RunRecord& r,
                       const run::RunUsage& usage);

// An agent's output rendered as `logs` renders it (agent/transcript.h), read on from a byte
// offset: only whole lines are taken, so the offset after a read is where the next begins.
class LogReader {
  public:
    LogReader(const run::RunFiles& files, bool stderr_stream, std::uint64_t from = 0);
    bool opened() const { return static_cast<bool>(in_); }
    // The lines rendered from what was written since; `raw` gives them as written instead.
    std::vector<std::string> read(bool raw = false);
    // What the renderer held back to join with what follows (the agent paused, or ended).
    std::vector<std::string> flush();
    // A line the agent never ended, once it has ended.
    std::vector<std::string> rest(bool raw = false);
    std::uint64_t offset() const { return offset_; }

  private:
    std::ifstream in_;
    std::unique_ptr<agent::TranscriptRenderer> renderer_;
    std::string pending_;
    std::uint64_t offset_ = 0;
};

// `report --json`'s object: the scorecard of the runs here since args.since (no GitHub).
nlohmann::json report_json(const Workspace& ws, const ReportArgs& args);

// `env list --json`'s array: the prepared environments, their sizes, ages and runs.
nlohmann::json environments_json();

// Asks a run to stop (`stop`): its supervisor stops it as Ctrl-C would. Recorded in its
// events (STOP_REQUESTED, by whom). An error when the request cannot be written; a run that
// has already ended is left as it is (false).
Result<bool> request_stop(const Workspace& ws, const run::RunRecord& r, const std::string& by);
// Asks each of `runs` still going (its agent or its check) to stop, says so ("stopping ID"),
// and waits until they have ended, printing how each ended; the runs asked.
std::vector<run::RunRecord> stop_and_wait(const Workspace& ws,
                                          const std::vector<run::RunRecord>& runs,
                                          const std::string& by, bool wait = true);

}  // namespace cocode::dispatch_cli
