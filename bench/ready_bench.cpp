// bench/run ready: from a commit to its READY being recorded, in milliseconds.
//
// The clock starts when git renames the branch ref into place (the commit exists from then
// on) and stops when the READY line lands in the run's events.jsonl, both seen by this
// program through inotify. Three ways of noticing, each over the same kind of commit (an
// empty commit whose message carries the marker):
//   hook     cocode's post-commit hook in a run's worktree (git runs it before commit returns);
//   watch    a real `cocode-dispatch run` whose agent commits with core.hooksPath=/dev/null,
//            so only the supervisor's inotify watch of the branch can see it;
//   poller   the peer: what a dispatcher that polls does — `git log -1` every second — the way
//            the tools cocode replaces learn that an agent is done.
// Usage: cocode-bench-ready BIN_DIR COMMITS
#include <fcntl.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kMarker[] = "cocode ready for check";

void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

std::string read_all(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int count_ready(const fs::path& events) {
    int n = 0;
    std::istringstream lines(read_all(events));
    for (std::string line; std::getline(lines, line);)
        n += line.find("\"type\":\"READY\"") != std::string::npos;
    return n;
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& cwd) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0)
        throw std::runtime_error("cannot start " + argv[0]);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

// Waits on inotify for the branch ref to be renamed into place, then for events.jsonl to
// hold `ready_before + 1` READY lines; returns the milliseconds between the two.
class Stopwatch {
  public:
    Stopwatch(const fs::path& ref, const fs::path& events) : ref_(ref), events_(events) {
        fd_ = inotify_init1(IN_CLOEXEC);
        ref_wd_ = inotify_add_watch(fd_, ref.parent_path().c_str(), IN_MOVED_TO);
        events_wd_ = inotify_add_watch(fd_, events.parent_path().c_str(),
                                       IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE);
        if (fd_ < 0 || ref_wd_ < 0 || events_wd_ < 0) throw std::runtime_error("inotify");
    }
    ~Stopwatch() { ::close(fd_); }

    // Call before the commit is made.
    void arm() {
        ready_before_ = count_ready(events_);
        ref_seen_ = false;
    }

    double wait() {
        Clock::time_point ref_time{};
        alignas(inotify_event) char buf[8192];
        while (true) {
            ssize_t got = ::read(fd_, buf, sizeof buf);
            if (got <= 0) throw std::runtime_error("inotify read");
            const auto now = Clock::now();
            bool events_changed = false;
            for (char* p = buf; p < buf + got;) {
                auto* e = reinterpret_cast<inotify_event*>(p);
                p += sizeof(inotify_event) + e->len;
                if (e->len == 0) continue;
                const std::string name = e->name;
                if (e->wd == ref_wd_ && name == ref_.filename().string() && !ref_seen_) {
                    ref_seen_ = true;
                    ref_time = now;
                }
                if (e->wd == events_wd_ && name == events_.filename().string())
                    events_changed = true;
            }
            if (events_changed && count_ready(events_) > ready_before_) {
                // The hook records before git is done; should the ref event come in the same
                // read, it still came first.
                if (!ref_seen_) ref_time = now;
                return std::chrono::duration<double, std::milli>(now - ref_time).count();
            }
        }
    }

  private:
    fs::path ref_, events_;
    int fd_ = -1, ref_wd_ = -1, events_wd_ = -1;
    int ready_before_ = 0;
    bool ref_seen_ = false;
};

struct Row {
    std::string name;
    std::vector<double> ms;
};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

void make_repo(const fs::path& dir) {
    run("git init -q -b main " + dir.string() + " && git -C " + dir.string() +
        " config gc.auto 0 && git -C " + dir.string() + " commit -q --allow-empty -m base");
}

std::string commit_command(const fs::path& worktree, int i, bool hooks_off) {
    return std::string("git ") + (hooks_off ? "-c core.hooksPath=/dev/null " : "") + "-C " +
           worktree.string() + " commit -q --allow-empty -m 'step " + std::to_string(i) + ": " +
           kMarker + "'";
}

// The post-commit hook, in a run's worktree made the way cocode-dispatch makes it.
Row bench_hook(const fs::path& bin, const fs::path& work, int commits) {
    const fs::path repo = work / "hook";
    make_repo(repo);
    run(bin.string() + "/cocode-hook install --repo " + repo.string() + " >/dev/null");
    const fs::path worktree = repo / ".cocode/worktrees/1-bench";
    run("git -C " + repo.string() + " worktree add -q -b cocode/1-bench " + worktree.string());
    const fs::path folder = repo / ".cocode/runs/20260101-000000000-1-1";
    fs::create_directories(folder);
    std::ofstream(folder / "run-info.yaml")
        << "run_id: \"20260101-000000000-1-1\"\nstatus: running\nready_marker: \"" << kMarker
        << "\"\n";
    std::ofstream(folder / "events.jsonl");
    const std::string git_dir = repo.string() + "/.git/worktrees/1-bench";
    std::ofstream(git_dir + "/cocode-run") << folder.string() << "\n";

    Stopwatch watch(repo / ".git/refs/heads/cocode/1-bench", folder / "events.jsonl");
    Row row{"cocode hook", {}};
    for (int i = 0; i < commits; ++i) {
        watch.arm();
        pid_t git = spawn({"sh", "-c", commit_command(worktree, i, false)}, worktree);
        row.ms.push_back(watch.wait());
        int status = 0;
        waitpid(git, &status, 0);
    }
    return row;
}

