// The verdict is about the commit, and the environment is prepared once (docs/check.md,
// docs/environments.md): cocode-dispatch and cocode-check as processes, real repositories,
// real sandboxes and overlays, a store of environments in the test's own folder; what the
// checks, the run folders and the store say afterwards.
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "dispatch_fixture.h"
#include "loopback_server.h"
#include "proc/sandbox.h"
#include "proc/spawn.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;

const char kVerifyAdd[] = "python3 -c 'from calc import add; assert add(2, 3) == 5'";

class Environments : public DispatchRun {
  protected:
    void SetUp() override {
        DispatchRun::SetUp();
        store_ = dir_ / "store";
        write_text(repo_ / ".gitignore", "deps/\n__pycache__/\nsitecustomize.py\n");
        sh_ok("git add .gitignore && git commit -q -m ignore", repo_);
    }

    // A script agent, .cocode/<name>.sh, that runs `body` in its worktree.
    json script(const std::string& name, const std::string& body) {
        const fs::path file = repo_ / ".cocode" / (name + ".sh");
        write_text(file, "#!/bin/sh\nset -e\n" + body + "\n");
        fs::permissions(file, fs::perms::owner_all, fs::perm_options::add);
        return {{"command", file.string()}};
    }

    std::string env() const { return "COCODE_ENV_STORE=" + quote(store_.string()) + " "; }
    // What it said is kept: the builds are counted from it.
    Shell in_store(const std::string& args) {
        Shell shell = dispatch(args, env());
        said_ += shell.out + shell.err;
        return shell;
    }

    json check_of(const run::RunRecord& r) {
        return json::parse(read_text(r.folder / "check.json"));
    }
    static const json& item(const json& check, const std::string& id) {
        for (const auto& c : check["checks"])
            if (c["id"] == id) return c;
        throw std::runtime_error("no check " + id);
    }
    const run::RunRecord& run_of(const std::string& agent) {
        all_ = runs();
        for (const auto& r : all_)
            if (r.agent == agent) return r;
        throw std::runtime_error("no run of " + agent);
    }
    std::vector<std::string> keys() {
        std::vector<std::string> out;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(store_, ec))
            if (entry.is_directory() && entry.path().filename().string().size() == 24)
                out.push_back(entry.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }
    // The builds cocode said it made ("environment KEY: building (…)"). A setup in the sandbox
    // writes nothing but its tree: it cannot count itself on the host.
    int builds() const {
        int n = 0;
        for (std::size_t at = said_.find(": building ("); at != std::string::npos;
             at = said_.find(": building (", at + 1))
            ++n;
        return n;
    }
    // A setup that makes `files` files under deps/ (and deps/shared.txt).
    std::string counted_setup(int files) {
        return "mkdir -p deps && i=0 && while [ $i -lt " + std::to_string(files) +
               " ]; do i=$((i+1)); echo $i > deps/f$i; done && echo original > deps/shared.txt";
    }

    fs::path store_;
    std::string said_;
};

