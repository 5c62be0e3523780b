// What the dashboard's server does the same for every route, whoever serves it (`ui`, or
// `serve` under /ui): the token, the headers every answer carries, server-sent events, and
// a folder watched for changes without spending CPU while nothing changes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::ui {

// 32 random bytes as 64 hex digits.
std::string new_token();

// Whether an Authorization header carries `token` ("Bearer <token>"), compared in constant
// time.
bool bearer_matches(std::string_view header, std::string_view token);

// The headers of every answer: the page's Content-Security-Policy (no inline script, nothing
// from another origin), no sniffing, no referrer, no framing, no caching of data.
std::vector<std::pair<std::string, std::string>> security_headers();

// One server-sent event: `id` (resumption point), `event` name, and data lines.
std::string sse_event(std::string_view event, std::string_view data, std::string_view id = {});

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback(std::string_view host);

// A folder and its subfolders one level down watched with inotify: which subfolders had a
// file created, written, renamed or removed since the last look. One thread blocks on it;
// nothing runs while nothing changes.
class FolderWatch {
  public:
    static Result<FolderWatch> open(const std::filesystem::path& folder);
    FolderWatch(FolderWatch&&) noexcept;
    FolderWatch& operator=(FolderWatch&&) noexcept;
    FolderWatch(const FolderWatch&) = delete;
    FolderWatch& operator=(const FolderWatch&) = delete;
    ~FolderWatch();

    // Waits up to `timeout` for changes; the names of the subfolders that changed (a new
    // subfolder is watched from then on). Empty on a timeout, and at once after wake().
    std::set<std::string> wait(std::chrono::milliseconds timeout);
    // Makes a wait() under way return, and every later one (another thread, at shutdown).
    void wake();

  private:
    FolderWatch() = default;
    void add(const std::string& name);
    std::filesystem::path folder_;
    int fd_ = -1;
    int wake_fd_ = -1;
    int top_ = -1;
    std::map<int, std::string> names_;
};

}  // namespace cocode::ui
