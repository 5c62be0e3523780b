// bench/run agentrepo: what an agent's git storage of its own costs (docs/security.md, "The
// agent's repository"), in milliseconds, medians.
//   start  5 agents' storage made at once, on a repository of 10 files and of 20,000: the
//          repository of the agent's own cocode makes (git init, the main objects borrowed, its
//          branch, a checkout: git::make_agent_repo), beside `git worktree add` (the linked
//          worktree cocode made before); the p50 of an agent's, and the difference.
//   take   the agent's branch taken back into the main repository (agent::take_back: a fetch
//          from its repository with transfer.fsckObjects, the serving side in the sandbox),
//          after a commit of 1 new file and of 1,000, in both repositories; beside the same
//          fetch run plainly on the host (no sandbox, no fsck), the way it is unsafe.
// Usage: cocode-bench-agentrepo SCRATCH RUNS
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/confined.h"
#include "bench_support.h"
#include "git/agent_repo.h"

namespace {

namespace fs = std::filesystem;
using cocode::bench::Clock;
using cocode::bench::median;
using cocode::bench::ms_since;
using cocode::bench::quote;
using cocode::bench::run_or_die;

void make_repo(const fs::path& dir, int files) {
    run_or_die("git init -q -b main " + quote(dir.string()));
    for (int i = 0; i < files; ++i) {
        const fs::path folder = dir / "src" / ("d" + std::to_string(i / 200));
        fs::create_directories(folder);
        std::ofstream(folder / ("f" + std::to_string(i) + ".txt")) << "file " << i << "\n";
    }
    run_or_die("cd " + quote(dir.string()) + " && git add -A && git commit -q -m base");
}

std::string head_of(const fs::path& repo) {
    const std::string command = "git -C " + quote(repo.string()) + " rev-parse HEAD";
    FILE* pipe = ::popen(command.c_str(), "r");
    char line[128] = {};
    if (!pipe || !std::fgets(line, sizeof line, pipe)) std::exit(1);
    ::pclose(pipe);
    return std::string(line, 40);
}

// Each of `agents` made at once by `make(i)`: the milliseconds each took.
template <typename Make>
std::vector<double> at_once(int agents, Make make) {
    std::vector<double> took(agents);
    std::vector<std::thread> threads;
    for (int i = 0; i < agents; ++i)
        threads.emplace_back([&, i] {
            const auto start = Clock::now();
            make(i);
            took[i] = ms_since(start);
        });
    for (auto& t : threads) t.join();
    return took;
}

struct Row {
    std::string what;
    double ours, peer;
};

void print(const std::vector<Row>& rows, const char* ours, const char* peer) {
    std::printf("%-46s %12s %12s %8s %10s\n", "", ours, peer, "ratio", "more, ms");
    for (const auto& r : rows)
        std::printf("%-46s %12.1f %12.1f %8.2f %+10.1f\n", r.what.c_str(), r.ours, r.peer,
                    r.ours / r.peer, r.ours - r.peer);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: cocode-bench-agentrepo SCRATCH RUNS\n");
        return 2;
    }
    const fs::path scratch = fs::absolute(argv[1]);
    const int runs = std::atoi(argv[2]);
    constexpr int kAgents = 5;
    fs::remove_all(scratch);
    std::vector<Row> start, take;
    for (int files : {10, 20000}) {
        const fs::path repo = scratch / ("repo-" + std::to_string(files));
        std::fprintf(stderr, "a repository of %d files ...\n", files);
        make_repo(repo, files);
        const std::string base = head_of(repo);
        const fs::path common = repo / ".git";
        const auto agent_repo = [&](int i) {
            const std::string pair = std::to_string(i) + "-bench";
            return cocode::git::AgentRepo{repo / ".cocode/sandboxes" / pair / "git",
                                          repo / ".cocode/worktrees" / pair, "cocode/" + pair};
        };
        const auto clear = [&] {
            fs::remove_all(repo / ".cocode");
            fs::remove_all(repo / "wt");
            run_or_die("cd " + quote(repo.string()) +
                       " && git worktree prune && git for-each-ref --format='%(refname)' "
                       "refs/heads/wt refs/heads/cocode | xargs -r -n1 git update-ref -d");
        };
        std::vector<double> ours, peer;
        for (int r = 0; r < runs; ++r) {
            clear();
            run_or_die("sync");
            for (double ms : at_once(kAgents, [&](int i) {
                     if (!cocode::git::make_agent_repo(common, agent_repo(i), base, true))
                         std::exit(1);
                 }))
                ours.push_back(ms);
            clear();
            run_or_die("sync");
            for (double ms : at_once(kAgents, [&](int i) {
                     run_or_die("git -C " + quote(repo.string()) + " worktree add -q -b wt/" +
                                std::to_string(i) + " " +
                                quote((repo / "wt" / std::to_string(i)).string()) + " " + base);
                 }))
                peer.push_back(ms);
        }
        start.push_back({"start, " + std::to_string(kAgents) + " agents, " + std::to_string(files) +
                             " files: p50 of one",
                         median(ours), median(peer)});

        // Take back: the agent commits `added` new files in its repository; cocode fetches.
        for (int added : {1, 1000}) {
            std::vector<double> sandboxed, plain;
            for (int r = 0; r < runs; ++r) {
                clear();
                const auto a = agent_repo(0);
                if (!cocode::git::make_agent_repo(common, a, base, true)) return 1;
                const auto commit = [&](const std::string& tag) {
                    for (int i = 0; i < added; ++i)
                        std::ofstream(a.worktree /
                                      ("new-" + tag + "-" + std::to_string(i) + ".txt"))
                            << tag << " " << r << " " << i << "\n";
                    run_or_die("cd " + quote(a.worktree.string()) +
                               " && git add -A && git commit -q -m work");
                };
                commit("a");
                auto start_at = Clock::now();
                if (!cocode::agent::take_back(cocode::SandboxMaker::automatic, repo, a)) return 1;
                sandboxed.push_back(ms_since(start_at));
                commit("b");
                start_at = Clock::now();
                run_or_die("git -C " + quote(repo.string()) + " fetch -q " +
                           quote(a.git_dir.string()) + " +refs/heads/" + a.branch + ":refs/heads/" +
                           a.branch);
                plain.push_back(ms_since(start_at));
            }
            take.push_back({"take back " + std::to_string(added) + " new file" +
                                (added == 1 ? "" : "s") + ", " + std::to_string(files) + " files",
                            median(sandboxed), median(plain)});
        }
        clear();
    }
    std::printf("An agent's own repository (%d runs, medians)\n\n", runs);
    print(start, "own repo", "worktree");
    std::printf("\n");
    print(take, "sandboxed", "plain fetch");
    fs::remove_all(scratch);
    return 0;
}