// Three agents commit a broken add() with the marker and leave their worktree so that the
// project's test passes there; judged on a clean tree of their commit, each fails, and the
// check names what its worktree held. The honest agent passes.
TEST_F(Environments, ThreeLiarsFailOnTheirCommitAndAnHonestAgentPasses) {
    write_text(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
    sh_ok("git add calc.py && git commit -q -m calc", repo_);
    const std::string broken = "sed -i 's/a - b/a * b/' calc.py\n";
    const std::string commit = "git commit -q -am fix -m \"$COCODE_READY_MARKER\"\n";
    configure(
        {{"concurrency", 4},
         {"agents",
          {{"uncommitted",
            script("uncommitted", broken + commit + "sed -i 's/a \\* b/a + b/' calc.py")},
           {"sitecustomize",
            script("sitecustomize", broken + commit +
                                        "printf 'import calc\\ncalc.add = lambda a, b: a + b\\n' > "
                                        "sitecustomize.py")},
           // A correct version compiled, then the broken one with the same size and mtime:
           // Python's bytecode cache takes the stale .pyc for it.
           {"bytecode", script("bytecode",
                               "sed -i 's/a - b/a + b/' calc.py\n"
                               "touch -d @1767225600 calc.py\n"
                               "python3 -c 'import calc'\n"
                               "sed -i 's/a + b/a * b/' calc.py\n"
                               "touch -d @1767225600 calc.py\n" +
                                   commit)},
           {"honest", script("honest", "sed -i 's/a - b/a + b/' calc.py\n" + commit)}}},
         {"check", {{"verify", {{{"name", "add"}, {"run", kVerifyAdd}}}}}}});
    Shell run = in_store("run 1");
    ASSERT_NE((run.out + run.err).find("PASS"), std::string::npos) << run.out << run.err;

    const std::map<std::string, std::string> left = {
        {"uncommitted", "calc.py (modified)"},
        {"sitecustomize", "sitecustomize.py (ignored)"},
        {"bytecode", "__pycache__/ (ignored)"}};
    for (const auto& [agent, what] : left) {
        SCOPED_TRACE(agent);
        const auto& r = run_of(agent);
        // Where the agent left it, its worktree passes the project's test: the lie.
        EXPECT_EQ(sh(std::string("PYTHONPATH=. ") + kVerifyAdd, r.worktree).exit_code, 0);
        const json check = check_of(r);
        EXPECT_EQ(check["verdict"], "FAIL");
        EXPECT_EQ(item(check, "verify")["result"], "fail");
        EXPECT_EQ(item(check, "worktree")["result"], "pass");  // reported, never judged
        EXPECT_NE(item(check, "worktree")["reason"].get<std::string>().find(what),
                  std::string::npos)
            << item(check, "worktree").dump();
    }
    const json honest = check_of(run_of("honest"));
    EXPECT_EQ(honest["verdict"], "PASS") << honest.dump(2);
    EXPECT_EQ(item(honest, "worktree")["reason"], "the worktree is the judged commit");
    // cocode-check judges the same commits the same way, and leaves no tree behind it.
    Shell again =
        sh(quote(tool_path("cocode-check").string()) + " --issue 1 --agent sitecustomize", repo_);
    EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
    EXPECT_EQ(sh_ok("git worktree list | wc -l", repo_), "1\n");
    EXPECT_TRUE(fs::is_empty(repo_ / ".git/cocode/trees")) << again.out << again.err;
}

// Ten dispatchers at once need one environment: one build. Two agents share it on one issue:
// what one deletes and rewrites there reaches neither the stored environment nor its
// neighbour, and costs no copy of what it did not touch; worktree_setup sees the environment.
TEST_F(Environments, BuiltOnceForTenRunsAndNoAgentWritesIntoTheStoreOrItsNeighbour) {
    for (int n = 7; n <= 10; ++n)
        write_text(repo_ / ".cocode/issues" / (std::to_string(n) + ".json"),
                   json{{"number", n}, {"title", "x"}, {"state", "open"}}.dump());
    const std::string flag = (dir_ / "written").string();
    const std::string commit =
        "echo x > work.txt && git add work.txt && git commit -q -m w -m "
        "\"$COCODE_READY_MARKER\"";
    configure(
        {{"concurrency", 2},
         {"environment", {{"setup", {counted_setup(2000)}}}},
         {"worktree_setup", {{"commands", {"test -f deps/f2000 && : > setup-saw-deps"}}}},
         {"agents",
          {{"plain", script("plain", "test -f setup-saw-deps\n" + commit)},
           {"writer", script("writer", "echo mine > deps/shared.txt\nrm deps/f1\n: > " +
                                           quote(flag) + "\n" + commit)},
           {"reader",
            script("reader", "i=0; while [ ! -e " + quote(flag) +
                                 " ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done\n"
                                 "test \"$(cat deps/shared.txt)\" = original\ntest -f deps/f1\n" +
                                 commit)}}},
         {"check",
          {{"verify", {"test -f deps/f1 && test \"$(cat deps/shared.txt)\" = original"}}}}});

    std::string script_text = "for n in 1 2 3 4 5 6 7 8 9 10; do " + env() +
                              quote(tool_path("cocode-dispatch").string()) +
                              " run $n --agent plain > out-$n.txt 2>&1 & done; wait";
    sh_ok(script_text, repo_);
    for (int n = 1; n <= 10; ++n) said_ += read_text(repo_ / ("out-" + std::to_string(n) + ".txt"));
    EXPECT_EQ(builds(), 1);
    ASSERT_EQ(keys().size(), 1u);
    for (const auto& r : runs()) {
        const auto info = run::read_run_info(r.folder);
        EXPECT_EQ(info->get("environment_key"), keys().front()) << r.run_id;
        EXPECT_EQ(check_of(r)["verdict"], "PASS") << read_text(r.folder / "check.md");
    }

    sh_ok("git -c core.hooksPath=/dev/null worktree list >/dev/null", repo_);
    Shell pair =
        in_store("clean --all --force && " + env() + quote(tool_path("cocode-dispatch").string()) +
                 " run 1 --agent writer --agent reader");
    ASSERT_EQ(pair.exit_code, 0) << pair.err;
    EXPECT_EQ(builds(), 1) << "taken from the store, not built again";
    for (const char* agent : {"writer", "reader"}) {
        const auto& r = run_of(agent);
        EXPECT_EQ(r.exit_code, 0) << agent << ": " << read_text(r.folder / "agent-stderr.txt");
        EXPECT_EQ(check_of(r)["verdict"], "PASS") << agent;
        // An overlay where the sandbox runs and this kernel mounts one for us (doctor's
        // answer), else a copy.
        const bool overlay =
            probe_sandbox().available && overlay_refused(repo_ / ".git/cocode/views").empty();
        const auto mode = run::read_run_info(r.folder)->get("environment_mode").value_or("");
        if (overlay)
            EXPECT_EQ(mode, "overlay");
        else
            EXPECT_TRUE(mode == "copy" || mode == "reflink") << mode;
    }
    const fs::path stored = store_ / keys().front() / "tree" / "deps";
    EXPECT_EQ(read_text(stored / "shared.txt"), "original\n");
    EXPECT_TRUE(fs::exists(stored / "f1"));
    if (run::read_run_info(run_of("writer").folder)->get("environment_mode") == "overlay") {
        // The writer's changes are in its overlay alone: the one file it rewrote, and the
        // deletion; nothing it did not touch was copied.
        const fs::path upper = repo_ / ".git/cocode/views" / run_of("writer").run_id / "upper/0";
        EXPECT_EQ(read_text(upper / "shared.txt"), "mine\n");
        std::size_t files = 0;
        for (const auto& e : fs::recursive_directory_iterator(upper)) files += !e.is_directory();
        EXPECT_EQ(files, 2u) << "shared.txt and the whiteout of f1";
    }
    // Taken whole afterwards: nothing changed it.
    Shell built = in_store("env build");
    EXPECT_EQ(built.exit_code, 0) << built.err;
    EXPECT_EQ(built.err, "");
    EXPECT_EQ(builds(), 1);
    // Listed for a person: its size in bytes' units and its age in one style (before, SIZE was
    // a raw byte count, and ages read "111s" beside "2m").
    Shell listed = in_store("env list");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto row = listed.out.substr(listed.out.find('\n') + 1);
    EXPECT_TRUE(std::regex_search(
        row, std::regex(R"( [0-9.]+ (B|KB|MB) +[0-9]+ +[0-9]+[smhd] +[0-9]+[smhd] )")))
        << listed.out;
    EXPECT_FALSE(std::regex_search(row, std::regex(R"(\b(6[0-9]|[7-9][0-9]|1[01][0-9])s\b)")))
        << "an age of a minute or more is in minutes: " << listed.out;
}

// A build killed with -9 while its setup runs, and at several points after it: nothing is
// taken for finished unless its manifest says so and its files agree; the next build makes it.
TEST_F(Environments, ABuildKilledAnywhereLeavesNothingTakenForFinished) {
    const std::string block = (dir_ / "block").string(), fifo = (dir_ / "fifo").string();
    // The setup says it started in its build's log (<store>/<key>.log), the one file of the
    // host it writes, through the descriptor cocode gave it (the log's "$ command" line holds
    // the quotes, not the word).
    auto started = [&] {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(store_, ec))
            if (entry.path().extension() == ".log" &&
                read_text(entry.path()).find("setup-started") != std::string::npos)
                return true;
        return false;
    };
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    write_text(block, "");
    configure({{"environment",
                {{"setup",
                  {counted_setup(1000) + " && echo setup-'started' && if [ -e " + quote(block) +
                   " ]; then cat " + quote(fifo) + " > /dev/null; fi && echo done > deps/last"}}}},
               {"agents", {{"plain", script("plain", "true")}}}});
    // The builder in a session of its own: its whole group is killed at once.
    write_text(dir_ / "build.sh", "#!/bin/sh\nexec env " + env() +
                                      quote(tool_path("cocode-dispatch").string()) +
                                      " env build > build.out 2>&1\n");
    fs::permissions(dir_ / "build.sh", fs::perms::owner_all, fs::perm_options::add);
    auto start_build = [&] {
        return sh_ok("setsid " + quote((dir_ / "build.sh").string()) + " & echo $!", repo_);
    };
    auto kill_group = [&](const std::string& pid_line) {
        const pid_t pid = std::stoi(pid_line);
        ::kill(-pid, SIGKILL);
        // Its setup, in a session of its own (or bwrap's, which dies with its parent).
        for (pid_t left : processes_marked(fifo)) ::kill(left, SIGKILL);
        EXPECT_TRUE(
            wait_until([&] { return ::kill(-pid, 0) != 0 && processes_marked(fifo).empty(); }));
    };
    // While its setup runs.
    std::string pid = start_build();
    ASSERT_TRUE(wait_until(started));
    kill_group(pid);
    Shell listed = in_store("env list --json");
    EXPECT_EQ(json::parse(listed.out), json::array()) << listed.out;
    Shell pruned = in_store("env prune");
    EXPECT_NE(pruned.out.find("(unfinished)"), std::string::npos) << pruned.out;

    // After it, while it hashes and writes its manifest: wherever the kill lands.
    fs::remove(block);
    for (int delay_ms : {0, 40, 200}) {
        SCOPED_TRACE(delay_ms);
        for (const auto& entry : fs::directory_iterator(store_))
            if (entry.path().extension() == ".log") fs::remove(entry.path());
        pid = start_build();
        ASSERT_TRUE(wait_until(started));
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // where it lands
        kill_group(pid);
        const json finished = json::parse(in_store("env list --json").out);
        if (finished.empty()) continue;  // killed before its manifest: nothing to take
        // Finished before the kill: whole, and taken as it is.
        Shell taken = in_store("env build");
        EXPECT_EQ(taken.exit_code, 0) << taken.err;
        EXPECT_EQ(taken.err.find("building"), std::string::npos) << taken.err;
        EXPECT_EQ(read_text(store_ / keys().front() / "tree/deps/last"), "done\n");
        in_store("env prune --keep 0");
    }
    Shell built = in_store("env build");
    ASSERT_EQ(built.exit_code, 0) << built.err;
    EXPECT_EQ(read_text(store_ / keys().front() / "tree/deps/last"), "done\n");
}

