// bench/run github: list 1,000 issues (10 pages) from GitHub on loopback TLS, with
// cocode-dispatch, with gh (`gh api --paginate`, GitHub's own CLI, Go) and with the Python
// peer; then the same listing again, where cocode's ETag cache turns every page into a 304
// that costs no rate limit; then `watch`'s poll when nothing changed. Prints a Markdown table.
// The server answers under /api/v3, as GitHub Enterprise does: gh reaches any host but
// github.com there.
//   cocode-bench-github <cocode-dispatch> <python> <github_peer.py> <gh> [runs]
// <python> is the interpreter itself, not a launcher in front of it (a pyenv shim costs
// ~100 ms a start, which would be charged to the peer).
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_github.h"

extern char** environ;

namespace {

using cocode::test::FakeGitHub;

struct Sample {
    double ms = 0;
    double cpu_ms = 0;  // the client's own user + system time
    double peak_mb = 0;
};

// Children are started by a launcher forked before the loopback server fills this process:
// on Linux a child's peak RSS starts from the peak of the process that spawned it, so
// spawning from here would report this program's memory, not the client's.
int to_launcher = -1, from_launcher = -1;

void write_string(int fd, const std::string& s) {
    std::uint32_t size = static_cast<std::uint32_t>(s.size());
    if (::write(fd, &size, sizeof size) != sizeof size ||
        ::write(fd, s.data(), s.size()) != static_cast<ssize_t>(s.size()))
        std::exit(1);
}

std::string read_string(int fd) {
    std::uint32_t size = 0;
    if (::read(fd, &size, sizeof size) != sizeof size) std::exit(0);
    std::string s(size, '\0');
    for (std::size_t got = 0; got < size;) {
        ssize_t n = ::read(fd, s.data() + got, size - got);
        if (n <= 0) std::exit(1);
        got += static_cast<std::size_t>(n);
    }
    return s;
}

[[noreturn]] void launcher_loop(int in, int out) {
    for (;;) {
        std::size_t count = std::stoul(read_string(in));
        std::string cwd = read_string(in);
        std::vector<std::string> argv;
        for (std::size_t i = 0; i < count; ++i) argv.push_back(read_string(in));
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
        auto start = std::chrono::steady_clock::now();
        pid_t pid = 0;
        int status = 127;
        rusage usage{};
        if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0)
            wait4(pid, &status, 0, &usage);
        auto elapsed = std::chrono::steady_clock::now() - start;
        posix_spawn_file_actions_destroy(&actions);
        auto cpu_ms = [](const timeval& t) {
            return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
        };
        write_string(
            out, std::to_string(status) + " " + std::to_string(usage.ru_maxrss) + " " +
                     std::to_string(std::chrono::duration<double, std::milli>(elapsed).count()) +
                     " " + std::to_string(cpu_ms(usage.ru_utime) + cpu_ms(usage.ru_stime)));
    }
}

void start_launcher() {
    int down[2], up[2];
    if (::pipe(down) != 0 || ::pipe(up) != 0) std::exit(1);
    if (::fork() == 0) {
        ::close(down[1]);
        ::close(up[0]);
        launcher_loop(down[0], up[1]);
    }
    ::close(down[0]);
    ::close(up[1]);
    to_launcher = down[1];
    from_launcher = up[0];
}

Sample run(const std::vector<std::string>& argv, const char* cwd) {
    write_string(to_launcher, std::to_string(argv.size()));
    write_string(to_launcher, cwd);
    for (const auto& a : argv) write_string(to_launcher, a);
    int status = 0;
    long maxrss_kb = 0;
    double ms = 0, cpu_ms = 0;
    std::sscanf(read_string(from_launcher).c_str(), "%d %ld %lf %lf", &status, &maxrss_kb, &ms,
                &cpu_ms);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s failed (status %d)\n", argv[0].c_str(), status);
        std::exit(1);
    }
    return {ms, cpu_ms, static_cast<double>(maxrss_kb) / 1024.0};
}

