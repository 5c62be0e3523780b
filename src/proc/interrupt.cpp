#include "proc/interrupt.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace cocode {

namespace {

std::atomic<bool> interrupted{false};
thread_local StopScope* innermost = nullptr;
thread_local const std::function<bool()>* asked_here = nullptr;

}  // namespace

int interrupt_fd() {
    static const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd;
}

void request_interrupt() {
    if (interrupted.exchange(true)) return;
    // Never read: it stays readable for every poll that waits on it.
    const std::uint64_t one = 1;
    if (const int fd = interrupt_fd(); fd >= 0) (void)!::write(fd, &one, sizeof one);
}

bool interrupt_requested() { return interrupted.load(); }

bool stop_asked() { return interrupt_requested() || (asked_here && (*asked_here)()); }

StopScope::StopScope(std::function<bool()> asked) : asked_(std::move(asked)), outer_(innermost) {
    innermost = this;
    asked_here = &asked_;
}

StopScope::~StopScope() {
    innermost = outer_;
    asked_here = outer_ ? &outer_->asked_ : nullptr;
}

InterruptWatch::InterruptWatch() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
        // An inherited SIG_IGN (a background job of a non-interactive shell) would discard
        // them before they could be taken.
        ::signal(s, SIG_DFL);
        sigaddset(&set, s);
    }
    ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
    taker_ = std::thread([this, set] {
        const timespec tick{0, 100'000'000};
        while (!ending_.load()) {
            const int taken = ::sigtimedwait(&set, nullptr, &tick);
            if (taken > 0) request_interrupt();
        }
    });
}

InterruptWatch::~InterruptWatch() {
    ending_ = true;
    taker_.join();
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace cocode
