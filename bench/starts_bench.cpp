// cocode-bench-starts K N -- PROGRAM [ARG]...: starts PROGRAM N times, K at once (a new one as
// each ends), its output thrown away, and prints the starts a second and the busy CPU each
// start cost the machine (from /proc/stat: every CPU's time not idle, over N). What
// `bench/run dispatch` measures a sandbox alone with: cocode-sandbox and bubblewrap given the
// same agent's command line. Fails (exit 1) when a start does not exit 0.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

// Every CPU's busy time so far, in clock ticks (user, nice, system, irq, softirq, steal).
long long busy_ticks() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return user + nice + system + irq + softirq + steal;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || std::string(argv[3]) != "--") {
        std::fprintf(stderr, "usage: cocode-bench-starts K N -- PROGRAM [ARG]...\n");
        return 2;
    }
    const int at_once = std::atoi(argv[1]), total = std::atoi(argv[2]);
    if (at_once < 1 || total < 1) return 2;
    const long long before = busy_ticks();
    const auto start = std::chrono::steady_clock::now();
    int started = 0, ended = 0, running = 0;
    while (ended < total) {
        while (running < at_once && started < total) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                const int null = ::open("/dev/null", O_RDWR);
                ::dup2(null, 1);
                ::dup2(null, 2);
                ::execv(argv[4], argv + 4);
                ::_exit(127);
            }
            if (pid < 0) return 1;
            ++running;
            ++started;
        }
        int status = 0;
        if (::wait(&status) < 0) return 1;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "cocode-bench-starts: a start ended with %d\n", status);
            return 1;
        }
        --running;
        ++ended;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double busy_ms = static_cast<double>(busy_ticks() - before) * 1000.0 /
                           static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::printf("%.1f %.3f\n", total / seconds, busy_ms / total);
    return 0;
}