struct Row {
    std::string name;
    double median_ms = 0;
    double median_cpu_ms = 0;
    double peak_mb = 0;
    std::size_t requests = 0;
    std::size_t not_modified = 0;
    long rate_cost = 0;
};

Row measure(const std::string& name, FakeGitHub& server, const std::vector<std::string>& argv,
            const char* cwd, int runs) {
    std::vector<double> times, cpu;
    double peak = 0;
    std::size_t before = server.requests().size();
    long remaining = server.rate_remaining();
    for (int i = 0; i < runs; ++i) {
        Sample s = run(argv, cwd);
        times.push_back(s.ms);
        cpu.push_back(s.cpu_ms);
        peak = std::max(peak, s.peak_mb);
    }
    auto requests = server.requests();
    std::size_t made = requests.size() - before;
    std::size_t not_modified = static_cast<std::size_t>(
        std::count_if(requests.begin() + static_cast<long>(before), requests.end(),
                      [](const auto& r) { return r.status == 304; }));
    std::sort(times.begin(), times.end());
    std::sort(cpu.begin(), cpu.end());
    return {name,
            times[times.size() / 2],
            cpu[cpu.size() / 2],
            peak,
            made / static_cast<std::size_t>(runs),
            not_modified / static_cast<std::size_t>(runs),
            (remaining - server.rate_remaining()) / runs};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(
            stderr,
            "usage: cocode-bench-github <cocode-dispatch> <python> <peer.py> <gh> [runs]\n");
        return 2;
    }
    const std::string dispatch = argv[1], python_exe = argv[2], peer = argv[3], gh = argv[4];
    const int runs = argc > 5 ? std::atoi(argv[5]) : 15;
    char work[] = "/tmp/cocode-bench-github-XXXXXX";
    if (!mkdtemp(work)) return 1;
    // Before the launcher copies environ: the token, and gh's own settings (a folder of its
    // own, no update check, no prompt).
    ::setenv("GITHUB_TOKEN", cocode::test::kTestToken, 1);
    ::setenv("GH_ENTERPRISE_TOKEN", cocode::test::kTestToken, 1);
    ::setenv("GH_CONFIG_DIR", (std::string(work) + "/gh").c_str(), 1);
    ::setenv("GH_NO_UPDATE_NOTIFIER", "1", 1);
    ::setenv("GH_PROMPT_DISABLED", "1", 1);
    ::setenv("SSL_CERT_FILE", cocode::test::loopback_tls().files.certificate.c_str(), 1);
    ::unsetenv("COCODE_TEST_SCRATCH");
    start_launcher();
    auto options = cocode::test::loopback_options();
    options.prefix = "/api/v3";
    FakeGitHub server(options);
    for (long n = 1; n <= 1000; ++n)
        server.add_issue(n, "issue " + std::to_string(n), "Body of issue " + std::to_string(n),
                         {"cocode"}, n % 3 ? "open" : "closed");
    const std::string cert = cocode::test::loopback_tls().files.certificate.string();
    const std::string repo = std::string(work) + "/repo";
    std::system(("git init -q " + repo).c_str());
    // A watcher's repository: one agent that is never started (no issue carries its label).
    std::system(("mkdir -p " + repo + "/.cocode && printf '%s' '{\"agents\": {\"idle\": " +
                 "{\"type\": \"command\", \"command\": \"true\"}}}' > " + repo +
                 "/.cocode/config.json")
                    .c_str());
    const std::string host = server.base_url().substr(
        std::string("https://").size(),
        server.base_url().find("/api/v3") - std::string("https://").size());

    std::vector<std::string> cocode_cold = {
        dispatch, "issues",     "list",      "--repo",          "octo-org/demo", "--state", "all",
        "--json", "--no-cache", "--api-url", server.base_url(), "--ca-bundle",   cert};
    std::vector<std::string> cocode_warm = cocode_cold;
    cocode_warm.erase(std::find(cocode_warm.begin(), cocode_warm.end(), "--no-cache"));
    std::vector<std::string> python = {python_exe,      peer,          server.base_url(), cert,
                                       "octo-org/demo", "GITHUB_TOKEN"};
    // gh reads the host from GH_HOST; `env` (a few hundred microseconds) sets it.
    std::vector<std::string> gh_list = {
        "env", "GH_HOST=" + host, gh,
        "api", "--paginate",      "repos/octo-org/demo/issues?state=all&per_page=100"};
    std::vector<std::string> watch_poll = {
        dispatch,        "watch",     "--once",          "--label",     "nothing", "--repo",
        "octo-org/demo", "--api-url", server.base_url(), "--ca-bundle", cert};

    // PROFILE=<file>: the cold listing once more under `perf record`, to see where its CPU goes.
    if (const char* profile = std::getenv("PROFILE"); profile && *profile) {
        std::vector<std::string> recorded = {"perf", "record", "-q",    "-F", "20000",
                                             "-g",   "-o",     profile, "--"};
        recorded.insert(recorded.end(), cocode_cold.begin(), cocode_cold.end());
        run(recorded, work);
    }
    std::vector<Row> rows;
    rows.push_back(measure("cocode-dispatch issues list", server, cocode_cold, work, runs));
    rows.push_back(measure("gh api --paginate", server, gh_list, work, runs));
    rows.push_back(measure("python urllib peer", server, python, work, runs));
    run(cocode_warm, repo.c_str());  // fills .cocode/cache/ with the ETags
    rows.push_back(measure("cocode-dispatch issues list, repeated (ETags)", server, cocode_warm,
                           repo.c_str(), runs));
    rows.push_back(measure("gh api --paginate, repeated", server, gh_list, work, runs));
    rows.push_back(measure("python urllib peer, repeated", server, python, work, runs));
    run(watch_poll, repo.c_str());  // the watcher's first poll: the listing, then the changes
    run(watch_poll, repo.c_str());
    const std::size_t before_polls = server.requests().size();
    rows.push_back(measure("cocode-dispatch watch --once, a poll when nothing changed", server,
                           watch_poll, repo.c_str(), runs));
    std::size_t issue_lists = 0;
    const auto polled = server.requests();
    for (std::size_t i = before_polls; i < polled.size(); ++i)
        issue_lists +=
            polled[i].method == "GET" && polled[i].path.find("/issues?") != std::string::npos;
    std::system(("rm -rf " + std::string(work)).c_str());

    std::printf(
        "List 1,000 issues (10 pages of 100) from GitHub on loopback TLS; %d runs each, "
        "median.\n\n",
        runs);
    std::printf(
        "| client | median ms | client CPU ms | peak RSS MB | requests | of which 304 | "
        "rate-limit cost |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& r : rows)
        std::printf("| %s | %.1f | %.1f | %.1f | %zu | %zu | %ld |\n", r.name.c_str(), r.median_ms,
                    r.median_cpu_ms, r.peak_mb, r.requests, r.not_modified, r.rate_cost);
    // cocode's time as a share of each peer's: the target is 0.5x gh's or less, cold.
    for (std::size_t peer_row : {1, 2})
        std::printf("\ncocode / %s, cold listing: %.2fx time, %.2fx CPU, %.2fx memory",
                    rows[peer_row].name.c_str(), rows[0].median_ms / rows[peer_row].median_ms,
                    rows[0].median_cpu_ms / rows[peer_row].median_cpu_ms,
                    rows[0].peak_mb / rows[peer_row].peak_mb);
    std::printf("\ncocode / gh, repeated listing: %.2fx time; rate limit %ld vs %ld\n",
                rows[3].median_ms / rows[4].median_ms, rows[3].rate_cost, rows[4].rate_cost);
    std::printf(
        "watch's poll when nothing changed: %zu request(s) for the issues per poll (%zu in all, "
        "%zu answered 304), whatever the number of issues\n",
        issue_lists / static_cast<std::size_t>(runs), rows[6].requests, rows[6].not_modified);
    return 0;
}
