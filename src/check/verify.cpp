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
                                std::chrono::milliseconds timeout, const fs::path& log,
                                const std::vector<OverlayMount>& overlays) {
    if (auto created = write_file_atomic(log, "", 0644, Durability::content); !created)
        return std::move(created).error();
    ChildOptions child;
    child.argv = shell_argv(command);
    child.environment = environment;
    child.cwd = cwd;
    child.out = ChildStream::append_to(log);
    child.err = ChildStream::append_to(log);
    child.group = ChildOptions::Group::own_session;
    child.overlays = overlays;
    const auto start = Clock::now();
    auto pid = start_child(child);
    if (!pid) return std::move(pid).error();

    VerifyResult result;
    result.timed_out = !exited_by(*pid, start + timeout);
    result.exit_code = end_group(*pid, kGrace);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.tail = tail_of(log);
    return result;
}

}  // namespace cocode::check