// A real dispatcher run; its agent commits with hooks off each time we write a line to its FIFO.
Row bench_watch(const fs::path& bin, const fs::path& work, const fs::path& agent, int commits) {
    const fs::path repo = work / "watch";
    make_repo(repo);
    fs::create_directories(repo / ".cocode/issues");
    std::ofstream(repo / ".cocode/issues/1.json")
        << R"({"number": 1, "title": "bench", "body": "b", "state": "open"})";
    const fs::path fifo = work / "watch.fifo";
    mkfifo(fifo.c_str(), 0600);
    std::ofstream(repo / ".cocode/config.json")
        << R"({"ready_quiet": "1h", "timeout": "1h", "agents": {"bench": {"command": ")"
        << agent.string() << R"(", "env": {"BENCH_FIFO": ")" << fifo.string() << R"("}}}})";
    run("git -C " + repo.string() + " add -A && git -C " + repo.string() + " commit -q -m cfg");
    pid_t dispatcher = spawn({(bin / "cocode-dispatch").string(), "run", "1", "--no-check"}, repo);

    // Its run folder; the FIFO opens once the agent reads it.
    const int out = ::open(fifo.c_str(), O_WRONLY);
    fs::path folder;
    for (const auto& entry : fs::directory_iterator(repo / ".cocode/runs"))
        if (entry.is_directory()) folder = entry.path();
    Stopwatch watch(repo / ".git/refs/heads/cocode/1-bench", folder / "events.jsonl");
    Row row{"supervisor's watch, hooks off", {}};
    for (int i = 0; i < commits; ++i) {
        watch.arm();
        if (::write(out, "c\n", 2) != 2) throw std::runtime_error("fifo");
        row.ms.push_back(watch.wait());
    }
    if (::write(out, "q\n", 2) != 2) throw std::runtime_error("fifo");
    ::close(out);
    int status = 0;
    waitpid(dispatcher, &status, 0);
    return row;
}

// The peer: a poller that runs `git log -1` on the branch every second.
Row bench_poller(const fs::path& work, int commits) {
    const fs::path repo = work / "poll";
    make_repo(repo);
    Row row{"peer: polling git log every 1 s", {}};
    for (int i = 0; i < commits; ++i) {
        // The commit lands at a random moment of the poller's cycle.
        std::this_thread::sleep_for(std::chrono::milliseconds(std::rand() % 1000));
        run(commit_command(repo, i, true));
        const auto committed = Clock::now();
        // The poller's phase: it last looked some time in the past second.
        const auto next_poll = committed + std::chrono::milliseconds(std::rand() % 1000);
        std::this_thread::sleep_until(next_poll);
        std::string message;
        FILE* p = ::popen(("git -C " + repo.string() + " log -1 --format=%B").c_str(), "r");
        char buf[256];
        while (std::fgets(buf, sizeof buf, p)) message += buf;
        ::pclose(p);
        if (message.find(kMarker) == std::string::npos) throw std::runtime_error("poller");
        row.ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - committed).count());
    }
    return row;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: cocode-bench-ready BIN_DIR AGENT COMMITS\n");
        return 2;
    }
    const fs::path bin = argv[1];
    const fs::path agent = fs::absolute(argv[2]);
    const int commits = std::max(1, std::atoi(argv[3]));
    for (const char* name :
         {"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"})
        ::setenv(
            name,
            std::string(name).find("EMAIL") != std::string::npos ? "bench@cocode.invalid" : "bench",
            1);
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    char tmpl[] = "/tmp/cocode-bench-ready-XXXXXX";
    const fs::path work = ::mkdtemp(tmpl);
    std::vector<Row> rows;
    try {
        rows.push_back(bench_hook(bin, work, commits));
        rows.push_back(bench_watch(bin, work, agent, commits));
        rows.push_back(bench_poller(work, std::min(commits, 30)));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cocode-bench-ready: %s\n", e.what());
        fs::remove_all(work);
        return 1;
    }
    fs::remove_all(work);
    const double peer = percentile(rows.back().ms, 0.5);
    std::printf("| commit -> READY recorded | commits | median ms | p90 ms | x peer |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    for (const auto& row : rows)
        std::printf("| %s | %zu | %.2f | %.2f | %.3f |\n", row.name.c_str(), row.ms.size(),
                    percentile(row.ms, 0.5), percentile(row.ms, 0.9),
                    percentile(row.ms, 0.5) / peer);
    std::printf("\ntargets: hook <= 10 ms, supervisor's watch <= 50 ms (medians)\n");
    return 0;
}