// A stored environment whose files changed (truncated, or rewritten at the same size) is
// never used: it is built again, and said so. One only touched is checked whole and kept.
TEST_F(Environments, AChangedOrTruncatedStoreIsNotUsed) {
    configure({{"environment", {{"setup", {counted_setup(50)}}}},
               {"agents", {{"plain", script("plain", "true")}}}});
    ASSERT_EQ(in_store("env build").exit_code, 0);
    ASSERT_EQ(keys().size(), 1u);
    const fs::path shared = store_ / keys().front() / "tree/deps/shared.txt";
    sh_ok("truncate -s 3 " + quote(shared.string()), dir_.path());
    Shell rebuilt = in_store("env build");
    EXPECT_EQ(rebuilt.exit_code, 0);
    EXPECT_NE(rebuilt.err.find("changed or truncated: deps/shared.txt has 3 bytes, not 9"),
              std::string::npos)
        << rebuilt.err;
    EXPECT_EQ(builds(), 2);
    EXPECT_EQ(read_text(shared), "original\n");

    sh_ok("printf X | dd of=" + quote(shared.string()) + " conv=notrunc status=none", dir_.path());
    Shell again = in_store("env build");
    EXPECT_NE(again.err.find("changed or truncated: deps/shared.txt changed"), std::string::npos)
        << again.err;
    EXPECT_EQ(builds(), 3);

    sh_ok("touch " + quote(shared.string()) + " && chmod 644 " + quote(shared.string()),
          dir_.path());
    Shell kept = in_store("env build");
    EXPECT_EQ(kept.err, "");
    EXPECT_EQ(builds(), 3);
}

