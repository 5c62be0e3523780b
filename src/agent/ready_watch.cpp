#include "agent/ready_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "hook/ready.h"

namespace cocode::agent {
namespace fs = std::filesystem;

namespace {

// git writes a ref or HEAD as `<name>.lock` and renames it over `<name>`; packed-refs the
// same way. A rename into the folder is the moment the commit is visible.
// Never through a link an agent put in its git folder.
constexpr uint32_t kMask =
    IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_DONT_FOLLOW | IN_ONLYDIR;
// The worktree's HEAD reflog is appended to in place on every commit made there.
constexpr uint32_t kAppendMask = kMask | IN_MODIFY;

}  // namespace

Result<ReadyWatch> ReadyWatch::create() {
    int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return Error::from_errno("inotify_init1", errno);
    return ReadyWatch(UniqueFd(fd));
}

Result<void> ReadyWatch::add(const fs::path& folder, Interest interest, uint32_t mask) {
    int wd;
    if (auto it = watch_of_.find(folder); it != watch_of_.end()) {
        wd = it->second;
    } else {
        wd = ::inotify_add_watch(fd_.get(), folder.c_str(), mask);
        if (wd < 0) return Error::from_errno("inotify_add_watch " + folder.string(), errno);
        watch_of_[folder] = wd;
    }
    auto& interests = by_watch_[wd];
    const bool known = std::any_of(interests.begin(), interests.end(), [&](const Interest& i) {
        return i.key == interest.key && i.name == interest.name && i.what == interest.what;
    });
    if (!known) interests.push_back(std::move(interest));
    return {};
}

Result<void> ReadyWatch::watch(std::size_t key, const git::GitDirs& dirs,
                               const fs::path& run_folder) {
    if (auto ok = add(dirs.git_dir, {key, "HEAD", What::refs}, kMask); !ok) return ok;
    if (auto ok = add(dirs.common_dir, {key, "packed-refs", What::refs}, kMask); !ok) return ok;
    if (auto ok = add(run_folder, {key, hook::kRunInfoFile, What::run_info}, kMask); !ok) return ok;
    std::error_code ec;
    if (fs::is_directory(dirs.git_dir / "logs", ec))
        if (auto ok = add(dirs.git_dir / "logs", {key, "HEAD", What::refs}, kAppendMask); !ok)
            return ok;
    // The branch HEAD names, by the folder of its loose ref (refs/heads/cocode/ for
    // refs/heads/cocode/1-claude), which exists once cocode made the branch.
    if (auto ref = git::head_symbolic_ref(dirs)) {
        const fs::path loose = dirs.common_dir / *ref;
        if (fs::is_directory(loose.parent_path(), ec))
            if (auto ok =
                    add(loose.parent_path(), {key, loose.filename().string(), What::refs}, kMask);
                !ok)
                return ok;
    }
    return {};
}

void ReadyWatch::forget(std::size_t key) {
    for (auto it = by_watch_.begin(); it != by_watch_.end();) {
        auto& interests = it->second;
        interests.erase(std::remove_if(interests.begin(), interests.end(),
                                       [&](const Interest& i) { return i.key == key; }),
                        interests.end());
        if (!interests.empty()) {
            ++it;
            continue;
        }
        ::inotify_rm_watch(fd_.get(), it->first);
        for (auto w = watch_of_.begin(); w != watch_of_.end();) {
            if (w->second == it->first)
                w = watch_of_.erase(w);
            else
                ++w;
        }
        it = by_watch_.erase(it);
    }
}

ReadyWatch::Changes ReadyWatch::changed() {
    Changes changes;
    alignas(inotify_event) char buffer[16384];
    while (true) {
        ssize_t got = ::read(fd_.get(), buffer, sizeof buffer);
        if (got <= 0) break;  // EAGAIN: nothing more for now
        for (char* p = buffer; p < buffer + got;) {
            auto* event = reinterpret_cast<inotify_event*>(p);
            p += sizeof(inotify_event) + event->len;
            if (event->mask & IN_Q_OVERFLOW) {
                // Events were dropped: look at everything.
                for (const auto& [wd, interests] : by_watch_)
                    for (const auto& i : interests)
                        (i.what == What::refs ? changes.refs : changes.run_info).insert(i.key);
                continue;
            }
            auto it = by_watch_.find(event->wd);
            if (it == by_watch_.end() || event->len == 0) continue;
            const std::string_view name(event->name);
            for (const auto& i : it->second)
                if (name == i.name)
                    (i.what == What::refs ? changes.refs : changes.run_info).insert(i.key);
        }
    }
    return changes;
}

}  // namespace cocode::agent
