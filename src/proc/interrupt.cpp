#include "proc/interrupt.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

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

std::function<bool()> stop_asked_here() {
    return [asked = asked_here] { return interrupt_requested() || (asked && (*asked)()); };
}

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
    // Taken through a signalfd, beside an eventfd that says the watch ends: no tick, and the
    // end of a command is not held back by one.
    const int signals = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    taker_ = std::thread([this, signals] {
        pollfd fds[2] = {{signals, POLLIN, 0}, {wake_, POLLIN, 0}};
        while (!ending_.load()) {
            if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
            signalfd_siginfo info;
            while (signals >= 0 &&
                   ::read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
                request_interrupt();
        }
        if (signals >= 0) ::close(signals);
    });
}

InterruptWatch::~InterruptWatch() {
    ending_ = true;
    const std::uint64_t one = 1;
    if (wake_ >= 0) (void)!::write(wake_, &one, sizeof one);
    taker_.join();
    if (wake_ >= 0) ::close(wake_);
    ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace cocode
