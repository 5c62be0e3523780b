#include "check/verify.h"

#include "core/files.h"
#include "core/redact.h"

namespace cocode::check {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

Result<VerifyResult> run_verify(const CommandRunner& runner, const std::string& command,
                                const fs::path& cwd, const std::vector<std::string>& environment,
                                std::chrono::milliseconds timeout, const fs::path& log,
                                const std::vector<OverlayMount>& overlays, const fs::path& record) {
    if (auto created = write_file_atomic(log, "", 0644, Durability::content); !created)
        return std::move(created).error();
    const auto start = Clock::now();
    CommandRequest request;
    request.command = command;
    request.cwd = cwd;
    request.environment = environment;
    request.deadline = start + timeout;
    request.log = log;
    request.record = record;
    request.overlays = overlays;
    auto ran = runner(request);
    if (!ran) return std::move(ran).error();
    VerifyResult result;
    result.timed_out = ran->timed_out;
    result.exit_code = ran->exit_code;
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.tail = tail_of(log);
    return result;
}

}  // namespace cocode::check
