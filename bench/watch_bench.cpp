// bench/run watch: from an issue labelled on GitHub to its agent started, in milliseconds.
//
// The clock starts when this program labels the issue on the loopback GitHub (for `serve`:
// labels it, then delivers GitHub's signed `issues.labeled` webhook) and stops at the time the
// run's RUN_START event carries in the runs' bus (.cocode/runs/events.jsonl): the dispatcher
// writes it once the agent's process is started, after the claim, the worktree and the run
// folder. Issues are labelled one at a time, each once the previous one is answered and a
// random part of the poll interval later, so that labels fall anywhere in it. Three ways, and
// a fourth beside them: a round on the pull request (docs/review.md), from a writer's review
// asking for changes, delivered as GitHub's signed `pull_request_review.submitted` webhook, to
// the agent of the pair's next round started (`serve`; the round is `continue --from-pr`):
//   watch    `cocode-dispatch watch --interval 5s` in a clone;
//   serve    `cocode-dispatch serve`, the webhook delivered over HTTP on 127.0.0.1;
//   poller   the peer (bench/watch_peer.py): the way the tools cocode replaces take labelled
//            issues — list them every 5 s without ETags and start the agent for each new one,
//            with no claim, worktree or run folder.
//   cocode-bench-watch <bin dir> <peers dir> <python> <watch_peer.py> [issues]
#include <httplib.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_github.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using SystemClock = std::chrono::system_clock;
using cocode::test::FakeGitHub;

constexpr char kSecret[] = "a webhook secret for the bench";
constexpr char kRepo[] = "Codertocat/Hello-World";  // the repository of GitHub's example payloads

fs::path g_work;               // kept when the bench fails, for its logs
std::vector<pid_t> g_started;  // ended when the bench fails

[[noreturn]] void fail(const std::string& why) {
    for (pid_t pid : g_started) ::kill(pid, SIGTERM);
    std::fprintf(stderr, "cocode-bench-watch: %s%s\n", why.c_str(),
                 g_work.empty() ? "" : (" (logs in " + g_work.string() + ")").c_str());
    std::exit(1);
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) fail("failed: " + command);
}

std::string read_all(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Waits for `done` to hold, looking every 5 ms (the latency is read from the recorded time,
// not from when this program looked); fails the bench after `limit`.
void await(const std::string& what, const std::function<bool()>& done,
           std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) fail("timed out waiting for " + what);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// "2026-11-23T08:21:14.123Z" as milliseconds since the epoch.
double epoch_ms(const std::string& text) {
    std::tm tm{};
    int millis = 0;
    if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis) != 7)
        fail("not a timestamp: " + text);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(::timegm(&tm)) * 1000.0 + millis;
}

double now_ms() {
    return std::chrono::duration<double, std::milli>(SystemClock::now().time_since_epoch()).count();
}

// The time of the `nth` RUN_START for `issue` in the runs' bus (its nth run: round n of its
// pair), as milliseconds since the epoch.
std::optional<double> run_start(const fs::path& clone, long issue, long nth = 1) {
    std::istringstream lines(read_all(clone / ".cocode/runs/events.jsonl"));
    for (std::string line; std::getline(lines, line);) {
        const json event = json::parse(line, nullptr, false);
        if (event.is_object() && event.value("type", "") == "RUN_START" &&
            event.value("issue", 0L) == issue && --nth == 0)
            return epoch_ms(event.value("time", ""));
    }
    return std::nullopt;
}

pid_t spawn(std::vector<std::string> argv, const fs::path& cwd, const fs::path& log,
            const std::vector<std::string>& env) {
    std::vector<std::string> all_env = env;  // ours replace the inherited ones of the name
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        const std::string name = entry.substr(0, entry.find('=') + 1);
        if (std::none_of(env.begin(), env.end(),
                         [&](const std::string& ours) { return ours.rfind(name, 0) == 0; }))
            all_env.push_back(entry);
    }
    std::vector<char*> args, envp;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto& e : all_env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0)
        fail("cannot start " + argv[0]);
    posix_spawn_file_actions_destroy(&actions);
    g_started.push_back(pid);
    return pid;
}