// A setup that fails: the run fails with reason setup and one line naming the command and the
// log; nothing is left in the store; the next run tries again.
TEST_F(Environments, AFailingSetupIsOneLineWithReasonSetupAndTheNextRunTriesAgain) {
    // What the setup looks for (a package registry's file, say) is in a folder the
    // configuration lets it read: the rest of the host, the main worktree among it, it may not.
    const fs::path registry = dir_ / "registry";
    fs::create_directories(registry);
    const std::string fixed = (registry / "fixed").string();
    configure(
        {{"readable", {registry.string()}},
         {"environment",
          {{"setup",
            {"test -e " + quote(fixed) + " || { echo 'no such package' >&2; exit 3; }",
             "mkdir -p deps && : > deps/ok"}}}},
         {"agents",
          {{"plain",
            script("plain", "git commit -q --allow-empty -m done -m \"$COCODE_READY_MARKER\"")}}},
         {"check", {{"verify", {"test -f deps/ok"}}}}});
    Shell failed = in_store("run 1");
    EXPECT_NE(failed.exit_code, 0);
    const auto& r = only_run();
    EXPECT_EQ(run::read_run_info(r.folder)->get("reason"), "setup");
    EXPECT_NE(r.error_summary.find("exited with 3 (log: " + store_.string()), std::string::npos)
        << r.error_summary;
    EXPECT_EQ(r.error_summary.find('\n'), std::string::npos);
    EXPECT_NE(failed.err.find("exited with 3"), std::string::npos) << failed.err;
    const std::string key = r.error_summary.substr(r.error_summary.find("environment ") + 12, 24);
    EXPECT_NE(read_text(store_ / (key + ".log")).find("no such package"), std::string::npos);
    EXPECT_TRUE(keys().empty()) << "a failed build leaves nothing to take";

    write_text(fixed, "");
    Shell fine = in_store("run 1");
    EXPECT_EQ(fine.exit_code, 0) << fine.err;
    EXPECT_EQ(builds(), 2);
    EXPECT_EQ(check_of(runs().back())["verdict"], "PASS");
}

