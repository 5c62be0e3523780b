#include "check/verify.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "core/files.h"
#include "core/redact.h"
#include "proc/command.h"
#include "proc/spawn.h"

namespace cocode::check {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::chrono::seconds kGrace{2};

// Waits until `pid` has exited or `deadline` passes; true when it has exited. The child is
// left a zombie (WNOWAIT), so that its pid, and so its group id, cannot be reused before we
// have killed what is left of the group.
bool exited_by(pid_t pid, Clock::time_point deadline) {
    auto pause = std::chrono::milliseconds(1);
    for (;;) {
        siginfo_t info{};
        int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0 && info.si_pid == pid) return true;
        if (rc < 0 && errno != EINTR) return true;  // not ours to wait for any more
        if (Clock::now() >= deadline) return false;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
}

}  // namespace

std::string tail_of(const fs::path& file, int lines) {
    std::string text = read_file_tail(file, 64 * 1024);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    std::size_t start = text.size();
    for (int n = 0; n < lines && start != std::string::npos && start > 0; ++n)
        start = text.rfind('\n', start - 1);
    if (start == std::string::npos)
        start = 0;
    else if (start < text.size() && text[start] == '\n')
        ++start;
    return redact(text.substr(start));
}

Result<VerifyResult> run_verify(const std::string& command, const fs::path& cwd,
                                const std::vector<std::string>& environment,
                                std::chrono::milliseconds timeout, const fs::path& log) {
    auto shell = find_in_path("sh");
    if (!shell) return Error::missing("verify: sh not found in PATH");
    if (auto created = write_file_atomic(log, "", 0644, Durability::content); !created)
        return std::move(created).error();
    SpawnSpec spec;
    spec.argv = {shell->string(), "-c", command};
    spec.environment = environment;
    spec.cwd = cwd;
    spec.stdin_path = "/dev/null";
    spec.stdout_path = log;
    spec.stderr_path = log;
    const auto start = Clock::now();
    auto pid = spawn_in_own_group(spec);
    if (!pid) return std::move(pid).error();

    VerifyResult result;
    if (!exited_by(*pid, start + timeout)) {
        result.timed_out = true;
        ::kill(-*pid, SIGTERM);
        if (!exited_by(*pid, Clock::now() + kGrace)) ::kill(-*pid, SIGKILL);
    }
    ::kill(-*pid, SIGKILL);  // whatever of the command is still in its group
    int status = 0;
    while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.exit_code = 128 + WTERMSIG(status);
    result.tail = tail_of(log);
    return result;
}

}  // namespace cocode::check