void stop(pid_t pid) {
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    g_started.erase(std::remove(g_started.begin(), g_started.end(), pid), g_started.end());
}

// A poller's latency depends on where in its interval the label falls: each label waits a
// random part of the interval first, so that the samples cover all of it.
void somewhere_in_the_interval(std::mt19937& random) {
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 4999)(random)));
}

std::string hmac_sha256_hex(const std::string& key, const std::string& body) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &size);
    std::string hex;
    for (unsigned int i = 0; i < size; ++i) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", digest[i]);
        hex += two;
    }
    return hex;
}

// Posts a signed delivery of `event` to serve; fails the bench unless it is queued (202).
void deliver(httplib::Client& client, const std::string& event, const std::string& id,
             const std::string& body) {
    auto res = client.Post(
        "/webhook",
        httplib::Headers{{"X-GitHub-Event", event},
                         {"X-GitHub-Delivery", id},
                         {"X-Hub-Signature-256", "sha256=" + hmac_sha256_hex(kSecret, body)}},
        body, "application/json");
    if (!res || res->status != 202) fail("the delivery " + id + " was not accepted");
}

struct Row {
    std::string name;
    std::vector<double> ms;
};

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr,
                     "usage: cocode-bench-watch <bin dir> <peers dir> <python> <watch_peer.py> "
                     "[issues]\n");
        return 2;
    }
    const fs::path bin = argv[1], peers = argv[2];
    const std::string python = argv[3], peer = argv[4];
    const long n = argc > 5 ? std::atol(argv[5]) : 50;
    ::setenv("GITHUB_TOKEN", cocode::test::kTestToken, 1);
    ::unsetenv("COCODE_TEST_SCRATCH");

    FakeGitHub::Options options = cocode::test::loopback_options();
    options.owner = "Codertocat";
    options.repo = "Hello-World";
    // 200 runs and 50 rounds, each claimed, judged and published: more than a token's 5,000
    // requests an hour, as much as an App's installation has. The bench measures latency.
    options.rate_limit = 15000;
    FakeGitHub github(options);
    for (long i = 1; i <= 3 * n + 1; ++i)
        github.add_issue(i, "Issue " + std::to_string(i), "Fix it.", {});
    github.set_permission("writer", "write", "write");
    const std::string cert = cocode::test::loopback_tls().files.certificate.string();

    char scratch[] = "/tmp/cocode-bench-watch-XXXXXX";
    if (!::mkdtemp(scratch)) fail("mkdtemp");
    const fs::path work = scratch;
    g_work = work;
    // The project: one agent that commits a file, on an origin each machine clones.
    fs::create_directories(work / "project/.cocode");
    std::ofstream(work / "project/.cocode/fast.sh")
        << "#!/bin/sh\necho \"fixed $COCODE_ISSUE_NUMBER, round $COCODE_ROUND\" >> fixed.txt\n"
           "git add -A\ngit commit -q -m \"Fix #$COCODE_ISSUE_NUMBER\" -m "
           "\"$COCODE_READY_MARKER\"\n";
    fs::permissions(work / "project/.cocode/fast.sh", fs::perms::owner_all);
    std::ofstream(work / "project/.cocode/config.json") << json{
        {"agents", {{"fast", {{"command", ".cocode/fast.sh"}}}}},
        {"check", {{"allowed_paths", {"fixed.txt"}}}}}.dump(2);
    const std::string identity = " -c user.name='cocode bench' -c user.email=bench@cocode.invalid ";
    run("cd " + quote((work / "project").string()) + " && git init -q -b main && echo demo > " +
        "README.md && git add -A && git" + identity + "commit -q -m start && git init -q --bare " +
        "../origin.git && git push -q ../origin.git main:main && git -C ../origin.git "
        "symbolic-ref " +
        "HEAD refs/heads/main && cd .. && git clone -q " +
        "origin.git machine && cd machine && git config user.name 'cocode agent' && " +
        "git config user.email agent@cocode.invalid");
    const fs::path clone = work / "machine";
    const std::vector<std::string> env = {"GITHUB_API_URL=" + github.base_url(),
                                          "SSL_CERT_FILE=" + cert,
                                          std::string("COCODE_WEBHOOK_SECRET=") + kSecret};
    const std::string dispatch = (bin / "cocode-dispatch").string();
    // `serve` on a free port in the clone, logging to `log`: its pid and where it listens.
    auto start_serve = [&](const std::string& log) {
        fs::remove(clone / ".cocode/serve/listening");
        const pid_t pid = spawn({dispatch, "serve", "--listen", "127.0.0.1:0", "--repo", kRepo},
                                clone, work / log, env);
        await("serve to listen", [&] { return fs::exists(clone / ".cocode/serve/listening"); });
        std::string where = read_all(clone / ".cocode/serve/listening");
        return std::pair<pid_t, std::string>{pid, where.substr(0, where.find('\n'))};
    };
    // GitHub's first example of `event` with `action` (@octokit/webhooks-examples).
    auto example = [&](const std::string& event, const std::string& action) {
        for (const auto& entry : json::parse(std::ifstream(
                 peers / "node_modules/@octokit/webhooks-examples/api.github.com/index.json")))
            if (entry["name"] == event)
                for (const auto& e : entry["examples"])
                    if (e.value("action", "") == action) return json(e);
        fail("no " + event + "." + action + " example in @octokit/webhooks-examples");
    };
    auto answered = [&](long issue) {
        const auto labels = github.labels_of(issue);
        return std::find(labels.begin(), labels.end(), "cocode:done") != labels.end() ||
               std::find(labels.begin(), labels.end(), "cocode:failed") != labels.end();
    };

    // From `t0` to the start of the run of `issue`, once that run is answered.
    auto time_to_start = [&](long issue, double t0) {
        std::optional<double> started;
        await("the run of issue " + std::to_string(issue),
              [&] { return (started = run_start(clone, issue)).has_value(); });
        await("issue " + std::to_string(issue) + " answered", [&] { return answered(issue); });
        return *started - t0;
    };

    std::vector<Row> rows;
    std::mt19937 random(20261123);  // the same phases on every run of the bench
    {
        // watch, every 5 s
        Row row{"cocode-dispatch watch --interval 5s", {}};
        const pid_t pid = spawn({dispatch, "watch", "--interval", "5s", "--repo", kRepo}, clone,
                                work / "watch.log", env);
        for (long issue = 1; issue <= n; ++issue) {
            somewhere_in_the_interval(random);
            const double t0 = now_ms();
            github.set_label(issue, "cocode", true);
            row.ms.push_back(time_to_start(issue, t0));
        }
        stop(pid);
        rows.push_back(row);
    }
    {  // serve: the label, then GitHub's webhook for it
        Row row{"cocode-dispatch serve (webhook)", {}};
        const auto [pid, where] = start_serve("serve.log");
        httplib::Client client("http://" + where);
        json payload = example("issues", "labeled");
        payload["label"]["name"] = "cocode";
        for (long issue = n + 1; issue <= 2 * n; ++issue) {
            payload["issue"]["number"] = issue;
            const std::string body = payload.dump();
            github.set_label(issue, "cocode", true);
            const double t0 = now_ms();
            deliver(client, "issues", "bench-" + std::to_string(issue), body);
            row.ms.push_back(time_to_start(issue, t0));
        }
        stop(pid);
        rows.push_back(row);
    }
    {  // serve: a writer's review of the pair's pull request, to the next round's agent started
        Row row{"cocode-dispatch serve: review webhook -> round's agent", {}};
        const long issue = 3 * n + 1;
        // Rounds: each publishes (a pushed branch, one pull request); the bench's pair goes on
        // for as many rounds as it has samples.
        std::ofstream(work / "project/.cocode/config.json") << json{
            {"agents", {{"fast", {{"command", ".cocode/fast.sh"}}}}},
            {"check", {{"allowed_paths", {"fixed.txt"}}}},
            {"publish", {{"push", true}, {"pull_request", true}}},
            {"review", {{"max_rounds", 100}}}}.dump(2);
        run("cd " + quote((work / "project").string()) + " && git" + identity +
            "commit -qam rounds && git push -q ../origin.git main && cd ../machine && git pull -q");
        const auto [pid, where] = start_serve("serve-rounds.log");
        httplib::Client client("http://" + where);
        // Round 1, from the label; its pull request.
        json labeled = example("issues", "labeled");
        labeled["issue"]["number"] = issue;
        labeled["label"]["name"] = "cocode";
        github.set_label(issue, "cocode", true);
        deliver(client, "issues", "rounds-label", labeled.dump());
        await("round 1 answered", [&] { return answered(issue) && !github.pulls().empty(); });
        const long pull = github.pulls().back()["number"];
        auto final_claims = [&] {
            int k = 0;
            for (const auto& c : github.comments_of(pull)) {
                const std::string body = c["body"];
                k += body.find("\"state\":\"done\"") != std::string::npos ||
                     body.find("\"state\":\"failed\"") != std::string::npos;
            }
            return k;
        };
        json review = example("pull_request_review", "submitted");
        review["pull_request"]["number"] = pull;
        review["pull_request"]["head"]["ref"] = "cocode/" + std::to_string(issue) + "-fast";
        review["pull_request"]["head"]["repo"]["full_name"] = kRepo;
        review["review"]["state"] = "changes_requested";
        review["review"]["user"]["login"] = "writer";
        review["review"]["user"]["type"] = "User";
        for (long k = 1; k <= n; ++k) {
            review["review"]["id"] =
                github.add_review(pull, "writer", "CHANGES_REQUESTED", "Once more.");
            const std::string body = review.dump();
            const double t0 = now_ms();
            deliver(client, "pull_request_review", "rounds-" + std::to_string(k), body);
            std::optional<double> started;
            await("round " + std::to_string(k + 1),
                  [&] { return (started = run_start(clone, issue, k + 1)).has_value(); });
            await("round " + std::to_string(k + 1) + " answered",
                  [&] { return final_claims() == k; });
            row.ms.push_back(*started - t0);
        }
        stop(pid);
        rows.push_back(row);
    }
    {  // the peer: a poller every 5 s
        Row row{"python poller every 5 s (peer)", {}};
        const fs::path started_file = work / "peer-started.jsonl";
        std::ofstream(started_file).close();
        const pid_t pid =
            spawn({python, peer, github.base_url(), cert, std::string("Codertocat/Hello-World"),
                   "GITHUB_TOKEN", "5", started_file.string()},
                  work, work / "peer.log", {});
        auto peer_start = [&](long issue) -> std::optional<double> {
            std::istringstream lines(read_all(started_file));
            for (std::string line; std::getline(lines, line);) {
                const json event = json::parse(line, nullptr, false);
                if (event.is_object() && event.value("issue", 0L) == issue)
                    return event.value("time", 0.0) * 1000.0;
            }
            return std::nullopt;
        };
        for (long issue = 2 * n + 1; issue <= 3 * n; ++issue) {
            somewhere_in_the_interval(random);
            const double t0 = now_ms();
            github.set_label(issue, "cocode", true);
            std::optional<double> started;
            await("the peer's agent for issue " + std::to_string(issue),
                  [&] { return (started = peer_start(issue)).has_value(); });
            row.ms.push_back(*started - t0);
        }
        stop(pid);
        rows.push_back(row);
    }
    run("rm -rf " + quote(work.string()));

    std::printf(
        "From an issue labelled on GitHub (loopback TLS) to its agent started; %ld issues "
        "each, one at a time.\n\n",
        n);
    std::printf("| how | median ms | p90 ms | min ms | max ms |\n|---|---:|---:|---:|---:|\n");
    for (const auto& r : rows)
        std::printf("| %s | %.0f | %.0f | %.0f | %.0f |\n", r.name.c_str(), percentile(r.ms, 0.5),
                    percentile(r.ms, 0.9), percentile(r.ms, 0.0), percentile(r.ms, 1.0));
    const double peer_median = percentile(rows[3].ms, 0.5);
    std::printf(
        "\nwatch / peer: %.2fx; serve / peer: %.3fx (target for serve: <= 200 ms); "
        "review -> round / peer: %.3fx (target: <= 200 ms)\n",
        percentile(rows[0].ms, 0.5) / peer_median, percentile(rows[1].ms, 0.5) / peer_median,
        percentile(rows[2].ms, 0.5) / peer_median);
    return 0;
}