// An agent that changes the lockfile works in the base's environment, and is judged in one
// built from its commit's lockfile: a dependency it adds is installed for its verify.
TEST_F(Environments, ALockfileTheAgentChangedGetsABuildOfItsOwn) {
    write_text(repo_ / "package-lock.json", "{\"v\": 1}\n");
    sh_ok("git add package-lock.json && git commit -q -m lock", repo_);
    configure({{"environment", {{"setup", {"mkdir -p deps && cp package-lock.json deps/lock"}}}},
               {"agents",
                {{"bumper", script("bumper",
                                   "cat deps/lock\necho '{\"v\": 2}' > package-lock.json\n"
                                   "git commit -q -am bump -m \"$COCODE_READY_MARKER\"")}}},
               {"check", {{"verify", {"cmp package-lock.json deps/lock"}}}}});
    Shell run = in_store("run 1");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto& r = only_run();
    EXPECT_EQ(read_text(r.folder / "agent-stdout.txt"), "{\"v\": 1}\n") << "its run: the base's";
    const json check = check_of(r);
    EXPECT_EQ(check["verdict"], "PASS") << check.dump(2);
    EXPECT_NE(item(check, "setup")["reason"].get<std::string>().find(
                  "built for this commit: package-lock.json changed"),
              std::string::npos);
    EXPECT_EQ(keys().size(), 2u);
    EXPECT_EQ(run::read_run_info(r.folder)->get("environment_key").value_or(""),
              run::read_run_info(r.folder)->get("environment_key").value_or("x"));
}

