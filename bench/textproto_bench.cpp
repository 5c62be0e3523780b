// bench/run textproto: the built-in agent's own work per turn, against a plain Python peer of
// the same protocol (bench/textproto_peer.py), both timed inside their process:
//   - parse + execute a 1 MB inbox of 500 commands (CREATE_FILE, EDIT_FILE, READ_FILE,
//     DELETE_FILE, MESSAGE; no RUN_COMMAND, whose cost is the command's own) in a fresh folder;
//   - list a 20,000-file worktree and render the outbox.
// Targets (the issue): both ≤ 50 ms. Prints a Markdown table of medians and the ratio.
//   cocode-bench-textproto <python> <textproto_peer.py> <scratch folder> [runs]
// The scratch folder is on the repository's file system, where worktrees live: a folder made
// directly in /tmp was ten times slower to fill on the machine this was measured on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_support.h"
#include "protocol/executor.h"
#include "protocol/textproto.h"

namespace fs = std::filesystem;
using namespace cocode::protocol;
using namespace cocode::bench;

namespace {

// What the peer printed: "<mode> <ms>".
double peer_ms(const std::string& command) {
    FILE* p = ::popen(command.c_str(), "r");
    char mode[32] = {};
    double ms = -1;
    if (!p || std::fscanf(p, "%31s %lf", mode, &ms) != 2 || ::pclose(p) != 0) {
        std::fprintf(stderr, "bench: the peer failed: %s\n", command.c_str());
        std::exit(1);
    }
    return ms;
}

std::string make_inbox() {
    std::string inbox = "I will lay out the project, then adjust it.\n";
    std::string body;
    for (int line = 0; line < 66; ++line)
        body += "    line " + std::to_string(line) + " of a generated source file, text text\n";
    for (int i = 0; i < 300; ++i)
        inbox += "[CREATE_FILE path=\"src/mod" + std::to_string(i % 20) + "/file" +
                 std::to_string(i) + ".txt\"]\n" + body + "[/CREATE_FILE]\n";
    for (int i = 0; i < 100; ++i)
        inbox += "[EDIT_FILE path=\"src/mod" + std::to_string(i % 20) + "/file" +
                 std::to_string(i) +
                 ".txt\" start_line=\"2\" end_line=\"3\"]\nnew a\nnew b\n"
                 "new c\n[/EDIT_FILE]\n";
    for (int i = 0; i < 50; ++i)
        inbox += "[READ_FILE path=\"src/mod" + std::to_string(i % 20) + "/file" +
                 std::to_string(i) + ".txt\"]\n";
    for (int i = 270; i < 300; ++i)
        inbox += "[DELETE_FILE path=\"src/mod" + std::to_string(i % 20) + "/file" +
                 std::to_string(i) + ".txt\"]\n";
    for (int i = 0; i < 20; ++i)
        inbox += "Some thinking.\n[MESSAGE]\nstep " + std::to_string(i) + "\n[/MESSAGE]\n";
    return inbox;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(
            stderr,
            "usage: cocode-bench-textproto <python> <textproto_peer.py> <scratch> [runs]\n");
        return 2;
    }
    const std::string python = argv[1], peer = argv[2];
    const int runs = argc > 4 ? std::atoi(argv[4]) : 15;
    fs::create_directories(argv[3]);
    const std::string base_pattern = std::string(argv[3]) + "/textproto-XXXXXX";
    std::vector<char> buf(base_pattern.begin(), base_pattern.end());
    buf.push_back('\0');
    const char* made = ::mkdtemp(buf.data());
    if (!made) return 1;
    const fs::path base = fs::canonical(made);

    const std::string inbox = make_inbox();
    const fs::path inbox_file = base / "inbox.txt";
    std::ofstream(inbox_file) << inbox;
    std::size_t commands = parse_inbox(inbox).size();

    // The 20,000-file worktree, committed once.
    const fs::path big = base / "big";
    for (int d = 0; d < 200; ++d) {
        fs::create_directories(big / ("pkg" + std::to_string(d / 20)) /
                               ("dir" + std::to_string(d)));
        for (int f = 0; f < 100; ++f)
            std::ofstream(big / ("pkg" + std::to_string(d / 20)) / ("dir" + std::to_string(d)) /
                          ("f" + std::to_string(f) + ".c"))
                << "int f" << f << "(void) { return " << f << "; }\n";
    }
    run_or_die("cd " + quote(big.string()) +
               " && git init -q && git add -A && git -c user.name=b -c user.email=b@b.invalid "
               "commit -qm files");

    std::vector<double> exec_ms, exec_peer, outbox_ms, outbox_peer;
    std::size_t outbox_bytes = 0;
    for (int r = 0; r < runs; ++r) {
        const fs::path work = base / ("work" + std::to_string(r));
        fs::create_directories(work);
        ExecutorOptions options;
        options.root = work;
        Executor executor(options);
        auto start = Clock::now();
        auto execution = executor.execute(parse_inbox(inbox));
        exec_ms.push_back(ms_since(start));
        for (const auto& result : execution.results)
            if (!result.success) {
                std::fprintf(stderr, "bench: %s\n", format_outcome(result).c_str());
                return 1;
            }
        const fs::path peer_work = base / ("peer" + std::to_string(r));
        fs::create_directories(peer_work);
        exec_peer.push_back(peer_ms(quote(python) + " " + quote(peer) + " execute " +
                                    quote(peer_work.string()) + " " + quote(inbox_file.string())));

        Session session;
        session.session_id = "00000000";
        session.task = "Bench the outbox.";
        start = Clock::now();
        const std::string outbox = render_outbox(session, workspace_listing(big, 400), {});
        outbox_ms.push_back(ms_since(start));
        outbox_bytes = outbox.size();
        outbox_peer.push_back(
            peer_ms(quote(python) + " " + quote(peer) + " outbox " + quote(big.string())));
    }
    fs::remove_all(base);

    std::printf(
        "textproto: %d runs; inbox %zu bytes, %zu commands; worktree 20000 files, "
        "outbox %zu bytes\n\n",
        runs, inbox.size(), commands, outbox_bytes);
    std::printf(
        "| measure | cocode median ms | python peer median ms | cocode / peer | target |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    auto row = [](const char* name, const std::vector<double>& ours,
                  const std::vector<double>& theirs) {
        std::printf("| %s | %.1f | %.1f | %.2f× | ≤ 50 ms |\n", name, median(ours), median(theirs),
                    median(ours) / median(theirs));
    };
    row("parse + execute 1 MB, 500 commands", exec_ms, exec_peer);
    row("outbox of a 20k-file worktree", outbox_ms, outbox_peer);
    return 0;
}
