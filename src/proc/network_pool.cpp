#include "proc/network_pool.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "proc/spawn.h"

namespace cocode {
namespace {

// How many a making makes: enough that a batch of a few dozen runs asks a few times.
constexpr int kBatch = 8;

// The namespaces `program --make-networks count` sends on its descriptor 3.
std::vector<UniqueFd> make_networks(const std::filesystem::path& program, int count) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return {};
    UniqueFd ours(pair[0]), theirs(pair[1]);
    ChildOptions child;
    child.argv = {program.string(), "--make-networks", std::to_string(count)};
    child.fd3 = theirs.get();
    child.err = ChildStream::null();
    auto pid = start_child(child);
    theirs = UniqueFd();
    if (!pid) return {};
    std::vector<UniqueFd> out;
    char byte = 0;
    iovec data{&byte, 1};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(count)));
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    ssize_t got = -1;
    do {
        got = ::recvmsg(ours.get(), &message, MSG_CMSG_CLOEXEC);
    } while (got < 0 && errno == EINTR);
    if (got == 1)
        for (cmsghdr* h = CMSG_FIRSTHDR(&message); h; h = CMSG_NXTHDR(&message, h)) {
            if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
            const std::size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < n; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
                out.emplace_back(fd);
            }
        }
    int status = 0;
    (void)wait_child(*pid, &status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
    return out;
}

}  // namespace

void NetworkPool::reserve(int count) {
    std::lock_guard lock(mutex_);
    while (!broken_ && static_cast<int>(free_.size()) < count) {
        auto made = make_networks(program_, std::min(64, count - static_cast<int>(free_.size())));
        if (made.empty()) {
            broken_ = true;
            break;
        }
        made_ += static_cast<int>(made.size());
        for (auto& one : made) free_.push_back(std::move(one));
    }
}

UniqueFd NetworkPool::take() {
    std::lock_guard lock(mutex_);
    if (free_.empty() && !broken_) {
        free_ = make_networks(program_, kBatch);
        if (free_.empty())
            broken_ = true;
        else
            made_ += static_cast<int>(free_.size());
    }
    if (free_.empty()) return {};
    UniqueFd one = std::move(free_.back());
    free_.pop_back();
    return one;
}

void NetworkPool::give_back(UniqueFd network) {
    if (!network.valid()) return;
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(network));
}

int NetworkPool::made() const {
    std::lock_guard lock(mutex_);
    return made_;
}

}  // namespace cocode