// Without the sandbox each worktree gets a copy (a reflink where the file system has them):
// the store and the neighbour stay as they were, and the check does not call the copy the
// agent's.
TEST_F(Environments, WithoutTheSandboxEachWorktreeGetsACopy) {
    const std::string commit =
        "echo x > work.txt && git add work.txt && git commit -q -m w -m "
        "\"$COCODE_READY_MARKER\"";
    configure({{"sandbox", "none"},
               {"environment", {{"setup", {counted_setup(20)}}}},
               {"agents",
                {{"writer", script("writer", "echo mine > deps/shared.txt\n" + commit)},
                 {"other", script("other", commit)}}},
               {"check", {{"verify", {"test \"$(cat deps/shared.txt)\" = original"}}}}});
    Shell run = in_store("run 1");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    for (const char* agent : {"writer", "other"}) {
        const auto& r = run_of(agent);
        const auto mode = run::read_run_info(r.folder)->get("environment_mode").value_or("");
        EXPECT_TRUE(mode == "copy" || mode == "reflink") << mode;
        const json check = check_of(r);
        EXPECT_EQ(check["verdict"], "PASS") << agent;
        EXPECT_EQ(item(check, "worktree")["reason"], "the worktree is the judged commit");
    }
    EXPECT_EQ(read_text(run_of("writer").worktree / "deps/shared.txt"), "mine\n");
    EXPECT_EQ(read_text(run_of("other").worktree / "deps/shared.txt"), "original\n");
    EXPECT_EQ(read_text(store_ / keys().front() / "tree/deps/shared.txt"), "original\n");
}

// A devcontainer.json's onCreateCommand, updateContentCommand and postCreateCommand, in their
// three forms, prepare the environment when the configuration names none.
TEST_F(Environments, ADevcontainersCommandsPrepareItInTheirThreeForms) {
    fs::create_directories(repo_ / ".devcontainer");
    write_text(repo_ / ".devcontainer/devcontainer.json", R"({
      // the image is not used: cocode runs no containers
      "image": "mcr.microsoft.com/devcontainers/base:bookworm",
      "onCreateCommand": "mkdir -p deps && echo one > deps/one",
      "updateContentCommand": ["sh", "-c", "echo two > deps/two"],
      "postCreateCommand": {"three": "echo three > deps/three", "four": ["touch", "deps/four"],},
    })");
    sh_ok("git add .devcontainer && git commit -q -m devcontainer", repo_);
    configure(
        {{"agents",
          {{"plain",
            script("plain", "git commit -q --allow-empty -m d -m \"$COCODE_READY_MARKER\"")}}},
         {"check", {{"verify", {"cat deps/one deps/two deps/three && test -f deps/four"}}}}});
    Shell doctor = in_store("doctor");
    EXPECT_NE(doctor.out.find("its onCreateCommand, updateContentCommand and postCreateCommand (4 "
                              "commands) prepare the environment"),
              std::string::npos)
        << doctor.out;
    EXPECT_NE(doctor.out.find("its image is not used"), std::string::npos);
    Shell run = in_store("run 1");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json check = check_of(only_run());
    EXPECT_EQ(check["verdict"], "PASS") << check.dump(2);
    EXPECT_NE(read_text(only_run().folder / "verify-1.log").find("one\ntwo\nthree\n"),
              std::string::npos);
}

// worktree_setup goes out through the run's egress proxy, under its allowlist, recorded in
// its egress.jsonl: an allowed host answers; a blocked one fails the setup in one line that
// names it.
TEST_F(Environments, TheSetupGoesOutThroughTheRunsProxy) {
    if (!probe_sandbox().available || !probe_sandbox().network)
        GTEST_SKIP() << "no network namespace";
    struct Registry {
        httplib::Server server;
        std::thread thread;
        int port = 0;
        Registry() {
            server.Get("/.*", [](const httplib::Request&, httplib::Response& res) {
                res.set_content("registry", "text/plain");
            });
            port = start_on_loopback(server, thread, "registry");
        }
        ~Registry() {
            server.stop();
            thread.join();
        }
    } registry;
    const int port = registry.port;
    const std::string fetch =
        "python3 -c \"import urllib.request, sys; "
        "print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())\" ";
    configure(
        {{"network", {{"mode", "allowlist"}, {"allow", {"127.0.0.1:" + std::to_string(port)}}}},
         {"worktree_setup",
          {{"commands",
            {fetch + "http://127.0.0.1:" + std::to_string(port) + "/pkg > fetched.txt"}}}},
         {"agents",
          {{"plain", script("plain",
                            "cat fetched.txt\ngit commit -q --allow-empty -m d -m "
                            "\"$COCODE_READY_MARKER\"")}}}});
    Shell run = in_store("run 1 --no-check");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(read_text(only_run().folder / "agent-stdout.txt"), "registry\n");
    bool recorded = false;
    for (const auto& line : read_lines(only_run().folder / "egress.jsonl"))
        recorded =
            recorded || (json::parse(line)["port"] == port && json::parse(line)["allowed"] == true);
    EXPECT_TRUE(recorded) << read_text(only_run().folder / "egress.jsonl");

    configure({{"network", {{"mode", "allowlist"}}},
               {"worktree_setup", {{"commands", {fetch + "http://registry.example.com/pkg"}}}},
               {"agents", {{"plain", script("plain", "true")}}}});
    Shell blocked = in_store("run 2 --no-check");
    EXPECT_NE(blocked.exit_code, 0);
    const run::RunRecord r = runs().back();
    EXPECT_NE(r.error_summary.find("the network allowlist refused registry.example.com:80"),
              std::string::npos)
        << r.error_summary;
    EXPECT_EQ(run::read_run_info(r.folder)->get("reason"), "setup");
}

