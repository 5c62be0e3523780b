#include "ui/web.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

#include "core/files.h"

namespace cocode::ui {

namespace fs = std::filesystem;

std::string new_token() {
    unsigned char bytes[32];
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("getrandom failed");
        got += static_cast<std::size_t>(n);
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

bool bearer_matches(std::string_view header, std::string_view token) {
    constexpr std::string_view kScheme = "Bearer ";
    if (token.empty() || header.size() != kScheme.size() + token.size() ||
        header.substr(0, kScheme.size()) != kScheme)
        return false;
    unsigned char differ = 0;
    for (std::size_t i = 0; i < token.size(); ++i)
        differ |= static_cast<unsigned char>(header[kScheme.size() + i] ^ token[i]);
    return differ == 0;
}

std::vector<std::pair<std::string, std::string>> security_headers() {
    return {{"Content-Security-Policy",
             "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
             "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
            {"X-Content-Type-Options", "nosniff"},
            {"Referrer-Policy", "no-referrer"},
            {"X-Frame-Options", "DENY"},
            {"Cross-Origin-Resource-Policy", "same-origin"}};
}

std::string sse_event(std::string_view event, std::string_view data, std::string_view id) {
    std::string out;
    if (!id.empty()) out.append("id: ").append(id).append("\n");
    out.append("event: ").append(event).append("\n");
    // Each line of the data its own field: a newline in it cannot end the event early.
    std::size_t start = 0;
    while (true) {
        const auto nl = data.find('\n', start);
        out.append("data: ").append(data.substr(start, nl - start)).append("\n");
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    out.append("\n");
    return out;
}

bool is_loopback(std::string_view host) {
    return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

Result<FolderWatch> FolderWatch::open(const fs::path& folder) {
    FolderWatch w;
    w.folder_ = folder;
    w.fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w.fd_ < 0) return Error::from_errno("inotify_init1", errno);
    w.wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w.wake_fd_ < 0) return Error::from_errno("eventfd", errno);
    std::error_code ec;
    fs::create_directories(folder, ec);
    w.top_ = ::inotify_add_watch(w.fd_, folder.c_str(),
                                 IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR);
    if (w.top_ < 0) return Error::from_errno("inotify_add_watch " + folder.string(), errno);
    for (const auto& entry : list_folder(folder, ec))
        if (entry.is_directory) w.add(entry.path.filename().string());
    return w;
}

FolderWatch::FolderWatch(FolderWatch&& other) noexcept { *this = std::move(other); }

FolderWatch& FolderWatch::operator=(FolderWatch&& other) noexcept {
    std::swap(folder_, other.folder_);
    std::swap(fd_, other.fd_);
    std::swap(wake_fd_, other.wake_fd_);
    std::swap(top_, other.top_);
    std::swap(names_, other.names_);
    return *this;
}

FolderWatch::~FolderWatch() {
    if (fd_ >= 0) ::close(fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

void FolderWatch::add(const std::string& name) {
    const int wd = ::inotify_add_watch(
        fd_, (folder_ / name).c_str(),
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY | IN_ONLYDIR);
    if (wd >= 0) names_[wd] = name;
}

std::set<std::string> FolderWatch::wait(std::chrono::milliseconds timeout) {
    std::set<std::string> changed;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(timeout.count())) <= 0) return changed;
    // Woken for good: the eventfd is left readable, so that every wait from now on returns
    // at once, whichever of them the wake-up found.
    if (fds[1].revents & POLLIN) return changed;
    alignas(inotify_event) char buf[16384];
    while (true) {
        const ssize_t got = ::read(fd_, buf, sizeof buf);
        if (got <= 0) break;
        for (char* p = buf; p < buf + got;) {
            const auto* e = reinterpret_cast<const inotify_event*>(p);
            p += sizeof(inotify_event) + e->len;
            if (e->wd == top_) {
                if (e->len == 0) continue;
                const std::string name = e->name;
                if (e->mask & (IN_CREATE | IN_MOVED_TO)) add(name);
                changed.insert(name);
                continue;
            }
            if (auto it = names_.find(e->wd); it != names_.end()) {
                if (e->mask & IN_IGNORED) {
                    changed.insert(it->second);
                    names_.erase(it);
                } else {
                    changed.insert(it->second);
                }
            }
        }
    }
    return changed;
}

void FolderWatch::wake() {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
}

}  // namespace cocode::ui
