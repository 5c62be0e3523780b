// Running one verify command: `sh -c` in its tree (with the environment's overlays), through
// the runner the caller gives (agent/confined.h: the sandbox, behind the network's allowlist —
// it runs code an agent wrote), its own session, stdin from /dev/null, stdout and stderr into
// one log file, a timeout (SIGTERM to the group, 2 s, SIGKILL), and an environment that holds
// no secret.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "proc/command_runner.h"

namespace cocode::check {

struct VerifyResult {
    int exit_code = 0;  // 128+N when killed by signal N
    bool timed_out = false;
    double seconds = 0;
    std::string tail;  // the log's last lines, secrets masked
};

// `record`: where the command's connections are recorded when its network is enclosed.
Result<VerifyResult> run_verify(const CommandRunner& runner, const std::string& command,
                                const std::filesystem::path& cwd,
                                const std::vector<std::string>& environment,
                                std::chrono::milliseconds timeout, const std::filesystem::path& log,
                                const std::vector<OverlayMount>& overlays,
                                const std::filesystem::path& record);

// The last `lines` lines of a file (at most 64 KiB read), secrets masked.
std::string tail_of(const std::filesystem::path& file, int lines = 30);

}  // namespace cocode::check
