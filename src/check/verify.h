// Running one verify command: `sh -c` in its tree (with the environment's overlays), its own
// process group, stdin from /dev/null, stdout and stderr into one log file, a timeout (SIGTERM to
// the group, 2 s, SIGKILL), and an environment that holds no secret — it runs code an agent wrote.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "proc/spawn.h"

namespace cocode::check {

struct VerifyResult {
    int exit_code = 0;  // 128+N when killed by signal N
    bool timed_out = false;
    double seconds = 0;
    std::string tail;  // the log's last lines, secrets masked
};

Result<VerifyResult> run_verify(const std::string& command, const std::filesystem::path& cwd,
                                const std::vector<std::string>& environment,
                                std::chrono::milliseconds timeout, const std::filesystem::path& log,
                                const std::vector<OverlayMount>& overlays = {});

// The last `lines` lines of a file (at most 64 KiB read), secrets masked.
std::string tail_of(const std::filesystem::path& file, int lines = 30);

}  // namespace cocode::check
