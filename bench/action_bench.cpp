// bench/run action: the action's whole overhead on a warm runner — cocode restored from the
// cache, the issue planned, a trivial agent dispatched, its run judged and the verdict published
// to GitHub on loopback TLS — in the simulated runner (tests/actions/runner.mjs), against the
// cold install (cocode built from its sources) beside it. Prints a Markdown table of medians.
//   cocode-bench-action <source dir> <peers dir> [warm runs]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_github.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using cocode::test::FakeGitHub;

namespace {

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// Runs `command`; its stdout. Exits the bench when it fails.
std::string output(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) std::exit(1);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    if (::pclose(pipe) != 0) {
        std::fprintf(stderr, "bench: failed: %s\n", command.c_str());
        std::exit(1);
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: cocode-bench-action SOURCE PEERS [warm runs]\n");
        return 2;
    }
    const std::string source = argv[1], peers = argv[2];
    const int runs = argc > 3 ? std::atoi(argv[3]) : 10;

    char pattern[] = "/tmp/cocode-bench-action-XXXXXX";
    const fs::path dir = ::mkdtemp(pattern);
    FakeGitHub::Options options = cocode::test::loopback_options();
    options.owner = "bench";
    options.repo = "project";
    FakeGitHub github(options);
    github.add_issue(1, "Say it is fixed", "Write fixed.txt.", {"cocode"});

    // The project: one trivial agent that commits with the marker.
    const fs::path work = dir / "project";
    fs::create_directories(work / ".cocode");
    write(work / ".cocode/trivial.sh",
          "#!/bin/sh\necho fixed > fixed.txt\ngit add fixed.txt\n"
          "git commit -q -m \"Fix #$COCODE_ISSUE_NUMBER\" -m \"$COCODE_READY_MARKER\"\n");
    fs::permissions(work / ".cocode/trivial.sh", fs::perms::owner_all);
    write(work / ".cocode/config.json",
          R"({"agents": {"trivial": {"command": ".cocode/trivial.sh"}}})");
    output("cd " + quote(work.string()) +
           " && git init -q -b main && git -c user.name=b -c user.email=b@cocode.invalid add -A"
           " && git -c user.name=b -c user.email=b@cocode.invalid commit -q -m bench"
           " && git init -q --bare ../origin.git && git push -q ../origin.git main:main"
           " && git -C ../origin.git symbolic-ref HEAD refs/heads/main");

    // The workflow: plan, then the action on the plan's one entry, publishing.
    write(dir / "bench.yml", R"(name: bench
on:
  issues:
    types: [labeled]
permissions:
  issues: write
jobs:
  agent:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - id: setup
        uses: OWNER/cocode/github-action@main
        with:
          setup-only: "true"
          install: build
      - id: plan
        env:
          GITHUB_TOKEN: ${{ github.token }}
        run: cocode-dispatch plan --event "$GITHUB_EVENT_PATH" --json
      - id: action
        uses: OWNER/cocode/github-action@main
        with:
          install: path
          agents: trivial
)");
    write(dir / "event.json", json{{"action", "labeled"},
                                   {"label", {{"name", "cocode"}}},
                                   {"issue", {{"number", 1}}},
                                   {"repository", {{"full_name", "bench/project"}}}}
                                  .dump());
    const fs::path cache = dir / "actions-cache";
    auto run_once = [&](int n) {
        const fs::path scratch = dir / ("run-" + std::to_string(n));
        fs::create_directories(scratch);
        // cocode is not on PATH here: the action builds it (cold) or restores it (warm).
        const std::string out = output(
            "env -u GITHUB_ACTIONS -u GITHUB_OUTPUT -u GITHUB_TOKEN GITHUB_API_URL=" +
            github.base_url() +
            " SSL_CERT_FILE=" + quote(cocode::test::loopback_tls().files.certificate.string()) +
            " node " + quote(source + "/tests/actions/runner.mjs") + " --workflow " +
            quote((dir / "bench.yml").string()) + " --event issues --payload " +
            quote((dir / "event.json").string()) + " --origin " +
            quote((dir / "origin.git").string()) + " --scratch " + quote(scratch.string()) +
            " --cache " + quote(cache.string()) + " --source " + quote(source) + " --peers " +
            quote(peers) + " --secret GITHUB_TOKEN=" + cocode::test::kTestToken + " 2>" +
            quote((scratch / "runner.log").string()) + " || { tail -n 30 " +
            quote((scratch / "runner.log").string()) + " >&2; exit 1; }");
        const json job = json::parse(out.substr(out.rfind("{\"jobs\"")))["jobs"]["agent"][0];
        if (job["result"] != "success" || job["steps"].size() != 4) {
            std::fprintf(stderr, "bench: the job did not succeed: %s\n", job.dump().c_str());
            std::exit(1);
        }
        double install = 0, overhead = 0;
        for (const auto& step : job["steps"]) {
            const std::string name = step["name"];
            if (name == "setup") install = step["seconds"];
            if (name == "setup" || name == "plan" || name == "action")
                overhead += step["seconds"].get<double>();
        }
        return std::pair{install, overhead};
    };

    const auto cold = run_once(0);
    std::vector<double> warm_install, warm_total;
    for (int i = 1; i <= runs; ++i) {
        auto [install, total] = run_once(i);
        warm_install.push_back(install);
        warm_total.push_back(total);
    }
    std::printf("| the action on one issue, one trivial agent (runs: %d warm) | seconds |\n", runs);
    std::printf("|---|---:|\n");
    std::printf("| cold: install (cocode built from its sources) | %.1f |\n", cold.first);
    std::printf("| cold: install, plan, dispatch, check, publish | %.1f |\n", cold.second);
    std::printf("| warm: install (restored from the cache), median | %.2f |\n",
                median(warm_install));
    std::printf(
        "| warm: install, plan, dispatch, check, publish, median (target <= 3 s) | %.2f |\n",
        median(warm_total));
    std::printf("| cold / warm | %.0fx |\n", cold.second / std::max(0.001, median(warm_total)));

    // What each run asked of GitHub, and how much of it the live comment wrote.
    const auto requests = github.requests();
    std::size_t live_writes = 0, comment_lists = 0, comment_reads = 0;
    for (const auto& r : requests) {
        if ((r.method == "POST" || r.method == "PATCH") &&
            r.body.find("cocode:progress") != std::string::npos)
            ++live_writes;
        if (r.method == "GET" && r.path.rfind("/repos/bench/project/issues/1/comments", 0) == 0)
            ++comment_lists;
        if (r.method == "GET" && r.path.rfind("/repos/bench/project/issues/comments/", 0) == 0)
            ++comment_reads;
    }
    const double per = 1.0 / (runs + 1);
    std::printf("\n| GitHub requests per run (%d runs) | requests |\n|---|---:|\n", runs + 1);
    std::printf("| all, reads included | %.1f |\n", static_cast<double>(requests.size()) * per);
    std::printf("| the live comment's writes (its edits) | %.1f |\n",
                static_cast<double>(live_writes) * per);
    std::printf(
        "| lists of the issue's comments (the live comment's first edit of each writer; the "
        "verdict's publishing) | %.1f |\n",
        static_cast<double>(comment_lists) * per);
    std::printf("| one comment read by its id (the live comment's later edits) | %.1f |\n",
                static_cast<double>(comment_reads) * per);
    fs::remove_all(dir);
    return 0;
}
