// bench/run index: the codali agent's worktree index on a 20,000-file repository:
//   - cold: the index built from nothing (Universal Ctags and Xapian over every file);
//   - incremental: brought up to date after one file changed;
//   - docdex.search: the median latency of a query (ranked hits, each with its line and
//     snippet), beside `git grep` for the same query as the peer.
// Targets (the issue): cold ≤ 20 s, incremental ≤ 200 ms, search ≤ 20 ms. Prints a Markdown
// table of medians and the ratio.
//   cocode-bench-index <scratch folder> [runs]
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_support.h"
#include "index/worktree_index.h"

namespace fs = std::filesystem;
using namespace cocode::bench;

namespace {

const char* const kWords[] = {"parse",   "config",  "render", "cache",  "order",  "invoice",
                              "payment", "session", "token",  "report", "upload", "schedule",
                              "retry",   "buffer",  "socket", "shard",  "ledger", "metric"};

// One source file of the fixture, in one of four languages, ~1.5 KB, with functions named
// after its place (so that every symbol is defined once) and imports of its neighbours.
std::string source_file(int d, int f, const std::string& ext) {
    const std::string id = std::to_string(d) + "_" + std::to_string(f);
    const std::string w1 = kWords[(d + f) % 18], w2 = kWords[(d * 7 + f * 3) % 18];
    std::string out;
    auto comment = [&](const std::string& lead) {
        for (int i = 0; i < 4; ++i)
            out += lead + " Handles the " + w1 + " of every " + w2 + " in shard " +
                   std::to_string((d + i) % 9) + "; see the " + kWords[(f + i) % 18] + " notes.\n";
    };
    if (ext == "py") {
        out += "import os\nfrom .f" + std::to_string((f + 1) % 100) + " import helper_" +
               std::to_string(d) + "_" + std::to_string((f + 1) % 100) + "\n\n";
        comment("#");
        for (int k = 0; k < 4; ++k)
            out += "\ndef " + w1 + "_" + w2 + "_" + id + "_" + std::to_string(k) +
                   "(value, limit=10):\n    total = 0\n    for i in range(limit):\n"
                   "        total += value * i\n    return total\n";
        out += "\ndef helper_" + id + "():\n    return os.getcwd()\n";
    } else if (ext == "c") {
        out += "#include \"f" + std::to_string((f + 1) % 100) + ".h\"\n#include <stdio.h>\n\n";
        comment("//");
        for (int k = 0; k < 4; ++k)
            out += "\nint " + w1 + "_" + w2 + "_" + id + "_" + std::to_string(k) +
                   "(int value, int limit) {\n    int total = 0;\n    for (int i = 0; i < limit; "
                   "++i) total += value * i;\n    return total;\n}\n";
    } else if (ext == "ts") {
        out += "import { helper" + std::to_string((f + 1) % 100) + " } from './f" +
               std::to_string((f + 1) % 100) + "';\n\n";
        comment("//");
        for (int k = 0; k < 4; ++k)
            out += "\nexport function " + w1 + w2 + id + "x" + std::to_string(k) +
                   "(value: number, limit = 10): number {\n  let total = 0;\n  for (let i = 0; "
                   "i < limit; i++) total += value * i;\n  return total;\n}\n";
    } else {
        out += "package dir" + std::to_string(d) + "\n\nimport \"fmt\"\n\n";
        comment("//");
        for (int k = 0; k < 4; ++k)
            out += "\nfunc " + w1 + w2 + id + "x" + std::to_string(k) +
                   "(value, limit int) int {\n\ttotal := 0\n\tfor i := 0; i < limit; i++ {\n\t\t"
                   "total += value * i\n\t}\n\tfmt.Println(total)\n\treturn total\n}\n";
    }
    return out;
}

// Runs `command` (through sh) and returns how long it took; its output is discarded.
double timed_shell(const std::string& command) {
    const auto start = Clock::now();
    const int rc = std::system((command + " >/dev/null 2>&1").c_str());
    const double ms = ms_since(start);
    if (rc == -1 || (WIFEXITED(rc) && WEXITSTATUS(rc) > 1)) {  // git grep: 1 = no match
        std::fprintf(stderr, "bench: failed: %s\n", command.c_str());
        std::exit(1);
    }
    return ms;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: cocode-bench-index <scratch folder> [runs]\n");
        return 2;
    }
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 21;
    const fs::path scratch = argv[1];
    fs::create_directories(scratch);
    std::string pattern = (scratch / "index-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) return 1;
    const fs::path base = fs::canonical(buf.data());

    // The repository: 200 folders of 100 files, four languages, committed once. The files are
    // dated an hour back before `git add`, so that git's index holds their stat data cleanly
    // (files written in the same second as the index would be re-read every time, which a
    // real repository does not do).
    const fs::path repo = base / "repo";
    const char* const kExt[] = {"py", "c", "ts", "go"};
    std::size_t bytes = 0;
    for (int d = 0; d < 200; ++d) {
        const fs::path dir = repo / ("pkg" + std::to_string(d / 20)) / ("dir" + std::to_string(d));
        fs::create_directories(dir);
        for (int f = 0; f < 100; ++f) {
            const std::string ext = kExt[d % 4];
            const std::string text = source_file(d, f, ext);
            bytes += text.size();
            std::ofstream(dir / ("f" + std::to_string(f) + "." + ext)) << text;
        }
    }
    run_or_die("cd " + quote(repo.string()) +
               " && find . -type f -exec touch -d '1 hour ago' {} + && git init -q && "
               "git add -A && git -c user.name=b -c user.email=b@b.invalid commit -qm files");

    // Cold builds.
    const int cold_runs = std::max(1, std::min(runs, 3));
    std::vector<double> cold;
    std::size_t files = 0;
    for (int r = 0; r < cold_runs; ++r) {
        fs::remove_all(base / "index");
        const auto start = Clock::now();
        auto index = cocode::index::WorktreeIndex::open(base / "index", repo);
        if (!index) return std::fprintf(stderr, "bench: %s\n", index.error().message.c_str()), 1;
        auto stats = (*index)->update();
        if (!stats) return std::fprintf(stderr, "bench: %s\n", stats.error().message.c_str()), 1;
        cold.push_back(ms_since(start));
        files = stats->indexed;
        if (!stats->warning.empty()) std::fprintf(stderr, "bench: %s\n", stats->warning.c_str());
    }

    auto opened = cocode::index::WorktreeIndex::open(base / "index", repo);
    if (!opened) return 1;
    auto& index = *opened;
    if (!index->update()) return 1;

    // One file changed, then the update.
    std::vector<double> incremental;
    const fs::path changed = repo / "pkg1/dir36/f42.py";  // dir36 holds Python
    if (!fs::exists(changed)) return std::fprintf(stderr, "bench: no %s\n", changed.c_str()), 1;
    for (int r = 0; r < runs; ++r) {
        std::ofstream(changed, std::ios::app)
            << "\ndef changed_" << r << "():\n    return " << r << "\n";
        const auto start = Clock::now();
        auto stats = index->update();
        incremental.push_back(ms_since(start));
        if (!stats) return std::fprintf(stderr, "bench: %s\n", stats.error().message.c_str()), 1;
        if (stats->indexed != 1) {
            std::fprintf(stderr, "bench: the update read %zu files, not 1\n", stats->indexed);
            return 1;
        }
    }

    // Queries: a symbol defined once, a symbol's words, two words of the comments.
    std::vector<std::string> queries;
    for (int q = 0; q < 20; ++q) {
        const int d = (q * 37) % 200, f = (q * 53) % 100;
        const std::string w1 = kWords[(d + f) % 18], w2 = kWords[(d * 7 + f * 3) % 18];
        switch (q % 3) {
            case 0:
                queries.push_back(
                    d % 4 < 2
                        ? w1 + "_" + w2 + "_" + std::to_string(d) + "_" + std::to_string(f) + "_1"
                        : w1 + w2 + std::to_string(d) + "_" + std::to_string(f) + "x1");
                break;
            case 1:
                queries.push_back(w1 + " " + w2);
                break;
            default:
                queries.push_back(std::string(kWords[q % 18]) + " shard");
                break;
        }
    }
    std::vector<double> search, grep;
    std::size_t hits_seen = 0;
    for (int r = 0; r < std::max(1, runs / 5); ++r) {
        for (const auto& q : queries) {
            const auto start = Clock::now();
            auto hits = index->search(q, 10);
            search.push_back(ms_since(start));
            if (!hits) return std::fprintf(stderr, "bench: %s\n", hits.error().message.c_str()), 1;
            hits_seen += hits->size();
            // The peer: git grep for the query's first word, as a tool would run it.
            const std::string first = q.substr(0, q.find(' '));
            grep.push_back(timed_shell("git -C " + quote(repo.string()) + " grep -n -I -i -F -e " +
                                       quote(first)));
        }
    }
    fs::remove_all(base);

    std::printf(
        "index: %zu files, %.1f MB of source; cold %d runs, incremental %d runs, %zu "
        "searches (%.1f hits each)\n\n",
        files, static_cast<double>(bytes) / 1e6, cold_runs, runs, search.size(),
        static_cast<double>(hits_seen) / static_cast<double>(search.size()));
    std::printf(
        "| measure | cocode median ms | git grep median ms | cocode / git grep | target |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    std::printf("| cold index of 20k files | %.0f | — | — | ≤ 20000 ms |\n", median(cold));
    std::printf("| re-index after one file changed | %.1f | — | — | ≤ 200 ms |\n",
                median(incremental));
    std::printf("| docdex.search (ranked, with lines) | %.2f | %.2f | %.2f× | ≤ 20 ms |\n",
                median(search), median(grep), median(search) / median(grep));
    return 0;
}