// As an unprivileged user the overlay comes from a user namespace of cocode's own: the same
// sharing, the store still untouched.
TEST_F(Environments, AnUnprivilegedUserGetsTheOverlayInANamespaceOfItsOwn) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
    if (!probe_sandbox().available) GTEST_SKIP() << "no sandbox here";
    configure(
        {{"environment", {{"setup", {counted_setup(20)}}}},
         {"agents",
          {{"writer", script("writer",
                             "echo mine > deps/shared.txt\n"
                             "git commit -q --allow-empty -m d -m \"$COCODE_READY_MARKER\"")}}},
         {"check",
          {{"verify", {"test \"$(cat deps/shared.txt)\" = original && test $(id -u) = 65534"}}}}});
    sh_ok("chown -R 65534:65534 " + quote(dir_.path().string()) + " && chmod 755 " +
              quote(dir_.path().string()),
          dir_.path());
    const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    Shell run = sh(as_nobody + "env HOME=" + quote(dir_.path().string()) + " " + env() +
                       quote(tool_path("cocode-dispatch").string()) + " run 1",
                   repo_);
    // A container or chroot may refuse that user the namespaces a sandbox is made of ("cannot
    // mount a procfs"): the run is then refused as documented, naming the way out, and there
    // is no overlay to look for.
    if (sh(as_nobody + quote(tool_path("cocode-sandbox").string()) +
               " --unshare-pid --cap-drop ALL --ro-bind / / --dev /dev --proc /proc -- true",
           repo_)
            .exit_code != 0) {
        EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
        EXPECT_NE((run.out + run.err).find("\"sandbox\": \"none\""), std::string::npos) << run.err;
        GTEST_SKIP() << "user 65534 gets no sandbox here (no user namespace): the run was refused";
    }
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto& r = only_run();
    // Its check's clean tree had the overlay whatever the agent had (the verify's `id -u`).
    EXPECT_EQ(check_of(r)["verdict"], "PASS") << read_text(r.folder / "check.md");
    EXPECT_EQ(read_text(store_ / keys().front() / "tree/deps/shared.txt"), "original\n");
    // Where the kernel mounts no overlay for that user (a chroot, some containers), the
    // documented fallback is a copy: the store stays whole all the same (above).
    // `doctor`, as that user, tries the overlay for real and says which view it gets.
    const std::string check = read_text(r.folder / "check.md");
    Shell doctor = sh(as_nobody + "env HOME=" + quote(dir_.path().string()) + " " + env() +
                          quote(tool_path("cocode-dispatch").string()) + " doctor",
                      repo_);
    if ((doctor.out + doctor.err).find("overlay: each agent") == std::string::npos) {
        EXPECT_EQ(check.find("(overlay, environment in"), std::string::npos) << check;
        EXPECT_TRUE(check.find("(copy, environment in") != std::string::npos ||
                    check.find("(reflink, environment in") != std::string::npos)
            << check;
        GTEST_SKIP() << "no overlay for user 65534 here (doctor: the kernel refused it): the "
                        "check copied the environment, as documented";
    }
    EXPECT_NE(check.find("(overlay, environment in"), std::string::npos) << check;
    // The agent had it too where the sandbox runs for that user (an overlay is for sandboxed
    // agents); a container that refuses the user a sandbox gives it a copy.
    const auto info = run::read_run_info(r.folder);
    EXPECT_EQ(info->get("environment_mode"),
              info->get("sandbox").value_or("none").rfind("none", 0) != 0 ? "overlay" : "copy");
}

}  // namespace
}  // namespace cocode::test
