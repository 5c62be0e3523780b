// The sandbox holds (docs/security.md, "The sandbox"): hostile agents whose commits carry a
// payload, and cocode running that code as it judges them — verify commands, worktree_setup,
// an environment's setup and key commands — in the run and in cocode-check, with the real
// bubblewrap. What the payload reached of the host is read from the host afterwards: the user's
// HOME and dotfiles, the main worktree, the store of environments, a service on the loopback, a
// secret in ~/.ssh, the host's processes, the host's /tmp; and whether anything it left was
// carried out later by cocode's own git or by the user's.
#include "proc/sandbox.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "dispatch_fixture.h"
#include "proc/spawn.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;

// A service on the host's loopback that counts who connected to it.
class Listener {
  public:
    Listener() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
            ::listen(fd_, 16) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
            throw std::runtime_error("cannot listen on the loopback");
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] {
            while (!stop_) {
                pollfd p{fd_, POLLIN, 0};
                if (::poll(&p, 1, 100) <= 0) continue;
                const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
                if (client >= 0) {
                    ++accepted_;
                    ::close(client);
                }
            }
        });
    }
    ~Listener() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    int port() const { return port_; }
    int accepted() const { return accepted_; }

  private:
    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> accepted_{0};
    std::thread thread_;
};

// A process of the host's, named `name` in its argv[0]; ended (by its pid) with the test.
class Sentinel {
  public:
    explicit Sentinel(const std::string& name) {
        // The pipe closes on exec: its end of file is the sentinel running under its name.
        int exec[2];
        if (::pipe2(exec, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a pipe");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setpgid(0, 0);  // a group of its own, as an agent leads one
            ::execl("/bin/sleep", name.c_str(), "3600", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(exec[1]);
        char byte;
        while (::read(exec[0], &byte, 1) < 0 && errno == EINTR) {
        }
        ::close(exec[0]);
        if (pid_ < 0) throw std::runtime_error("cannot fork the sentinel");
    }
    ~Sentinel() {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }
    // Still running (it is this process's child: once ended, it waits here to be reaped).
    bool alive() const {
        const auto info = process_info(pid_);
        return info && info->state != 'Z';
    }
    Sentinel(const Sentinel&) = delete;
    Sentinel& operator=(const Sentinel&) = delete;

  private:
    pid_t pid_ = -1;
};

// A sandbox maker started by a parent that dies before the maker asks to die with it: the
// kernel never sends that signal, so the sandbox would run its program with nobody left to end
// it (a dispatcher killed just after it started a run; DispatchRun's kill -9 test met it under
// load). Here the parent is surely gone first: it starts the maker's process and exits, and the
// maker is exec'd only once it has been adopted. Told by start_child's command line who its
// parent is (dying_with), each maker starts nothing; the same command line as it was before
// (not told) runs its program, orphaned.
TEST(SandboxMaker, OneWhoseParentDiedBeforeItAskedToDieWithItStartsNothing) {
    int makers = 0;
    for (SandboxMaker maker : {SandboxMaker::cocode, SandboxMaker::bubblewrap}) {
        const SandboxProbe& probe = probe_sandbox(maker);
        if (!probe.available) continue;
        ++makers;
        for (bool told : {true, false}) {
            SCOPED_TRACE(probe.program.string() + (told ? ", told its parent" : ", not told"));
            TempDir dir;
            SandboxPlan plan;
            plan.writable = {dir.path()};
            const std::vector<std::string> argv = sandboxed_argv(
                probe.program, plan, {"/bin/sh", "-c", "echo ran > " + (dir / "ran").string()});
            // The parent's pid is written into its place once it is known (after the fork,
            // where nothing may allocate): nine digits, leading zeros.
            const std::string placeholder = "999999999";
            fs::path program = probe.program;
            std::vector<std::string> words = told ? dying_with(999999999, argv, program) : argv;
            char* parent_digits = nullptr;
            for (auto& w : words)
                if (w == placeholder) parent_digits = w.data();
            ASSERT_EQ(parent_digits != nullptr, told);
            std::vector<char*> args;
            for (auto& w : words) args.push_back(w.data());
            args.push_back(nullptr);
            const int err = ::open((dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            int done[2];
            ASSERT_EQ(::pipe(done), 0);  // its write end held by the maker and what it starts
            const pid_t parent = ::fork();
            ASSERT_GE(parent, 0);
            if (parent == 0) {
                const pid_t self = ::getpid();
                if (parent_digits)
                    for (int i = 8, n = self; i >= 0; --i, n /= 10)
                        parent_digits[i] = static_cast<char>('0' + n % 10);
                if (::fork() == 0) {
                    while (::getppid() == self) {
                    }
                    ::close(done[0]);
                    ::dup2(err, 2);
                    ::execv(program.c_str(), args.data());
                    ::_exit(127);
                }
                ::_exit(0);
            }
            ::close(done[1]);
            int status = 0;
            ASSERT_EQ(::waitpid(parent, &status, 0), parent);
            pollfd ended{done[0], POLLIN, 0};
            ASSERT_EQ(::poll(&ended, 1, 20000), 1) << "the maker and its program did not end";
            char byte;
            EXPECT_EQ(::read(done[0], &byte, 1), 0);
            ::close(done[0]);
            ::close(err);
            if (told) {
                EXPECT_FALSE(fs::exists(dir / "ran")) << "the program ran with its parent gone";
                EXPECT_NE(read_text(dir / "stderr").find("its parent is gone"), std::string::npos)
                    << read_text(dir / "stderr");
            } else {
                EXPECT_EQ(read_text(dir / "ran"), "ran\n") << read_text(dir / "stderr");
            }
        }
    }
    if (makers == 0) {
        ASSERT_EQ(std::getenv("COCODE_FULL_RUN"), nullptr) << probe_sandbox().why_not;
        GTEST_SKIP() << "no sandbox here: " << probe_sandbox().why_not;
    }
}

// Bubblewrap's first process inside asks for the parent-death signal only once the sandbox is
// built: its outer process killed before that (with the dispatcher: DispatchRun's kill -9 test,
// under load) left the sandbox running, its agent with nobody to end it. cocode-sandbox
// `--exec-with-parent`, which starts bubblewrap, makes it the first process of a PID namespace
// of its own, so that what it started ends with it, whichever of the two processes is killed. A
// shell stands in for bubblewrap; its child, in a session of its own, for the sandbox that had
// not asked yet.
TEST(SandboxMaker, WhatBubblewrapStartedEndsWithItWhicheverOfItsProcessesIsKilled) {
    const fs::path maker = sandbox_program();
    if (maker.empty()) {
        ASSERT_EQ(std::getenv("COCODE_FULL_RUN"), nullptr) << "no cocode-sandbox here";
        GTEST_SKIP() << "no cocode-sandbox here";
    }
    const auto start = [&](const std::string& script, int out) {
        const std::vector<std::string> words = {
            maker.string(), "--exec-with-parent", std::to_string(::getpid()), "--", "/bin/sh", "-c",
            script};
        std::vector<char*> args;
        for (const auto& w : words) args.push_back(const_cast<char*>(w.c_str()));
        args.push_back(nullptr);
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (out >= 0) ::dup2(out, 1);
            ::execv(maker.c_str(), args.data());
            ::_exit(127);
        }
        return pid;
    };
    // Its program's exit code is its own.
    int status = 0;
    const pid_t plain = start("exit 7", -1);
    ASSERT_EQ(::waitpid(plain, &status, 0), plain);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;

    for (bool kill_the_waiter : {false, true}) {
        SCOPED_TRACE(kill_the_waiter ? "cocode-sandbox killed" : "its program killed");
        int out[2];
        ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
        // The program's pid as the host sees it (the host's /proc), then the child's "up".
        const pid_t waiter = start(
            "read -r me rest < /proc/self/stat; echo \"$me\"; "
            "setsid sh -c 'echo up; exec sleep 60' & wait",
            out[1]);
        ASSERT_GT(waiter, 0);
        ::close(out[1]);
        std::string said;
        char buffer[256];
        while (std::count(said.begin(), said.end(), '\n') < 2) {
            pollfd ready{out[0], POLLIN, 0};
            ASSERT_EQ(::poll(&ready, 1, 20000), 1) << "it did not start: " << said;
            const ssize_t n = ::read(out[0], buffer, sizeof buffer);
            ASSERT_GT(n, 0) << said;
            said.append(buffer, static_cast<std::size_t>(n));
        }
        ASSERT_NE(said.find("\nup\n"), std::string::npos) << said;
        const pid_t program = static_cast<pid_t>(std::stol(said));
        ASSERT_EQ(::kill(kill_the_waiter ? waiter : program, SIGKILL), 0);
        // Its end of file: nothing holding the pipe is left, the child in its session included.
        pollfd ended{out[0], POLLIN, 0};
        if (::poll(&ended, 1, 20000) == 1)
            EXPECT_EQ(::read(out[0], buffer, sizeof buffer), 0);
        else
            ADD_FAILURE() << "what the program started is still running";
        ::close(out[0]);
        ASSERT_EQ(::waitpid(waiter, &status, 0), waiter);
        if (kill_the_waiter)
            EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
        else
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL) << status;
    }
}

class Sandbox : public DispatchRun {
  protected:
    // What the issue's run wrote in its folder's `seen`: what its agent could read.
    std::string seen_by_the_run_of(long issue) {
        for (const auto& r : runs())
            if (r.issue == issue) return read_text(r.folder / "seen");
        ADD_FAILURE() << "no run of issue " << issue;
        return "";
    }

    void SetUp() override {
        if (!probe_sandbox().available) {
            ASSERT_EQ(std::getenv("COCODE_FULL_RUN"), nullptr) << probe_sandbox().why_not;
            GTEST_SKIP() << "no sandbox here: " << probe_sandbox().why_not;
        }
        DispatchRun::SetUp();
        home_ = dir_ / "home";
        store_ = dir_ / "store";
        trap_ran_ = dir_ / "trap-ran";
        for (const char* folder : {".ssh", ".config/git"}) fs::create_directories(home_ / folder);
        write_text(home_ / ".ssh/id_test", secret_ + "\n");
        for (const char* file : {".gitconfig", ".bashrc", ".profile", ".config/git/config"})
            write_text(home_ / file, std::string("# the user's own ") + file + "\n");
        // What a trapped git or shell would run: it leaves a mark where the host can see it.
        write_text(dir_ / "trap.sh", "#!/bin/sh\necho ran >> " + quote(trap_ran_.string()) + "\n");
        fs::permissions(dir_ / "trap.sh", fs::perms::owner_all, fs::perm_options::add);
        write_text(repo_ / ".gitignore", "deps/\n__pycache__/\n");
        sh_ok("git add .gitignore && git commit -q -m ignore", repo_);
    }

    // cocode as the user runs it: HOME their own, git reading their configuration.
    std::string env() const {
        return "env -u GIT_CONFIG_GLOBAL HOME=" + quote(home_.string()) +
               " COCODE_ENV_STORE=" + quote(store_.string()) + " ";
    }
    Shell as_user(const std::string& command) { return sh(env() + command, repo_); }

    // `run 1 --detach --no-check`, and its run's folder once its agent has left `forged` there
    // (a failure, and an empty path, when it never does).
    fs::path detach_until_forged() {
        Shell run = dispatch_as_user("run 1 --detach --no-check");
        EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
        if (run.exit_code != 0 || runs().empty()) return {};
        const fs::path folder = runs().front().folder;
        const bool forged = wait_until([&] { return fs::exists(folder / "forged"); });
        EXPECT_TRUE(forged) << read_text(folder / "agent-stderr.txt");
        return forged ? folder : fs::path();
    }
    Shell dispatch_as_user(const std::string& args) { return dispatch(args, env()); }
    // The same, ended after `seconds` by `timeout` (exit 124, or 137 when it had to kill): a
    // dispatcher that waits on what an agent holds never ends by itself.
    Shell dispatch_within(int seconds, const std::string& args) {
        return as_user("timeout -k 5 " + std::to_string(seconds) + " " +
                       quote(tool_path("cocode-dispatch").string()) + " " + args);
    }
    static bool ended_in_time(const Shell& shell) {
        return shell.exit_code != 124 && shell.exit_code != 137;
    }
    // The start of an agent that forges run-info: after its dispatcher wrote what it knows of
    // the start (a forgery before would be overwritten, which is not what a test is about).
    static constexpr char kAfterItsStart[] =
        "until grep -q RUN_START \"$JRUN_RUN_FOLDER/events.jsonl\"; do sleep 0.05; done\n";

    // A script agent, .cocode/<name>.sh, that runs `body` in its worktree.
    json script(const std::string& name, const std::string& body) {
        const fs::path file = repo_ / ".cocode" / (name + ".sh");
        write_text(file, "#!/bin/sh\nset -e\n" + body + "\n");
        fs::permissions(file, fs::perms::owner_all, fs::perm_options::add);
        return {{"command", file.string()}};
    }

    // ANetworkGivenToTheNextRunKeepsNothingOfTheLast, as this test's user or (`as_other`,
    // from root) as user 65534.
    void network_kept_nothing(bool as_other) {
        // Not while the host's forwarding is turned on by the test that does (below).
        const HostForwardingLock held;
        // An ifreq is 40 bytes: the name, then the address or the flags.
        const std::string agent = R"(readlink /proc/self/ns/net > "$JRUN_RUN_FOLDER/network"
python3 - "$COCODE_ISSUE_NUMBER" "$JRUN_RUN_FOLDER/tried" <<'PY'
import errno, fcntl, os, socket, struct, sys, time
issue, path = sys.argv[1], sys.argv[2]
out = open(path, "w")
def ifreq(tail):
    return struct.pack("16s", b"lo") + tail + b"\0" * (24 - len(tail))
def ioctl(request, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        return fcntl.ioctl(s, request, payload)
    finally:
        s.close()
def write_now(path, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
def attempt(what, do):
    try:
        do()
        out.write(what + ": done\n")
    except OSError as e:  # refused for want of the right, not for a wrong question
        out.write(what + ": " + ("refused" if e.errno in (errno.EPERM, errno.EACCES, errno.EROFS)
                                 else "failed " + errno.errorcode[e.errno]) + "\n")
if issue == "1":
    if os.fork() == 0:  # a server that would outlive its agent
        os.setsid()
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 45677))
        server.listen(8)
        open(path + ".listening", "w").close()
        time.sleep(600)
        os._exit(0)
    while not os.path.exists(path + ".listening"):
        time.sleep(0.02)
    address = struct.pack("H2s4s8s", socket.AF_INET, b"\0\0", socket.inet_aton("10.77.0.1"), b"\0" * 8)
    attempt("address", lambda: ioctl(0x8916, ifreq(address)))                   # SIOCSIFADDR
    attempt("loopback down", lambda: ioctl(0x8914, ifreq(struct.pack("h", 0))))  # SIOCSIFFLAGS
    attempt("forwarding", lambda: write_now("/proc/sys/net/ipv4/ip_forward", b"1"))
    attempt("ttl", lambda: write_now("/proc/sys/net/ipv4/ip_default_ttl", b"42"))
    attempt("low ports", lambda: write_now("/proc/sys/net/ipv4/ip_unprivileged_port_start", b"32000"))
else:
    probe = socket.socket()
    out.write("server: " + ("reached" if probe.connect_ex(("127.0.0.1", 45677)) == 0 else "gone") + "\n")
    flags = struct.unpack("16sh", ioctl(0x8913, ifreq(b""))[:18])[1]          # SIOCGIFFLAGS
    out.write("loopback: " + ("up" if flags & 1 else "down") + "\n")
    out.write("address: " + ("there" if "10.77.0.1" in open("/proc/net/fib_trie").read() else "none") + "\n")
    out.write("forwarding: " + open("/proc/sys/net/ipv4/ip_forward").read().strip() + "\n")
    out.write("ttl: " + open("/proc/sys/net/ipv4/ip_default_ttl").read().strip() + "\n")
out.close()
PY
)";
        configure({{"concurrency", 1}, {"agents", {{"tries", script("tries", agent)}}}});
        // As the user this test runs as, and as another (root runs no user namespace of its own:
        // another user's runs do, the pool's made inside one).
        const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
        if (as_other) {
            sh_ok("chown -R 65534:65534 " + quote(dir_.path().string()) + " && chmod 755 " +
                      quote(dir_.path().string()),
                  dir_.path());
        }
        Shell run = as_other ? sh(as_nobody + env() + quote(tool_path("cocode-dispatch").string()) +
                                      " run 1 2 --no-check",
                                  repo_)
                             : dispatch_as_user("run 1 2 --no-check");
        // A chroot or a container may refuse that user the namespaces a sandbox is made of
        // ("cannot mount a procfs"): the runs are then refused as documented, and there is no
        // network to hand on.
        if (as_other &&
            sh(as_nobody + quote(tool_path("cocode-sandbox").string()) +
                   " --unshare-pid --cap-drop ALL --ro-bind / / --dev /dev --proc /proc -- true",
               repo_)
                    .exit_code != 0) {
            EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
            EXPECT_NE((run.out + run.err).find("\"sandbox\": \"none\""), std::string::npos)
                << run.err;
            GTEST_SKIP() << "user 65534 gets no sandbox here (no user namespace): its runs were "
                            "refused";
        }
        ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
        std::map<long, run::RunRecord> by_issue;
        for (const auto& r : runs()) by_issue[r.issue] = r;
        ASSERT_EQ(by_issue.size(), 2u);
        const std::string first = read_text(by_issue[1].folder / "network");
        ASSERT_FALSE(first.empty());
        ASSERT_EQ(read_text(by_issue[2].folder / "network"), first)
            << "the second run was to have the first's network";
        EXPECT_EQ(read_text(by_issue[1].folder / "tried"),
                  "address: refused\nloopback down: refused\nforwarding: refused\nttl: "
                  "refused\nlow ports: refused\n");
        // Its bridge listened on the proxy's port (a poisoned port range would have kept it
        // from it), and nothing of the last run is there: its settings are a fresh network's on
        // this machine (a new namespace takes IPv4's from the host's, so forwarding is on
        // wherever Docker runs), never a constant the host decides.
        EXPECT_EQ(read_text(by_issue[2].folder / "tried"),
                  "server: gone\nloopback: up\naddress: none\n" + fresh_network_settings());
    }

    // Held while a test reads a fresh network's settings or turns the host's forwarding on: the
    // tests of this file run side by side under ctest -j.
    struct HostForwardingLock {
        int fd =
            ::open((std::filesystem::temp_directory_path() / "cocode-test-ip-forward.lock").c_str(),
                   O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        HostForwardingLock() {
            EXPECT_GE(fd, 0);
            if (fd >= 0) {
                EXPECT_EQ(::flock(fd, LOCK_EX), 0);
            }
        }
        ~HostForwardingLock() {
            if (fd >= 0) ::close(fd);
        }
        HostForwardingLock(const HostForwardingLock&) = delete;
        HostForwardingLock& operator=(const HostForwardingLock&) = delete;
    };

    // What a network namespace made now shows of the two settings the first run tried to leave.
    static std::string fresh_network_settings() {
        const std::string read =
            "echo \"forwarding: $(cat /proc/sys/net/ipv4/ip_forward)\"; "
            "echo \"ttl: $(cat /proc/sys/net/ipv4/ip_default_ttl)\"";
        Shell fresh =
            sh((::geteuid() == 0 ? "unshare --net" : "unshare --user --map-root-user --net") +
                   std::string(" sh -c '") + read + "'",
               std::filesystem::temp_directory_path());
        EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
        return fresh.out;
    }

    // What a hostile commit runs wherever cocode runs its code: every trap of the toolbox
    // (docs/../TESTING.md), aimed at this host's real paths.
    std::string payload(int port) const {
        const std::string h = quote(home_.string()), main = quote(repo_.string()),
                          store = quote(store_.string()), trap = (dir_ / "trap.sh").string();
        return "w=$1\n"
               "for f in " +
               h + "/.gitconfig " + h + "/.bashrc " + h + "/.profile " + h +
               "/.config/git/config; do\n"
               "  printf '\\n[core]\\n\\tfsmonitor = " +
               trap +
               "\\n' >> \"$f\" 2>/dev/null || true\n"
               "done\n"
               "git config --file " +
               main + "/.git/config core.fsmonitor " + trap +
               " 2>/dev/null || true\n"
               "touch " +
               h + "/pwned-$w " + main +
               "/pwned-$w 2>/dev/null || true\n"
               "mkdir -p " +
               store + " 2>/dev/null && touch " + store +
               "/pwned-$w 2>/dev/null || true\n"
               "cat " +
               h +
               "/.ssh/id_test 2>/dev/null || true\n"
               "python3 -c \"import socket; socket.create_connection(('127.0.0.1', " +
               std::to_string(port) +
               "), 2)\" 2>/dev/null && echo 'reached the host loopback'\n"
               "echo \"host sentinels seen by $w: $(cat /proc/[0-9]*/cmdline 2>/dev/null | "
               "tr '\\0' '\\n' | grep -c '" +
               sentinel_pattern() +
               "')\"\n"
               "echo $w >> " +
               quote(host_tmp_probe().string()) +
               " 2>/dev/null || true\n"
               "true\n";
    }
    // A process of the host's the payload looks for: its argv[0] is this test's own word, which
    // the pattern below matches and (its bracket) the grep that looks for it does not.
    std::string sentinel_name() const { return dir_.path().filename().string() + "-sentinel"; }
    std::string sentinel_pattern() const { return dir_.path().filename().string() + "-[s]entinel"; }
    // A file the payload writes in /tmp: the host's /tmp must never get it.
    fs::path host_tmp_probe() const {
        return fs::path("/tmp") / ("cocode-probe-" + dir_.path().filename().string());
    }

    // Every "host sentinels seen by W: N" line below `folder`: W → N.
    static std::map<std::string, int> processes_seen(const fs::path& folder) {
        std::map<std::string, int> seen;
        const std::regex line("host sentinels seen by ([a-z_]+): ([0-9]+)");
        std::error_code ec;
        for (const auto& entry : fs::recursive_directory_iterator(folder, ec)) {
            if (!entry.is_regular_file()) continue;
            const std::string text = read_text(entry.path());
            for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it)
                seen[(*it)[1]] = std::stoi((*it)[2]);
        }
        return seen;
    }

    void expect_host_untouched(const Listener& listener) {
        std::error_code ec;
        for (const char* file : {".gitconfig", ".bashrc", ".profile", ".config/git/config"})
            EXPECT_EQ(read_text(home_ / file), std::string("# the user's own ") + file + "\n")
                << file;
        for (const auto& folder : {home_, repo_, store_})
            for (const auto& entry : fs::directory_iterator(folder, ec))
                EXPECT_EQ(entry.path().filename().string().rfind("pwned", 0), std::string::npos)
                    << entry.path();
        EXPECT_EQ(sh_ok("git config --file .git/config --get core.fsmonitor || true", repo_), "");
        EXPECT_EQ(listener.accepted(), 0) << "a connection to the host's loopback";
        EXPECT_FALSE(fs::exists(host_tmp_probe())) << read_text(host_tmp_probe());
        EXPECT_FALSE(secret_below(repo_ / ".cocode")) << "the secret in a run's files";
        EXPECT_FALSE(secret_below(store_)) << "the secret in the store";
        // The user's own git, afterwards, runs nothing either.
        as_user("git status --short");
        EXPECT_FALSE(fs::exists(trap_ran_)) << "a trap ran on the host";
    }

    // Whether the secret is in a file below `folder` (its links not followed: the agent's).
    bool secret_below(const fs::path& folder) const {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(folder, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if (fs::is_regular_file(it->symlink_status()) &&
                read_text(it->path()).find(secret_) != std::string::npos)
                return true;
        return false;
    }

    void TearDown() override {
        std::error_code ec;
        fs::remove(host_tmp_probe(), ec);
    }

    fs::path home_, store_, trap_ran_;
    const std::string secret_ = "ssh-secret-" + std::to_string(::getpid()) + "-x7Kq";
};

// The agent fixes add() and puts its payload everywhere cocode will run its code: in calc.py's
// import (verify), its worktree_setup script, its environment's setup and key command (it
// changed the lockfile, so its commit gets a build and a key of its own). Judged by the run,
// by cocode-check on the run and by cocode-check on a checkout (CI): every time PASS, its
// payload ran each time, and it reached nothing of the host.
TEST_F(Sandbox, AnAgentsCodeRunByTheCheckReachesNothingOfTheHost) {
    Listener listener;
    write_text(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
    write_text(repo_ / "requirements.txt", "a==1\n");
    write_text(repo_ / "setup.sh", "mkdir -p deps && echo base > deps/made\n");
    write_text(repo_ / "key.sh", "echo v1\n");
    write_text(repo_ / "wsetup.sh", "true\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    // The payload travels in the agent's own script: nothing of the main repository's
    // worktree is in its sight.
    const std::string agent =
        "cat > payload.sh <<'PAYLOAD_END'\n" + payload(listener.port()) +
        "\nPAYLOAD_END\n"
        "sh payload.sh agent > /dev/null\n"
        "printf 'import subprocess\\nsubprocess.run([\"sh\", \"payload.sh\", \"verify\"])\\n"
        "def add(a, b):\\n    return a + b\\n' > calc.py\n"
        "echo 'a==2' > requirements.txt\n"
        "printf 'sh payload.sh setup\\nmkdir -p deps && echo agent > deps/made\\n' > setup.sh\n"
        "printf 'sh payload.sh key >&2\\necho v1\\n' > key.sh\n"
        "printf 'sh payload.sh worktree_setup\\n' > wsetup.sh\n"
        "git add -A && git commit -q -m 'Fix add()' -m \"$COCODE_READY_MARKER\"\n";
    configure(
        {{"agents", {{"hostile", script("hostile", agent)}}},
         {"environment",
          {{"setup", {"sh ./setup.sh"}}, {"key_commands", {"sh ./key.sh"}}, {"paths", {"deps"}}}},
         {"worktree_setup", {{"commands", {"sh ./wsetup.sh"}}}},
         {"check",
          {{"verify",
            {{{"name", "add"},
              {"run", "python3 -c 'from calc import add; assert add(2, 3) == 5'"}}}}}}});
    const std::string base = sh_ok("git rev-parse HEAD", repo_).substr(0, 40);

    // A process of the host's, there all along: the host's own ps sees it.
    const Sentinel sentinel(sentinel_name());
    ASSERT_EQ(sh_ok("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c '" +
                        sentinel_pattern() + "' || true",
                    repo_),
              "1\n");

    Shell run = dispatch_as_user("run 1");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto& r = only_run();
    const json check = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "PASS") << check.dump(2);
    // Its key command ran (its commit got a key, and a build, of its own), in the sandbox.
    std::string setup;
    for (const auto& item : check["checks"])
        if (item["id"] == "setup") setup = item["reason"];
    EXPECT_NE(setup.find("built for this commit: requirements.txt changed"), std::string::npos)
        << setup;
    Shell again = as_user(quote(tool_path("cocode-check").string()) + " --issue 1 --agent hostile");
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    Shell ci = as_user(quote(tool_path("cocode-check").string()) + " --worktree " +
                       quote(r.worktree.string()) + " --base " + base);
    EXPECT_EQ(ci.exit_code, 0) << ci.out << ci.err;

    // Its payload ran wherever cocode ran its code, and saw only its own processes there.
    std::map<std::string, int> seen = processes_seen(repo_ / ".cocode");
    for (const auto& [where, n] : processes_seen(store_)) seen[where] = n;
    for (const char* where : {"verify", "setup", "worktree_setup"}) {
        ASSERT_TRUE(seen.count(where)) << where << " never ran the payload";
        EXPECT_EQ(seen[where], 0) << where << " saw the host's sentinel process";
    }
    expect_host_untouched(listener);
}

// With the user's own configuration holding an fsmonitor and a hooks path (as a trap an agent
// left on a machine without this sandbox would), cocode's own git runs neither: a whole run,
// its check and its clean. The user's git still does: the trap is armed.
TEST_F(Sandbox, CocodesOwnGitRunsNoHookAndNoFsmonitorItDidNotWrite) {
    const fs::path hooks = dir_ / "hooks";
    fs::create_directories(hooks);
    write_text(hooks / "post-checkout", "#!/bin/sh\n" + quote((dir_ / "trap.sh").string()) + "\n");
    fs::permissions(hooks / "post-checkout", fs::perms::owner_all, fs::perm_options::add);
    write_text(home_ / ".gitconfig", "[core]\n\tfsmonitor = " + (dir_ / "trap.sh").string() +
                                         "\n\thooksPath = " + hooks.string() + "\n");
    configure({{"agents",
                {{"honest", script("honest",
                                   "echo x > x.txt && git add x.txt && git commit -q -m x "
                                   "-m \"$COCODE_READY_MARKER\"")}}},
               {"check", {{"verify", {{{"name", "true"}, {"run", "true"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(dispatch_as_user("clean 1 --force").exit_code, 0);
    EXPECT_FALSE(fs::exists(trap_ran_)) << read_text(trap_ran_);
    as_user("git status --short");
    EXPECT_TRUE(fs::exists(trap_ran_)) << "the trap is armed: the user's git runs it";
}

// The agent changed its lockfile and setup: its commit's environment is built to judge it. The
// build tries to poison the base's stored environment and its manifest, and leaves an fsmonitor
// in its clone's configuration. The next run on the base gets the base's environment as it was
// built, with no notice that anything changed, and nothing the build left runs on the host.
TEST_F(Sandbox, ABuildFromAnAgentsCommitChangesNothingAnotherRunSees) {
    write_text(repo_ / "requirements.txt", "a==1\n");
    write_text(repo_ / "setup.sh", "mkdir -p deps && echo original > deps/shared.txt\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    const std::string store = quote(store_.string()), trap = (dir_ / "trap.sh").string();
    const std::string poison =
        "mkdir -p deps && echo mine > deps/shared.txt\n"
        "for t in " +
        store +
        "/*/tree/deps; do echo poisoned > \"$t/shared.txt\"; done 2>/dev/null || true\n"
        "for m in " +
        store +
        "/*/manifest.json; do echo '{}' > \"$m\"; done 2>/dev/null || true\n"
        "git config core.fsmonitor " +
        trap + "\n";
    const std::string poisoner =
        "echo 'a==2' > requirements.txt\n"
        "printf '%s' " +
        quote(poison) +
        " > setup.sh\n"
        "git add -A && git commit -q -m lock -m \"$COCODE_READY_MARKER\"\n";
    const std::string reader =
        "cat deps/shared.txt > \"$JRUN_RUN_FOLDER/seen.txt\"\n"
        "echo r > r.txt && git add r.txt && git commit -q -m r "
        "-m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents",
                {{"poisoner", script("poisoner", poisoner)}, {"reader", script("reader", reader)}}},
               {"environment", {{"setup", {"sh ./setup.sh"}}, {"paths", {"deps"}}}},
               {"check", {{"verify", {{{"name", "made"}, {"run", "test -s deps/shared.txt"}}}}}}});
    Shell first = dispatch_as_user("run 1 --agent poisoner");
    EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
    // The base's stored environment is as its build left it, and no manifest is the
    // build's (it wrote its own tree, and nothing else).
    const std::string base_key =
        run::read_run_info(only_run().folder)->get("environment_key").value_or("");
    ASSERT_EQ(base_key.size(), 24u);
    EXPECT_EQ(read_text(store_ / base_key / "tree/deps/shared.txt"), "original\n");
    int stored = 0;
    for (const auto& entry : fs::directory_iterator(store_)) {
        if (!fs::exists(entry.path() / "manifest.json")) continue;
        ++stored;
        EXPECT_NE(read_text(entry.path() / "manifest.json"), "{}\n") << entry.path();
    }
    EXPECT_EQ(stored, 2) << "the base's and the poisoner's commit's";
    Shell second = dispatch_as_user("run 2 --agent reader");
    EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
    const std::string said = second.out + second.err;
    EXPECT_EQ(said.find("changed"), std::string::npos) << said;
    EXPECT_EQ(said.find("building"), std::string::npos)
        << "the base's was taken, not rebuilt: " << said;
    for (const auto& r : runs()) {
        const json check = json::parse(read_text(r.folder / "check.json"));
        std::string setup;
        for (const auto& item : check["checks"])
            if (item["id"] == "setup") setup = item["reason"];
        if (r.agent == "poisoner") {
            // Its commit's own environment was built, its setup carried out.
            EXPECT_NE(setup.find("built for this commit: requirements.txt changed"),
                      std::string::npos)
                << setup;
            continue;
        }
        EXPECT_EQ(read_text(r.folder / "seen.txt"), "original\n");
        EXPECT_EQ(check["verdict"], "PASS") << setup;
    }
    EXPECT_FALSE(fs::exists(trap_ran_)) << read_text(trap_ran_);
}

// The action's sandbox step on a runner whose kernel gives no user namespaces (a container, a
// locked-down runner; here, bubblewrap's own --disable-userns around the step): `auto` stops the
// job with one error, `none` goes on only because it says so, and says what it gives up.
TEST_F(Sandbox, TheActionStopsWhereNoSandboxCanBeMadeUnlessToldNone) {
    const std::string step = std::string(COCODE_SOURCE_DIR) + "/github-action/scripts/sandbox";
    const fs::path output = dir_ / "output";
    write_text(output, "");
    auto in_runner = [&](const std::string& mode, bool namespaces) {
        const std::string wrap =
            namespaces
                ? ""
                : "bwrap --unshare-user --disable-userns --ro-bind / / --dev /dev "
                  "--proc /proc --bind " +
                      quote(dir_.path().string()) + " " + quote(dir_.path().string()) + " -- ";
        return sh("GITHUB_OUTPUT=" + quote(output.string()) + " " + wrap + quote(step) + " " + mode,
                  dir_.path());
    };
    Shell here = in_runner("auto", true);
    EXPECT_EQ(here.exit_code, 0) << here.out << here.err;
    EXPECT_EQ(read_text(output), "mode=auto\n");
    write_text(output, "");
    // Taking user namespaces away needs them here: a chroot (or a container) has none to give
    // (the kernel refuses a chrooted process a user namespace), and root's sandbox needs none.
    if (sh("unshare -U true", dir_.path()).exit_code != 0)
        GTEST_SKIP() << "no user namespace here (a chroot or a container): the step's refusal "
                        "is tested where one can be taken away";
    Shell refused = in_runner("auto", false);
    EXPECT_EQ(refused.exit_code, 3) << refused.out << refused.err;
    EXPECT_NE(refused.out.find("::error title=cocode sandbox::no sandbox can be made"),
              std::string::npos)
        << refused.out;
    EXPECT_EQ(read_text(output), "") << "no mode for the steps after";
    Shell none = in_runner("none", false);
    EXPECT_EQ(none.exit_code, 0) << none.err;
    EXPECT_NE(none.out.find("no protection at all"), std::string::npos) << none.out;
    EXPECT_EQ(read_text(output), "mode=none\n");
}

// The agent points its worktree's `.git` at a git folder of its own whose configuration runs
// a filter on every file (git status would run it) and whose hooks folder would take the
// hook. cocode's check, cocode-check and the next round never run it on the host: their git
// reads the main repository, and what the worktree holds is asked of git in the sandbox.
TEST_F(Sandbox, AWorktreeWhoseGitFolderIsTheAgentsRunsNothingOnTheHost) {
    write_text(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    const std::string trap = (dir_ / "trap.sh").string();
    const std::string agent =
        "sed -i 's/a - b/a + b/' calc.py\n"
        "git commit -q --allow-empty -am 'Fix add()' -m \"$COCODE_READY_MARKER\"\n"
        "real=$(git rev-parse --git-dir); common=$(git rev-parse --git-common-dir)\n"
        "mkdir -p .evil/objects/info .evil/info .evil/hooks\n"
        "ln -s \"$common/refs\" .evil/refs\n"
        "echo \"$common/objects\" > .evil/objects/info/alternates\n"
        "cp \"$real/HEAD\" \"$real/index\" .evil/\n"
        "printf '#!/bin/sh\\n" +
        trap +
        "\\ncat\\n' > .evil/clean.sh && chmod +x .evil/clean.sh\n"
        "printf '[filter \"x\"]\\n\\tclean = %s/.evil/clean.sh\\n[core]\\n\\tfsmonitor = " +
        trap +
        "\\n' \"$PWD\" > .evil/config\n"
        "echo '* filter=x' > .evil/info/attributes\n"
        "printf '#!/bin/sh\\n" +
        trap +
        "\\n' > .evil/hooks/post-checkout\n"
        "chmod +x .evil/hooks/post-checkout\n"
        "echo \"gitdir: $PWD/.evil\" > .git\n"
        "touch -d 2001-01-01 calc.py\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}},
               {"check",
                {{"verify",
                  {{{"name", "add"},
                    {"run", "python3 -c 'from calc import add; assert add(2, 3) == 5'"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const run::RunRecord first = only_run();
    const json check = json::parse(read_text(first.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "PASS") << check.dump(2);
    Shell again = as_user(quote(tool_path("cocode-check").string()) + " --issue 1 --agent hostile");
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_FALSE(fs::exists(trap_ran_)) << read_text(trap_ran_);
    // The trap is armed: git run there as the agent left it does run it.
    sh("git status --short >/dev/null 2>&1", first.worktree);
    EXPECT_TRUE(fs::exists(trap_ran_)) << "the trap the agent left works where git reads it";
    fs::remove(trap_ran_);
    // The next round starts from a repository of cocode's making, and the trap set again at
    // its end is not run either.
    Shell round = dispatch_as_user("continue 1 --agent hostile -m 'once more'");
    EXPECT_EQ(round.exit_code, 0) << round.out << round.err;
    EXPECT_FALSE(fs::exists(trap_ran_)) << read_text(trap_ran_);
}

// The agent rewrites the object of the base's test in every object store it can name, keeping
// its id (`exit 0`), and leaves add() broken; moves main and a person's branch in every git it
// can name, by git and by writing the ref file; and leaves its git folder a config, a
// config.worktree and a commondir that run a trap. Its repository is its own: the main
// repository's objects and branches are as they were and `git fsck` finds nothing, the verify
// runs the real test (FAIL), cocode takes its branch back, and the host runs no trap.
TEST_F(Sandbox, AnAgentWritesItsOwnBranchAndNothingElse) {
    write_text(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
    write_text(repo_ / "test_calc.sh",
               "python3 -c 'from calc import add; assert add(2, 3) == 5'\n");
    sh_ok("git add -A && git commit -q -m base && git branch victim", repo_);
    const std::string victim = sh_ok("git rev-parse victim", repo_);
    const std::string blob = sh_ok("git rev-parse main:test_calc.sh", repo_).substr(0, 40);
    const std::string main_git = quote((repo_ / ".git").string());
    const std::string agent =
        "echo touched > notes.txt\n"
        "git add notes.txt && git commit -q -m 'Touch notes' -m \"$COCODE_READY_MARKER\"\n"
        "mine=$(git rev-parse HEAD); own=$(git rev-parse --absolute-git-dir)\n"
        "for g in \"$own\" \"$(git rev-parse --git-common-dir)\" " +
        main_git +
        "; do\n"
        "  git --git-dir=\"$g\" update-ref refs/heads/main $mine 2>/dev/null || true\n"
        "  git --git-dir=\"$g\" update-ref refs/heads/victim $mine 2>/dev/null || true\n"
        "  echo $mine 2>/dev/null > \"$g/refs/heads/victim\" || true\n"
        "done\n"
        "for o in " +
        main_git +
        "/objects $(cat \"$own/objects/info/alternates\" 2>/dev/null); do\n"
        "  f=\"$o/" +
        blob.substr(0, 2) + "/" + blob.substr(2) +
        "\"; chmod u+w \"$f\" 2>/dev/null || true\n"
        "  python3 -c 'import sys, zlib; d = b\"exit 0\\n\"; "
        "open(sys.argv[1], \"wb\").write(zlib.compress(b\"blob %d\\0\" % len(d) + d))' \"$f\" "
        "2>/dev/null || true\n"
        "done\n"
        "mkdir -p evil\n"
        "for f in \"$own/config\" \"$own/config.worktree\" evil/config; do\n"
        "  printf '[core]\\n\\tfsmonitor = %s\\n[extensions]\\n\\tworktreeConfig = true\\n' " +
        quote((dir_ / "trap.sh").string()) +
        " >> \"$f\"\n"
        "done\n"
        "echo \"$PWD/evil\" > \"$own/commondir\"\n"
        "touch -d 2001-01-01 calc.py\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}},
               {"check", {{"verify", {{{"name", "test"}, {"run", "sh test_calc.sh"}}}}}}});
    const std::string main = sh_ok("git rev-parse main", repo_);
    Shell run = dispatch_as_user("run 1");
    const run::RunRecord r = only_run();
    ASSERT_TRUE(fs::exists(r.folder / "check.json")) << run.out << run.err;
    const json check = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "FAIL") << check.dump(2);
    int verified = 0;
    for (const auto& item : check["checks"])
        if (item["id"] == "verify") {
            ++verified;
            EXPECT_EQ(item["result"], "fail") << item.dump();
        }
    EXPECT_EQ(verified, 1) << check.dump(2);
    // Its branch came back: the commit it made, in the main repository.
    EXPECT_EQ(sh_ok("git log -1 --format=%s cocode/1-hostile", repo_), "Touch notes\n");
    EXPECT_EQ(sh_ok("git rev-parse cocode/1-hostile", repo_).substr(0, 40),
              check["head"].get<std::string>());
    Shell again = as_user(quote(tool_path("cocode-check").string()) + " --issue 1 --agent hostile");
    EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
    EXPECT_EQ(dispatch_as_user("clean 1 --force").exit_code, 0);

    EXPECT_EQ(sh_ok("git rev-parse main", repo_), main);
    EXPECT_EQ(sh_ok("git rev-parse victim", repo_), victim);
    EXPECT_EQ(sh_ok("git show main:test_calc.sh", repo_),
              "python3 -c 'from calc import add; assert add(2, 3) == 5'\n");
    Shell fsck = sh("git fsck --full --strict 2>&1", repo_);
    EXPECT_EQ(fsck.exit_code, 0) << fsck.out;
    EXPECT_FALSE(fs::exists(trap_ran_)) << read_text(trap_ran_);
}

// While it runs, the agent rewrites its run-info.yaml: its pid, group and start time become a
// process of the host's (one it cannot see: told here, as a lucky guess would have it), its
// dispatcher a pid long gone. `status`, which ends what is left of a run whose dispatcher is
// gone, and `stop` signal nothing of the host's: what cocode signals is decided from the
// record it keeps beside the run's seal.
TEST_F(Sandbox, ARewrittenRunInfoNeverMakesCocodeSignalAProcessOfTheHosts) {
    const Sentinel sentinel(sentinel_name());
    const auto target = process_info(sentinel.pid());
    ASSERT_TRUE(target.has_value());
    const std::string pid = std::to_string(sentinel.pid());
    const std::string agent =
        std::string(kAfterItsStart) +
        "f=$JRUN_RUN_FOLDER/run-info.yaml\n"
        "sed -e 's/^pid: .*/pid: " +
        pid + "/' -e 's/^pgid: .*/pgid: " + pid +
        "/' -e 's/^pid_start: .*/pid_start: " + std::to_string(target->start) +
        "/' -e 's/^pid_ino: .*/pid_ino: 0/' -e 's/^supervisor_pid: .*/supervisor_pid: "
        "2147483000/' -e 's/^supervisor_start: .*/supervisor_start: 1/' "
        "-e 's/^supervisor_ino: .*/supervisor_ino: 0/' \"$f\" > \"$f.new\"\n"
        "mv \"$f.new\" \"$f\"\n"
        "touch \"$JRUN_RUN_FOLDER/forged\"\n"
        "while :; do sleep 1; done\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}}});
    const fs::path folder = detach_until_forged();
    if (folder.empty()) return;
    // The forgery is there for anyone reading run-info.
    const auto forged = run::read_run_info(folder);
    ASSERT_TRUE(forged.ok());
    EXPECT_EQ(forged->get("pid"), pid);

    Shell status = dispatch_as_user("status");
    EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
    EXPECT_TRUE(sentinel.alive()) << "status signalled the host's process " << pid;
    // The run is still its dispatcher's, running.
    EXPECT_EQ(runs().front().status, run::RunStatus::running) << status.out << status.err;
    Shell stop = dispatch_as_user("stop 1");
    EXPECT_EQ(stop.exit_code, 0) << stop.out << stop.err;
    EXPECT_FALSE(run::is_active(runs().front().status));
    EXPECT_TRUE(sentinel.alive()) << "stop signalled the host's process " << pid;
}

// An agent makes taking its branch back hang: its repository's config becomes a FIFO (the
// sandboxed git serving its branch blocks opening it), then it moves its branch. That take is
// its own to slow; it holds nothing else. The other run's timeout ends it on time, and once the
// FIFO is fed, the branch comes back as the agent left it.
TEST_F(Sandbox, ATakeBackAnAgentHangsHoldsNoOtherRunsClock) {
    const std::string hang =
        "gd=$(git rev-parse --absolute-git-dir)\n"
        "branch=$(git symbolic-ref --short HEAD)\n"
        "git commit -q --allow-empty -m first\n"
        "git commit -q --allow-empty -m second\n"
        "second=$(git rev-parse HEAD)\n"
        "git update-ref \"refs/heads/$branch\" HEAD~1\n"
        "cp \"$gd/config\" \"$TMPDIR/config\"\n"
        "rm \"$gd/config\" && mkfifo \"$gd/config\"\n"
        "echo \"$second\" > \"$gd/refs/heads/$branch\"\n"
        "touch \"$JRUN_RUN_FOLDER/hanging\"\n"
        "while [ ! -e \"$JRUN_RUN_FOLDER/release\" ]; do sleep 0.05; done\n"
        // Fed: a reader waiting on the FIFO reads the config; later ones find the file.
        "exec 3<>\"$gd/config\"\n"
        "cp \"$TMPDIR/config\" \"$gd/config.new\" && mv \"$gd/config.new\" \"$gd/config\"\n"
        "cat \"$TMPDIR/config\" >&3\n"
        "exec 3>&-\n";
    json slow = script("slow", "sleep 60");
    slow["timeout"] = "2s";
    configure({{"agents", {{"hang", script("hang", hang)}, {"slow", slow}}},
               {"timeout", "120s"},
               {"grace", "300ms"}});
    Shell run = dispatch_as_user("run 1 --no-check --detach");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    std::map<std::string, run::RunRecord> by_agent;
    for (const auto& r : runs()) by_agent[r.agent] = r;
    ASSERT_TRUE(wait_until([&] { return fs::exists(by_agent["hang"].folder / "hanging"); }))
        << read_text(by_agent["hang"].folder / "agent-stderr.txt");
    // A take waits 60 s at most; the slow agent's 2 s are kept whatever the other's take does.
    const bool ended = wait_until(
        [&] {
            for (const auto& r : runs())
                if (r.agent == "slow") return r.status != run::RunStatus::running;
            return false;
        },
        std::chrono::seconds(30));
    write_text(by_agent["hang"].folder / "release", "");
    EXPECT_TRUE(ended) << "the slow agent's timeout waited on the other's take";
    Shell watch = dispatch_within(120, "status --watch");
    EXPECT_TRUE(ended_in_time(watch)) << watch.out << watch.err;
    for (const auto& r : runs()) by_agent[r.agent] = r;
    EXPECT_EQ(by_agent["slow"].reason, run::StopReason::timeout);
    EXPECT_EQ(by_agent["hang"].status, run::RunStatus::completed) << by_agent["hang"].error_summary;
    EXPECT_EQ(sh_ok("git log -1 --format=%s cocode/1-hang", repo_), "second\n");
}

// The repository belongs to another user (a CI runner's checkout), which the user trusts with
// `safe.directory` in their git configuration. The checkouts cocode makes without the user's
// configuration (an agent's attributes must name no filter of theirs) still honour that trust:
// the check's clean tree is made, and its verify passes.
TEST_F(Sandbox, ARepositoryTheUserTrustsWithSafeDirectoryIsChecked) {
    if (::geteuid() != 0) GTEST_SKIP() << "only root can give the repository to another user";
    // Its path, not `*`: libgit2 before 1.6 knows no `*`.
    write_text(home_ / ".gitconfig", "[safe]\n\tdirectory = " + repo_.string() + "\n");
    configure({{"agents",
                {{"fixer", script("fixer",
                                  "echo fixed > fixed.txt\n"
                                  "git add fixed.txt\n"
                                  "git commit -q -m fix -m \"$COCODE_READY_MARKER\"\n")}}},
               {"check", {{"verify", {{{"name", "fixed"}, {"run", "test -s fixed.txt"}}}}}}});
    sh_ok("chown 65534 .git", repo_);
    Shell run = dispatch_as_user("run 1");
    sh_ok("chown 0 .git", repo_);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    const run::RunRecord& r = only_run();
    ASSERT_TRUE(fs::exists(r.folder / "check.json")) << run.out << run.err;
    EXPECT_EQ(json::parse(read_text(r.folder / "check.json"))["verdict"], "PASS")
        << read_text(r.folder / "check.md");
}

// The agent owns what is in its git storage, HOME and /tmp, not its pair's folder that holds
// them. Before, it replaced its repository's folder with a link to the user's ~/.ssh and
// pointed its worktree at a git of its own whose fsmonitor prints what it finds there: the
// sandboxes cocode starts on that repository (the check's worktree item, clean's question)
// bound the link's target, and clean printed the hidden key.
TEST_F(Sandbox, AnAgentCannotMakeItsRepositoryALinkToTheHost) {
    const std::string hostile =
        "echo fixed > fixed.txt && git add fixed.txt\n"
        "git commit -q -m fix -m \"$COCODE_READY_MARKER\"\n"
        "pair=$(dirname \"$HOME\"); own=$(git rev-parse --absolute-git-dir)\n"
        "mkdir -p .evil && cp -r \"$own\"/* .evil/\n"
        "printf '#!/bin/sh\\ncat %s/git/id_test >&2\\nkill -9 $PPID\\n' \"$pair\" > "
        ".evil/hook.sh\n"
        "chmod +x .evil/hook.sh\n"
        "git config --file .evil/config core.fsmonitor \"$PWD/.evil/hook.sh\"\n"
        "echo \"gitdir: $PWD/.evil\" > .git\n"
        "{ mv \"$pair/git\" \"$pair/git.real\" && ln -s " +
        quote((home_ / ".ssh").string()) + " \"$pair/git\" && echo linked; } || echo refused\n";
    configure({{"agents", {{"hostile", script("hostile", hostile)}}},
               {"check", {{"verify", {{{"name", "fixed"}, {"run", "test -s fixed.txt"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    const run::RunRecord& r = only_run();
    EXPECT_EQ(read_text(r.folder / "agent-stdout.txt"), "refused\n");
    const fs::path pair = repo_ / ".cocode/sandboxes/1-hostile";
    EXPECT_FALSE(fs::is_symlink(pair / "git"));
    EXPECT_TRUE(fs::is_directory(fs::symlink_status(pair / "git")));
    // The work exists elsewhere too: clean asks the worktree's git about uncommitted work.
    sh_ok("git branch merged-copy cocode/1-hostile", repo_);
    Shell clean = dispatch_as_user("clean 1");
    EXPECT_EQ((clean.out + clean.err).find(secret_), std::string::npos) << clean.err;
    EXPECT_FALSE(secret_below(repo_ / ".cocode")) << "the secret in a run's files";
    EXPECT_NE(read_text(r.folder / "check.md").find("worktree"), std::string::npos);
}

// A round looks for the agent's CLI session in its HOME (gemini's session files hold their
// id) to resume it. The agent left a FIFO under that name, then a link to a file of the user's
// it cannot see: the dispatcher on the host waited on the FIFO for ever, and through the link
// told the agent (by resuming or not) whether the hidden file held the id. What is in the
// agent's HOME is read as data: no FIFO, no link.
TEST_F(Sandbox, ARoundReadsTheAgentsHomeAsData) {
    const fs::path bin = dir_ / "bin";
    fs::create_directories(bin);
    write_text(home_ / ".docker/config.json", "{\"auth\": \"abcdef12-3333-4444\"}\n");
    // A gemini CLI of the agent's making: the session it reports, a commit, and what it leaves.
    write_text(
        bin / "gemini",
        "#!/bin/sh\ncat > /dev/null\n"
        "echo \"args: $*\" >> \"$JRUN_RUN_FOLDER/args.txt\"\n"
        "echo '{\"type\":\"init\",\"session_id\":\"abcdef12-3333-4444\",\"model\":\"x\"}'\n"
        "git commit -q --allow-empty -m \"round $(date +%s%N)\" -m \"$COCODE_READY_MARKER\"\n"
        "d=\"$HOME/.gemini/tmp/x\" && mkdir -p \"$d\" && f=\"$d/session-a-abcdef12.json\"\n"
        "if [ -e \"$(dirname \"$0\")/real\" ]; then rm -f \"$f\"; "
        "echo '{\"sessionId\": \"abcdef12-3333-4444\"}' > \"$f\"\n"
        "elif [ -e \"$(dirname \"$0\")/link\" ]; then rm -f \"$f\"; ln -s " +
            quote((home_ / ".docker/config.json").string()) +
            " \"$f\"; else rm -f \"$f\"; mkfifo \"$f\"; fi\n"
            "echo '{\"type\":\"result\",\"status\":\"success\"}'\n");
    fs::permissions(bin / "gemini", fs::perms::owner_all, fs::perm_options::add);
    configure({{"agents", {{"g", {{"type", "gemini"}}}}}, {"review", {{"max_rounds", 6}}}});
    const std::string with = "PATH=" + quote(bin.string()) + ":\"$PATH\" GEMINI_API_KEY=fake ";
    const std::string dispatcher = quote(tool_path("cocode-dispatch").string());
    Shell first = as_user(with + dispatcher + " run 1 --no-check");
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    Shell second =
        as_user(with + "timeout -k 5 60 " + dispatcher + " continue 1 -m again --no-check");
    ASSERT_NE(second.exit_code, 124) << "the round waited on the agent's FIFO";
    EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
    write_text(bin / "link", "");
    Shell third = as_user(with + dispatcher + " continue 1 -m again --no-check");
    EXPECT_EQ(third.exit_code, 0) << third.out << third.err;
    Shell fourth = as_user(with + dispatcher + " continue 1 -m again --no-check");
    EXPECT_EQ(fourth.exit_code, 0) << fourth.out << fourth.err;
    // The last round's session file was a link to the user's hidden file, which holds the id:
    // it was not followed, so the session was not resumed.
    std::string args;
    for (const auto& r : runs()) args += read_text(r.folder / "args.txt");
    EXPECT_EQ(args.find("--resume"), std::string::npos) << args;
    // The premise: a session file of its own, holding the id, is resumed.
    write_text(bin / "real", "");
    EXPECT_EQ(as_user(with + dispatcher + " continue 1 -m again --no-check").exit_code, 0);
    Shell last = as_user(with + dispatcher + " continue 1 -m again --no-check");
    EXPECT_EQ(last.exit_code, 0) << last.out << last.err;
    EXPECT_NE(read_text(runs().back().folder / "args.txt").find("--resume abcdef12-3333-4444"),
              std::string::npos)
        << read_text(runs().back().folder / "args.txt");
}

// The agent swaps its repository for a git bundle of its own making, whose branch holds a
// READY commit it never committed in its repository. The swap is refused (the folder that holds
// its repository is not its to write: it only empties it), and were it not, cocode takes the
// branch back over git's transport (a file:// URL: the serving side in the sandbox); a path
// made the host's git read the bundle itself, outside the sandbox and its checks, and take
// its commit.
TEST_F(Sandbox, ABundleInPlaceOfItsRepositoryIsNeverReadOnTheHost) {
    const std::string hostile =
        "gd=$(git rev-parse --absolute-git-dir)\n"
        "branch=$(git symbolic-ref --short HEAD)\n"
        "git clone -q --no-local \"$gd\" \"$TMPDIR/c\"\n"
        "cd \"$TMPDIR/c\" && git checkout -q --detach\n"
        "git -c core.hooksPath=/dev/null commit -q --allow-empty -m bundled "
        "-m \"$COCODE_READY_MARKER\"\n"
        "git branch -f \"$branch\" HEAD\n"
        "git bundle create -q \"$TMPDIR/b.bundle\" \"$branch\"\n"
        "{ rm -rf \"$gd\" && cp \"$TMPDIR/b.bundle\" \"$gd\" && echo swapped; } || echo refused\n";
    configure({{"agents", {{"hostile", script("hostile", hostile)}}}});
    Shell run = dispatch_as_user("run 1 --no-check");
    const run::RunRecord& r = only_run();
    EXPECT_EQ(read_text(r.folder / "agent-stdout.txt"), "refused\n");
    EXPECT_EQ(sh_ok("git log -1 --format=%s cocode/1-hostile", repo_).find("bundled"),
              std::string::npos)
        << "the bundle's commit was taken";
    EXPECT_EQ(r.ready_commit, "") << run.out << run.err;
    EXPECT_NE(r.error_summary.find("taking cocode/1-hostile back"), std::string::npos)
        << r.error_summary << "\n"
        << run.out << run.err;
}

// The agent names another issue, agent, branch and base in its run-info.yaml. A run's issue,
// agent, branch and base are cocode's record beside the seal: status lists it under its own, and
// `clean 2` (the issue it named) leaves its worktree and branch alone.
TEST_F(Sandbox, AnIssueRewrittenInRunInfoMovesTheRunNowhere) {
    const std::string hostile =
        std::string(kAfterItsStart) +
        "sed -i -e 's/^issue: .*/issue: 2/' -e 's/^agent: .*/agent: honest/' "
        "-e 's|^branch: .*|branch: \"--output=forged\"|' -e 's|^base_commit: .*|base_commit: "
        "\"--output=forged\"|' \"$JRUN_RUN_FOLDER/run-info.yaml\"\n"
        "echo x > x.txt && git add x.txt && git commit -q -m x\n";
    configure({{"agents", {{"hostile", script("hostile", hostile)}}}});
    Shell run = dispatch_as_user("run 1 --no-check");
    const run::RunRecord r = only_run();
    ASSERT_NE(read_text(r.folder / "run-info.yaml").find("issue: 2"), std::string::npos)
        << "the agent rewrote it";
    EXPECT_EQ(r.issue, 1);
    EXPECT_EQ(r.agent, "hostile");
    // Its branch and base too, as the dashboard and status show them.
    EXPECT_EQ(r.branch, "cocode/1-hostile");
    EXPECT_EQ(r.base_commit, sh_ok("git rev-parse main", repo_).substr(0, 40));
    const Shell status = dispatch_as_user("status");
    EXPECT_NE(status.out.find("hostile"), std::string::npos) << status.out;
    EXPECT_EQ(status.out.find("honest"), std::string::npos) << status.out;
    EXPECT_EQ(dispatch_as_user("clean 2 --force").exit_code, 2) << "no run is issue 2's";
    EXPECT_TRUE(fs::exists(repo_ / ".cocode/worktrees/1-hostile/x.txt"));
    EXPECT_NE(sh_ok("git branch --list cocode/1-hostile", repo_), "");
    EXPECT_EQ(dispatch_as_user("clean 1 --force").exit_code, 0);
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/worktrees/1-hostile"));
}

// The user's git knows a filter (git-lfs is one); the agent's commit asks for it on every file
// with a .gitattributes of its own. The host's checkouts of the agent's commit — the check's
// clean tree — read no configuration of the user's, so the filter never runs on the host.
TEST_F(Sandbox, AFilterTheAgentsAttributesNameNeverRunsOnTheHost) {
    write_text(dir_ / "smudge.sh",
               "#!/bin/sh\necho ran >> " + quote(trap_ran_.string()) + "\ncat\n");
    fs::permissions(dir_ / "smudge.sh", fs::perms::owner_all, fs::perm_options::add);
    write_text(home_ / ".gitconfig", "[filter \"trap\"]\n\tsmudge = " +
                                         (dir_ / "smudge.sh").string() + "\n\tclean = cat\n");
    const std::string hostile =
        "printf '* filter=trap\\n' > .gitattributes\n"
        "echo data > data.txt\n"
        "git add .gitattributes data.txt\n"
        "git commit -q -m attributes -m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents", {{"hostile", script("hostile", hostile)}}},
               {"check", {{"verify", {{{"name", "read"}, {"run", "cat data.txt"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    const run::RunRecord& r = only_run();
    ASSERT_NE(r.ready_commit, "") << run.out << run.err;
    const json check = json::parse(read_text(r.folder / "check.json"));
    bool verified = false;
    for (const auto& item : check["checks"])
        if (item["name"] == "verify: read") verified = item["result"] == "pass";
    EXPECT_TRUE(verified) << check.dump(2);
    EXPECT_FALSE(fs::exists(trap_ran_)) << "the user's filter ran on the host";
    Shell again = as_user(quote(tool_path("cocode-check").string()) + " --issue 1 --agent hostile");
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_FALSE(fs::exists(trap_ran_)) << "the user's filter ran on the host";
    // The premise: the user's own git, checking the agent's commit out, runs the filter.
    sh_ok(env() + "git clone -q -b cocode/1-hostile . " + quote((dir_ / "look").string()), repo_);
    EXPECT_TRUE(fs::exists(trap_ran_));
}

// While it runs, the agent writes its run as ended and passed: run-info says completed, and
// a check.json saying PASS and a run-end.json lie in its folder; its commit never comes. cocode
// still shows it running, and once it has ended (no check asked for), nothing it planted is
// left: the scorecard counts no PASS.
TEST_F(Sandbox, AStatusAndAVerdictTheAgentWroteCountForNothing) {
    const std::string agent =
        std::string(kAfterItsStart) +
        "f=$JRUN_RUN_FOLDER/run-info.yaml\n"
        "sed -e 's/^status: .*/status: completed/' -e 's/^exit_code: .*/exit_code: 0/' "
        "\"$f\" > \"$f.new\" && mv \"$f.new\" \"$f\"\n"
        "printf '{\"verdict\": \"PASS\", \"run_id\": \"%s\", \"head\": \"%s\", \"checks\": []}\\n' "
        "\"$JRUN_ID\" \"$(git rev-parse HEAD)\" > \"$JRUN_RUN_FOLDER/check.json\"\n"
        "echo '# PASS' > \"$JRUN_RUN_FOLDER/check.md\"\n"
        "touch \"$JRUN_RUN_FOLDER/forged\"\n"
        "while [ ! -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n"
        "exit 1\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}}});
    const fs::path folder = detach_until_forged();
    if (folder.empty()) return;
    ASSERT_EQ(run::read_run_info(folder)->get("status"), "completed");
    EXPECT_EQ(runs().front().status, run::RunStatus::running);
    Shell status = dispatch_as_user("status");
    EXPECT_NE(status.out.find("running"), std::string::npos) << status.out;
    EXPECT_EQ(status.out.find("PASS"), std::string::npos) << "its planted verdict: " << status.out;
    Shell scored = dispatch_as_user("report --by agent --json");
    ASSERT_EQ(scored.exit_code, 0) << scored.err;
    const json scored_card = json::parse(scored.out);
    for (const auto& row : scored_card["rows"])
        EXPECT_EQ(row["passed"], 0) << "its planted verdict: " << scored.out;

    write_text(folder / "go", "");
    Shell watch = dispatch_as_user("status --watch");
    EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
    const run::RunRecord r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::failed);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_FALSE(fs::exists(folder / "check.json")) << read_text(folder / "check.json");
    EXPECT_FALSE(fs::exists(folder / "check.md"));
    Shell report = dispatch_as_user("report --by agent --json");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const json scorecard = json::parse(report.out);
    for (const auto& row : scorecard["rows"]) EXPECT_EQ(row["passed"], 0) << report.out;
}

// The agent makes its run-info.yaml a FIFO (a reader that opens it waits for ever; cocode's
// readers refuse it) to hide its run. cocode lists it from its own record all the same: status
// shows it running, and once it has ended, its end is recorded and clean finds it.
TEST_F(Sandbox, ARunInfoMadeAFifoHidesNoRun) {
    const std::string agent =
        std::string(kAfterItsStart) +
        "rm \"$JRUN_RUN_FOLDER/run-info.yaml\" && mkfifo \"$JRUN_RUN_FOLDER/run-info.yaml\"\n"
        "touch \"$JRUN_RUN_FOLDER/forged\"\n"
        "while [ ! -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}}});
    const fs::path folder = detach_until_forged();
    if (folder.empty()) return;
    Shell status = dispatch_as_user("status");
    EXPECT_NE(status.out.find("hostile"), std::string::npos) << status.out << status.err;
    EXPECT_NE(status.out.find("running"), std::string::npos) << status.out << status.err;
    write_text(folder / "go", "");
    Shell watch = dispatch_within(60, "status --watch");
    EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
    const run::RunRecord r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::completed);
    EXPECT_EQ(r.agent, "hostile");
    EXPECT_EQ(dispatch_as_user("clean 1 --force").exit_code, 0);
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/worktrees/1-hostile"));
}

// The agent takes the locks cocode's own writes to its run folder and to the runs' bus take,
// and holds them while it runs; another agent of the same dispatch ends meanwhile. Its end is
// recorded, and the holder's timeout still ends it: a lock an agent can hold is waited on for
// a moment, then written past (appends are whole lines, rewrites whole files renamed).
TEST_F(Sandbox, LocksAnAgentHoldsNeverStallItsDispatcher) {
    const std::string hostile =
        "exec 7>>\"$JRUN_RUN_FOLDER/run-info.yaml.lock\" 8>>\"$JRUN_RUN_FOLDER/events.jsonl\" "
        "9>>\"$JRUN_MESSAGE_BUS\"\n"
        "flock 7; flock 8; flock 9\n"
        // The lock of cocode's own record of the run, beside the seals: out of its sight.
        "s=\"$JRUN_RUNS_DIR/../seals/$JRUN_ID.state.lock\"\n"
        "if [ -e \"$s\" ]; then exec 6< \"$s\"; flock 6; fi\n"
        // The space kept for its end, grown to a terabyte (a sparse file).
        "rm -f \"$JRUN_RUN_FOLDER/.run-end.reserved\"\n"
        "truncate -s 1T \"$JRUN_RUN_FOLDER/.run-end.reserved\"\n"
        "touch \"$JRUN_RUN_FOLDER/holding\"\n"
        "while :; do sleep 1; done\n";
    // It cannot see the other run's folder: the test tells it when the locks are held.
    const std::string honest =
        "while [ ! -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n"
        "git commit -q --allow-empty -m done -m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents",
                {{"hostile", script("hostile", hostile)}, {"honest", script("honest", honest)}}},
               {"timeout", "5s"},
               {"grace", "300ms"}});
    Shell run = dispatch_as_user("run 1 --no-check --detach");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    std::map<std::string, run::RunRecord> by_agent;
    for (const auto& r : runs()) by_agent[r.agent] = r;
    ASSERT_EQ(by_agent.size(), 2u);
    ASSERT_TRUE(wait_until([&] { return fs::exists(by_agent["hostile"].folder / "holding"); }))
        << read_text(by_agent["hostile"].folder / "agent-stderr.txt");
    write_text(by_agent["honest"].folder / "go", "");
    // Bounded here, not by ctest: a dispatcher that waits on the agent's lock never ends.
    Shell watch = dispatch_within(90, "status --watch");
    ASSERT_TRUE(ended_in_time(watch))
        << "the dispatcher stalled on the agent's locks: " << watch.out << watch.err;
    for (const auto& r : runs()) by_agent[r.agent] = r;
    EXPECT_TRUE(fs::exists(by_agent["hostile"].folder / "holding"));
    EXPECT_EQ(by_agent["hostile"].reason, run::StopReason::timeout)
        << by_agent["hostile"].error_summary;
    EXPECT_EQ(by_agent["honest"].status, run::RunStatus::completed);
    // Their events landed past the locks, in each run's record and on the bus.
    const auto has_event = [](const fs::path& file, const std::string& run_id,
                              const std::string& type) {
        std::istringstream lines(read_text(file));
        for (std::string line; std::getline(lines, line);) {
            const json event = json::parse(line, nullptr, false);
            if (event.is_object() && event.value("run_id", "") == run_id &&
                event.value("type", "") == type)
                return true;
        }
        return false;
    };
    // The end is kept beside the seal first (what `status` reads), then written past each
    // lock the agent holds, a moment each: the events may land just after `status --watch`.
    for (const auto& entry : by_agent) {
        const std::string& agent = entry.first;
        const run::RunRecord& r = entry.second;  // named: clang 14 captures no binding
        const std::string end = agent == "honest" ? "RUN_STOP" : "RUN_CRASH";
        EXPECT_TRUE(wait_until([&] {
            return has_event(r.folder / "events.jsonl", r.run_id, end) &&
                   has_event(repo_ / ".cocode/runs/events.jsonl", r.run_id, end);
        })) << agent;
    }
}

// cocode's own locks are out of every agent's reach. An agent that holds every file it can
// open in the environment store and in the git folder (where the store's builds, git's exclude
// file and the clean trees take theirs) stalls neither the next run nor the build of an
// environment: before, it held the store's `<key>.building` and `.git/cocode/exclude.held`,
// and every later `run` waited on them for ever.
TEST_F(Sandbox, NoLockOfCocodesIsInAnAgentsReach) {
    const std::string hostile =
        "for f in $(find " + quote(store_.string()) +
        " \"$JRUN_RUNS_DIR/../../.git\" -type f); do\n"
        "  ( exec 3<\"$f\" && flock -n 3 && echo \"$f\" >> \"$JRUN_RUN_FOLDER/held.txt\" &&\n"
        "    while :; do sleep 1; done ) 2>/dev/null &\n"
        "done\n"
        "sleep 1\n"  // its holders have their locks (or gave up)
        "touch \"$JRUN_RUN_FOLDER/holding\"\n"
        "while [ ! -e \"$JRUN_RUN_FOLDER/release\" ]; do sleep 0.05; done\n";
    const std::string honest = "git commit -q --allow-empty -m done -m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents",
                {{"hostile", script("hostile", hostile)}, {"honest", script("honest", honest)}}},
               {"timeout", "120s"},
               {"environment",
                {{"setup", {"mkdir -p deps && echo made > deps/made.txt"}}, {"paths", {"deps"}}}}});
    Shell first = dispatch_as_user("run 1 --agent hostile --no-check --detach");
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const fs::path folder = only_run().folder;
    ASSERT_TRUE(wait_until([&] { return fs::exists(folder / "holding"); }))
        << read_text(folder / "agent-stderr.txt");
    const std::string held = read_text(folder / "held.txt");
    EXPECT_EQ(held.find(".building"), std::string::npos) << held;
    EXPECT_EQ(held.find(".held"), std::string::npos) << held;
    // The base's environment, unfinished (a build killed before its manifest): the next run
    // builds it again, under the build's lock.
    std::string key;
    for (const auto& entry : fs::directory_iterator(store_))
        if (fs::exists(entry.path() / "manifest.json")) key = entry.path().filename().string();
    ASSERT_FALSE(key.empty());
    sh_ok("chmod -R u+w " + quote((store_ / key).string()) + " && rm " +
              quote((store_ / key / "manifest.json").string()),
          repo_);
    // Bounded here, not by ctest: a run that waits on the agent's lock never ends.
    Shell second = dispatch_within(90, "run 2 --agent honest --no-check");
    write_text(folder / "release", "");
    EXPECT_EQ(second.exit_code, 0)
        << "the run stalled on the agent's lock: " << second.out << second.err;
    EXPECT_NE((second.out + second.err).find("building"), std::string::npos)
        << second.out << second.err;
    EXPECT_TRUE(fs::exists(store_ / key / "manifest.json"));
    Shell watch = dispatch_within(90, "status --watch");
    EXPECT_TRUE(ended_in_time(watch)) << watch.out << watch.err;
}

// Two agents at once: one looks at what it can see of the other's run — its folder (its
// prompt, its egress socket), its HOME (a CLI's login), its worktree (uncommitted work), the
// seals and their locks. It sees its own folder, the bus and nothing else of them.
TEST_F(Sandbox, AnAgentSeesNothingOfAnotherRun) {
    const std::string peek =
        "cd \"$JRUN_RUNS_DIR/..\"\n"
        "ls -A runs sandboxes seals worktrees > \"$TMPDIR/seen\" 2>&1 || true\n"
        "cat sandboxes/1-other/home/login runs/*/prompt.md worktrees/1-other/wip.txt "
        ">> \"$TMPDIR/seen\" 2>&1 || true\n"
        "cp \"$TMPDIR/seen\" \"$JRUN_RUN_FOLDER/seen\"\n";
    const std::string other =
        "echo secret-login-of-other > \"$HOME/login\"\n"
        "echo uncommitted-work-of-other > wip.txt\n"
        "touch \"$JRUN_RUN_FOLDER/other-started\"\n"
        "while [ ! -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n";
    const std::string wait_for_other =
        "until ls \"$JRUN_RUNS_DIR\"/../runs/*/other-started > /dev/null 2>&1 || "
        "[ -e \"$JRUN_RUN_FOLDER/go\" ]; do sleep 0.05; done\n";
    configure(
        {{"agents",
          {{"other", script("other", other)}, {"peek", script("peek", wait_for_other + peek)}}}});
    Shell run = dispatch_as_user("run 1 --detach --no-check");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    std::map<std::string, run::RunRecord> by_agent;
    for (const auto& r : runs()) by_agent[r.agent] = r;
    ASSERT_TRUE(wait_until([&] { return fs::exists(by_agent["other"].folder / "other-started"); }));
    // The peek cannot see the other's mark: it is told to go on.
    write_text(by_agent["peek"].folder / "go", "");
    ASSERT_TRUE(wait_until([&] { return fs::exists(by_agent["peek"].folder / "seen"); }));
    write_text(by_agent["other"].folder / "go", "");
    EXPECT_EQ(dispatch_as_user("status --watch").exit_code, 0);
    const std::string seen = read_text(by_agent["peek"].folder / "seen");
    EXPECT_EQ(seen.find("secret-login-of-other"), std::string::npos) << seen;
    EXPECT_EQ(seen.find(by_agent["other"].run_id), std::string::npos) << seen;
    EXPECT_EQ(seen.find("uncommitted-work-of-other"), std::string::npos) << seen;
    EXPECT_NE(seen.find("sandboxes:\n1-peek\n\nseals:\n\nworktrees:\n1-peek\n"), std::string::npos)
        << seen;
    EXPECT_EQ(seen.find(".state"), std::string::npos) << seen;
    EXPECT_EQ(seen.find(by_agent["peek"].run_id + ".json"), std::string::npos) << seen;
    EXPECT_NE(seen.find(by_agent["peek"].run_id), std::string::npos) << seen;
}

// The issue's title is its author's text, and the agent gets it as COCODE_ISSUE_TITLE: a title
// that names a file of the user's secrets, or another run's folder, shows neither (the sandbox
// brought back what any variable of the agent's named: the key read, the other run listed).
TEST_F(Sandbox, AnIssueTitleNamingAPathShowsNothingOfIt) {
    configure({{"agents", {{"first", script("first", "echo the-first-prompt > /dev/null\n")}}}});
    ASSERT_EQ(dispatch_as_user("run 2 --no-check").exit_code, 0);
    const std::string other = runs().at(0).folder.string();
    const std::string peek =
        "cat \"$COCODE_ISSUE_TITLE\" > \"$JRUN_RUN_FOLDER/seen\" 2>&1 || true\n"
        "ls -A \"$COCODE_ISSUE_TITLE\" >> \"$JRUN_RUN_FOLDER/seen\" 2>&1 || true\n";
    configure({{"agents", {{"peek", script("peek", peek)}}}});
    for (const std::string& title : {(home_ / ".ssh/id_test").string(), other}) {
        SCOPED_TRACE(title);
        json issue = json::parse(read_text(repo_ / ".cocode/issues/1.json"));
        issue["title"] = title;
        write_text(repo_ / ".cocode/issues/1.json", issue.dump());
        dispatch_as_user("clean 1 --force");  // the last title's run, if any
        Shell run = dispatch_as_user("run 1 --no-check");
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const std::string seen = seen_by_the_run_of(1);
        EXPECT_EQ(seen.find(secret_), std::string::npos) << seen;
        EXPECT_EQ(seen.find("prompt.md"), std::string::npos) << seen;
        EXPECT_NE(seen.find("No such file"), std::string::npos) << seen;
    }
}

// The same of a variable of the configuration's, by where it leads: a link in HOME to the
// user's key, a shell's history, another pair's worktree (its uncommitted work). Each came back
// (the checks went by the path's spelling, and the worktrees' folder was set apart after them).
TEST_F(Sandbox, AVariableLeadingToASecretOrAnotherPairShowsNothingOfIt) {
    fs::create_symlink(home_ / ".ssh/id_test", home_ / "ca.pem");
    fs::create_directory_symlink(home_ / ".ssh", home_ / "sshlink");
    write_text(home_ / ".bash_history", "export TOKEN=typed-" + secret_ + "\n");
    // The same file by another name, outside HOME: a hard link is no link to follow.
    const fs::path other_name = home_.parent_path() / "history-by-another-name";
    fs::create_hard_link(home_ / ".bash_history", other_name);
    configure({{"agents", {{"other", script("other", "echo uncommitted-of-other > wip.txt\n")}}}});
    ASSERT_EQ(dispatch_as_user("run 2 --no-check").exit_code, 0);
    ASSERT_TRUE(fs::exists(repo_ / ".cocode/worktrees/2-other/wip.txt"));
    json peek = script("peek",
                       "for v in \"$V1\" \"$V2/id_test\" \"$V3\" \"$V4/wip.txt\" \"$V5\"; do\n"
                       "  cat \"$v\" >> \"$JRUN_RUN_FOLDER/seen\" 2>&1 || true\n"
                       "done\n");
    peek["env"] = {{"V1", (home_ / "ca.pem").string()},
                   {"V2", (home_ / "sshlink").string()},
                   {"V3", (home_ / ".bash_history").string()},
                   {"V4", (repo_ / ".cocode/worktrees/2-other").string()},
                   {"V5", other_name.string()}};
    configure({{"agents", {{"peek", peek}}}});
    ASSERT_EQ(dispatch_as_user("run 1 --no-check").exit_code, 0);
    const std::string seen = seen_by_the_run_of(1);
    EXPECT_EQ(seen.find(secret_), std::string::npos) << seen;
    EXPECT_EQ(seen.find("uncommitted-of-other"), std::string::npos) << seen;
    EXPECT_NE(seen.find("No such file"), std::string::npos) << "the agent looked: " << seen;
}

// Reading is denied by default too (docs/security.md, "The sandbox"). An agent, and the
// verify command its check runs, try what the host holds outside HOME: the token
// actions/checkout leaves in the main repository's .git/config and one in a remote's URL, an
// ignored .env in the main worktree, a GitHub App's key named by a relative path beside the
// clone, a runner's file elsewhere on the host (under /var). Each was read before; none is now,
// while what the agent needs still shows: its worktree, the main repository's objects (its
// repository borrows them: `git log` of the base works), the system's programs, and a folder
// the configuration names as `readable`.
TEST_F(Sandbox, AnAgentReadsNothingOfTheHostItWasNotGiven) {
    const std::string token = "ghs_" + secret_;
    sh_ok("git config http.https://github.com/.extraheader 'AUTHORIZATION: basic " + token +
              "' && git remote add mirror https://x-access-token:" + token + "@127.0.0.1:9/o/r.git",
          repo_);
    write_text(repo_ / ".gitignore", read_text(repo_ / ".gitignore") + ".env\n");
    sh_ok("git add .gitignore && git commit -q -m 'ignore .env'", repo_);
    write_text(repo_ / ".env", "API_KEY=env-" + secret_ + "\n");
    write_text(dir_ / "app-key.pem", "app-key-" + secret_ + "\n");
    // A runner's file elsewhere on the host, and a toolchain the configuration names.
    char runner_template[] = "/var/tmp/cocode-runner-XXXXXX";
    ASSERT_NE(::mkdtemp(runner_template), nullptr);
    const fs::path runner = runner_template, toolchain = runner / "toolchain";
    struct Removed {
        fs::path path;
        ~Removed() { fs::remove_all(path); }
    } removed{runner};
    write_text(runner / "credentials", "runner-" + secret_ + "\n");
    fs::create_directories(toolchain);
    write_text(toolchain / "VERSION", "toolchain-shown\n");
    const std::string paths =
        quote((repo_ / ".git/config").string()) + " " + quote((repo_ / ".env").string()) + " " +
        quote((dir_ / "app-key.pem").string()) + " ../../../../app-key.pem " +
        quote((runner / "credentials").string()) + " " + quote((toolchain / "VERSION").string());
    const std::string look = "for f in " + paths + "; do cat \"$f\" 2>&1 || true; done; " +
                             "git -C " + quote(repo_.string()) + " config --list 2>&1 || true; " +
                             "git log --format=base:%s -1 HEAD 2>&1 || true";
    configure({{"agents",
                {{"peek", script("peek", "{ " + look +
                                             "; } > \"$JRUN_RUN_FOLDER/seen\" 2>&1\n"
                                             "echo done > done.txt\n"
                                             "git add done.txt && git commit -q -m done -m "
                                             "\"$COCODE_READY_MARKER\"\n")}}},
               {"readable", {toolchain.string()}},
               {"check", {{"verify", {{{"name", "look"}, {"run", look + "; true"}}}}}}});
    Shell run = dispatch("run 1", env() + "COCODE_GITHUB_APP_PRIVATE_KEY_PATH=../app-key.pem ");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto& r = only_run();
    const std::string seen = seen_by_the_run_of(1);
    // What it needs shows: the base's commit through the borrowed objects, the toolchain.
    EXPECT_NE(seen.find("base:cocode config"), std::string::npos) << seen;
    EXPECT_NE(seen.find("toolchain-shown"), std::string::npos) << seen;
    EXPECT_NE(seen.find("No such file"), std::string::npos) << seen;
    // Nothing else: not in what the agent saw, nor in anything its check's verify printed.
    EXPECT_EQ(seen.find(secret_), std::string::npos) << seen;
    EXPECT_FALSE(secret_below(r.folder)) << "the verify command read a secret";
    const json check = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "PASS") << check.dump(2);

    // doctor names what the children may read besides, and the settings holding a credential
    // (by their names: never the token).
    Shell doctor = dispatch_as_user("doctor --json");
    EXPECT_EQ(doctor.out.find(secret_), std::string::npos) << doctor.out;
    std::map<std::string, json> rows;
    for (const auto& row : json::parse(doctor.out)) rows[row["check"]] = row;
    EXPECT_EQ(rows["sandbox reads"]["state"], "ok") << doctor.out;
    EXPECT_NE(rows["sandbox reads"]["detail"].get<std::string>().find(toolchain.string()),
              std::string::npos)
        << doctor.out;
    const std::string credentials = rows["repository credentials"].value("detail", "");
    EXPECT_EQ(rows["repository credentials"]["state"], "warning") << doctor.out;
    for (const char* setting : {"http.https://github.com/.extraheader", "remote.mirror.url"})
        EXPECT_NE(credentials.find(setting), std::string::npos) << credentials;
    EXPECT_EQ(credentials.find("remote.origin"), std::string::npos) << credentials;
}

// The same secrets under other names, and by the way of what the sandbox brings back for the
// agent's programs: a link on PATH that leads into the repository, a `bin` folder in the
// repository and one beside the clone (its prefix showed the clone's neighbours), HOME spelt
// with a trailing slash (all of it showed), a linked worktree's own settings, and the App's key
// named through a link. Each of these was read before (a red-team pass).
TEST_F(Sandbox, AnAgentReadsNoSecretUnderAnotherNameOrByTheWayOfItsPrograms) {
    const std::string token = "ghs_" + secret_;
    sh_ok("git config http.https://github.com/.extraheader 'AUTHORIZATION: basic " + token + "'",
          repo_);
    write_text(repo_ / ".env", "API_KEY=env-" + secret_ + "\n");
    write_text(dir_ / "app-key.pem", "app-key-" + secret_ + "\n");
    fs::create_symlink(dir_ / "app-key.pem", dir_ / "link.pem");
    write_text(home_ / "notes.txt", "notes-" + secret_ + "\n");
    // A linked worktree with settings of its own holding a token.
    sh_ok("git worktree add -q ../wt2 && git config extensions.worktreeConfig true", repo_);
    write_text(repo_ / ".git/worktrees/wt2/config.worktree",
               "[http]\n\textraheader = AUTHORIZATION: basic wt-" + secret_ + "\n");
    // Programs on PATH: in the repository, beside the clone, and through a link to the clone.
    for (const fs::path& bin : {repo_ / "bin", dir_ / "bin"}) {
        fs::create_directories(bin);
        write_text(bin / "harmless", "#!/bin/sh\necho harmless\n");
        fs::permissions(bin / "harmless", fs::perms::owner_all, fs::perm_options::add);
    }
    fs::create_directory_symlink(repo_, dir_ / "tools");
    std::string paths;
    for (const fs::path& file :
         {dir_ / "tools/.env", dir_ / "tools/.git/config", repo_ / ".env", home_ / "notes.txt",
          repo_ / ".git/worktrees/wt2/config.worktree", dir_ / "app-key.pem"})
        paths += quote(file.string()) + " ";
    configure({{"agents",
                {{"peek", script("peek", "{ harmless; for f in " + paths +
                                             "; do cat \"$f\" 2>&1 || true; done; } > "
                                             "\"$JRUN_RUN_FOLDER/seen\" 2>&1\n")}}}});
    const std::string with =
        "env -u GIT_CONFIG_GLOBAL HOME=" + quote(home_.string() + "/") +
        " COCODE_ENV_STORE=" + quote(store_.string()) +
        " COCODE_GITHUB_APP_PRIVATE_KEY_PATH=" + quote((dir_ / "link.pem").string()) + " PATH=" +
        quote((dir_ / "tools/bin").string() + ":" + (repo_ / "bin").string() + ":" +
              (dir_ / "bin").string()) +
        ":\"$PATH\" ";
    Shell run = dispatch("run 1 --no-check", with);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::string seen = seen_by_the_run_of(1);
    EXPECT_NE(seen.find("harmless"), std::string::npos) << "its programs still run: " << seen;
    EXPECT_EQ(seen.find(secret_), std::string::npos) << seen;
}

// A batch's network namespaces are made ahead and given to one run after another (proc/
// network_pool.h). The first run of the pair below tries to leave something in its network for
// the next — a server on its loopback that outlives it (a daemon of its own session), an
// address, its loopback taken down, a forwarding setting — and the next run, given the same
// namespace (the premise: checked by its inode), finds none of it.
TEST_F(Sandbox, ANetworkGivenToTheNextRunKeepsNothingOfTheLast) { network_kept_nothing(false); }

// The same where the host forwards IPv4, as every host where Docker runs does (GitHub's runners,
// Kubernetes nodes): a fresh namespace then starts with forwarding on too. As root, the host's
// forwarding is turned on for the test when it was off (what dockerd does when it starts), and
// back off after; where it is on already, this is the test above again.
TEST_F(Sandbox, ANetworkGivenToTheNextRunKeepsNothingOfTheLastWhereTheHostForwards) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to set the host's forwarding";
    const std::filesystem::path forward = "/proc/sys/net/ipv4/ip_forward";
    bool was_off = false;
    {
        const HostForwardingLock held;
        was_off = read_text(forward) == "0\n";
        if (was_off && sh("echo 1 > " + forward.string(), repo_).exit_code != 0)
            GTEST_SKIP() << "the host's forwarding cannot be set here (a read-only /proc/sys)";
    }
    // Off again after, whatever happens; the others wait on the lock meanwhile.
    struct Restore {
        bool off;
        ~Restore() {
            if (!off) return;
            const HostForwardingLock held;
            (void)sh("echo 0 > /proc/sys/net/ipv4/ip_forward", "/");
        }
    } restore{was_off};
    ASSERT_NE(fresh_network_settings().find("forwarding: 1\n"), std::string::npos)
        << "a new namespace takes the host's IPv4 forwarding";
    network_kept_nothing(false);
}

TEST_F(Sandbox, AnotherUsersNetworkGivenToTheNextRunKeepsNothingOfTheLast) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
    network_kept_nothing(true);
}

// What reaches past every namespace, tried by an agent (as root in CI: no user namespace of
// its own): the kernel's settings (kernel.core_pattern is run by the kernel on the host; only
// opened here, never written), its keyrings (root's are the host's), a virtual machine's
// sockets to its host (a network namespace does not enclose vsock), io_uring (whose socket
// operations a filter cannot see). Each is refused.
TEST_F(Sandbox, AnAgentReachesNoKernelSettingKeyringOrVirtualMachinesHost) {
#if !defined(__x86_64__)
    GTEST_SKIP() << "the agent names x86-64's system calls";
#endif
    const std::string agent = R"(python3 - "$JRUN_RUN_FOLDER/tried" <<'PY'
import ctypes, errno, os, socket, sys
out = open(sys.argv[1], "w")
def said(what, error):
    out.write(what + ": " + (errno.errorcode.get(error, str(error)) if error else "done") + "\n")
for setting in ("kernel/core_pattern", "kernel/hostname", "net/ipv4/ip_unprivileged_port_start"):
    try:
        os.close(os.open("/proc/sys/" + setting, os.O_WRONLY))
        said(setting, 0)
    except OSError as e:
        said(setting, e.errno)
libc = ctypes.CDLL(None, use_errno=True)
for name, number, args in (("add_key", 248, (b"user", b"cocode-test", b"x", 1, -3)),
                           ("request_key", 249, (b"user", b"cocode-test", None, -3)),
                           ("keyctl", 250, (0, -3, 0)),  # KEYCTL_GET_KEYRING_ID of the user's
                           ("io_uring_setup", 425, (8, None))):
    said(name, 0 if libc.syscall(number, *args) >= 0 else ctypes.get_errno())
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
    said("vsock", 0)
except OSError as e:
    said("vsock", e.errno)
out.close()
PY
)";
    configure({{"agents", {{"tries", script("tries", agent)}}}});
    Shell run = dispatch_as_user("run 1 --no-check");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(read_text(only_run().folder / "tried"),
              "kernel/core_pattern: EROFS\n"
              "kernel/hostname: EROFS\n"
              "net/ipv4/ip_unprivileged_port_start: EROFS\n"
              "add_key: EPERM\nrequest_key: EPERM\nkeyctl: EPERM\n"
              "io_uring_setup: ENOSYS\nvsock: EAFNOSUPPORT\n");
}

// The first batch of a repository: its runs start beside each other before anything of theirs
// existed (the command lines were made before), and each tries to read the other's HOME and
// uncommitted work, waiting (on the runs' bus, which both write) until the other has written
// them. Neither reads anything of the other's.
TEST_F(Sandbox, TheFirstBatchsRunsSeeNothingOfEachOther) {
    ASSERT_FALSE(fs::exists(repo_ / ".cocode/sandboxes"));
    ASSERT_FALSE(fs::exists(repo_ / ".cocode/worktrees"));
    const std::string agent = R"(me=$COCODE_ISSUE_NUMBER; other=$((3 - me))
echo "secret-of-$me" > "$HOME/secret"
echo "work-of-$me" > wip.txt
bus="$JRUN_RUNS_DIR/events.jsonl"
echo "{"type":"TEST_WROTE","issue":$me}" >> "$bus"
until grep -q ""TEST_WROTE","issue":$other" "$bus"; do sleep 0.05; done
cat "$JRUN_RUNS_DIR/../sandboxes/$other-peek/home/secret" "$JRUN_RUNS_DIR/../worktrees/$other-peek/wip.txt"   > "$JRUN_RUN_FOLDER/seen" 2>&1 || true
ls -A "$JRUN_RUNS_DIR/../sandboxes" "$JRUN_RUNS_DIR/../worktrees" > "$JRUN_RUN_FOLDER/listed" 2>&1 || true
echo "{"type":"TEST_PEEKED","issue":$me}" >> "$bus"
until grep -q ""TEST_PEEKED","issue":$other" "$bus"; do sleep 0.05; done
)";
    configure({{"concurrency", 2}, {"agents", {{"peek", script("peek", agent)}}}});
    Shell run = dispatch_within(120, "run 1 2 --no-check");
    ASSERT_TRUE(ended_in_time(run)) << "the two agents did not both get to write and peek";
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    for (const auto& r : runs()) {
        const std::string seen = read_text(r.folder / "seen");
        const std::string listed = read_text(r.folder / "listed");
        SCOPED_TRACE("issue " + std::to_string(r.issue));
        EXPECT_EQ(seen.find("secret-of-"), std::string::npos) << seen;
        EXPECT_EQ(seen.find("work-of-"), std::string::npos) << seen;
        const std::string own = std::to_string(r.issue) + "-peek";
        // Its own pair's folders, and nothing else, in each.
        EXPECT_NE(listed.find("/sandboxes:\n" + own + "\n"), std::string::npos) << listed;
        EXPECT_NE(listed.find("/worktrees:\n" + own + "\n"), std::string::npos) << listed;
        EXPECT_EQ(listed.find(std::to_string(3 - r.issue) + "-peek"), std::string::npos) << listed;
    }
}

// An agent's run folder is its to write: its events.jsonl, the check's egress record and its
// output.md made links to the user's dotfiles and to a secret. Nothing cocode writes goes
// through them, and the secret reaches no prompt (the next round's) and no file of the run.
TEST_F(Sandbox, LinksInTheRunFolderLeadNowhere) {
    Listener listener;
    const std::string h = home_.string();
    const std::string agent =
        "ln -sf " + quote(h + "/.profile") +
        " \"$JRUN_RUN_FOLDER/events.jsonl\"\n"
        "ln -sf " +
        quote(h + "/.bashrc") +
        " \"$JRUN_RUN_FOLDER/check-egress.jsonl\"\n"
        "ln -sf " +
        quote(h + "/.bashrc") +
        " \"$JRUN_RUN_FOLDER/check-setup.log\"\n"
        "ln -sf " +
        quote(h + "/.ssh/id_test") +
        " \"$JRUN_RUN_FOLDER/output.md\"\n"
        "ln -sf " +
        quote(h + "/.ssh/id_test") +
        " \"$JRUN_RUN_FOLDER/feedback.md\"\n"
        "printf 'import urllib.request\\ntry: "
        "urllib.request.urlopen(\"http://blocked.invalid/\")\\n"
        "except Exception: pass\\n' > probe.py\n"
        "git add probe.py && git commit -q -m probe -m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}},
               {"worktree_setup", {{"commands", {"echo setting up"}}}},
               {"check", {{"verify", {{{"name", "probe"}, {"run", "python3 probe.py"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    EXPECT_NE(run.exit_code, 2) << run.out << run.err;
    Shell round = dispatch_as_user("continue 1 --agent hostile -m 'go on'");
    for (const auto& r : runs()) {
        const std::string prompt = read_text(r.folder / "prompt.md");
        EXPECT_EQ(prompt.find(secret_), std::string::npos) << "the secret in a round's prompt";
    }
    expect_host_untouched(listener);
}

// The environment's path is a link the agent committed (to the user's ~/.local), and in its
// next round a folder on the way to it is: the environment is copied nowhere through either.
TEST_F(Sandbox, AnEnvironmentIsNeverCopiedThroughALinkTheAgentCommitted) {
    fs::create_directories(home_ / ".local");
    write_text(repo_ / "requirements.txt", "a==1\n");
    write_text(repo_ / "setup.sh",
               "mkdir -p .venv/bin tools/venv && echo x > .venv/bin/evil && "
               "echo y > tools/venv/evil\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    const std::string local = quote((home_ / ".local").string());
    const std::string agent =
        "if [ \"$COCODE_ROUND\" = 1 ]; then\n"
        "  rm -rf .venv tools && ln -s " +
        local +
        " .venv && mkdir tools && touch tools/keep\n"
        "  git add -A && git commit -q -m links -m \"$COCODE_READY_MARKER\"\n"
        "else\n"
        "  rm -rf tools && ln -s " +
        local +
        " tools\n"
        "  git add -A && git commit -q -m again -m \"$COCODE_READY_MARKER\"\n"
        "fi\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}},
               {"sandbox", "none"},  // copies, as a machine without overlays makes them
               {"environment", {{"setup", {"sh ./setup.sh"}}, {"paths", {".venv", "tools/venv"}}}},
               {"check", {{"verify", {{{"name", "true"}, {"run", "true"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    EXPECT_NE(run.exit_code, 2) << run.out << run.err;
    Shell round = dispatch_as_user("continue 1 --agent hostile -m 'go on'");
    EXPECT_NE(round.exit_code, 2) << round.out << round.err;
    std::vector<std::string> written;
    for (const auto& e : fs::recursive_directory_iterator(home_ / ".local"))
        written.push_back(e.path().string());
    EXPECT_TRUE(written.empty()) << written.front();
}

// A CI check (cocode-check --worktree) of an agent's commit that changed the environment's
// setup script but no key file, on a store that has no environment yet: the build is the
// base's, from the base. A later run on the base takes the base's environment, not the
// agent's.
TEST_F(Sandbox, ACheckOfAnAgentsCommitNeverBuildsTheBasesEnvironmentFromIt) {
    write_text(repo_ / "requirements.txt", "a==1\n");
    write_text(repo_ / "envsetup.sh", "mkdir -p deps && echo base > deps/made\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    const std::string reader =
        "cat deps/made > \"$JRUN_RUN_FOLDER/seen.txt\"\n"
        "git commit -q --allow-empty -m r -m \"$COCODE_READY_MARKER\"\n";
    configure({{"agents", {{"reader", script("reader", reader)}}},
               {"environment", {{"setup", {"sh ./envsetup.sh"}}, {"paths", {"deps"}}}},
               {"check", {{"verify", {{{"name", "made"}, {"run", "test -s deps/made"}}}}}}});
    const std::string base = sh_ok("git rev-parse HEAD", repo_).substr(0, 40);
    sh_ok(
        "git checkout -q -b change && echo 'mkdir -p deps && echo POISONED > deps/made' > "
        "envsetup.sh && git commit -qam change -m 'cocode ready for check' && "
        "git checkout -q main",
        repo_);
    const fs::path checkout = dir_ / "checkout";
    sh_ok("git worktree add -q " + quote(checkout.string()) + " change", repo_);
    Shell ci = as_user(quote(tool_path("cocode-check").string()) + " --worktree " +
                       quote(checkout.string()) + " --base " + base);
    EXPECT_EQ(ci.exit_code, 0) << ci.out << ci.err;
    Shell run = dispatch_as_user("run 1");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(read_text(only_run().folder / "seen.txt"), "base\n");
}

// The agent rewrites its run's record — run-info.yaml's run id (to one with no seal), its
// base (to its own commit), its worktree (to a folder of the user's) — and its worktree's entry
// in .git/worktrees/ to name that folder. It is judged by its sealed rules all the same (FAIL:
// add() is broken), and `clean` removes what cocode made and nothing of the user's.
TEST_F(Sandbox, ARewrittenRecordDecidesNothingAndCleanRemovesOnlyWhatCocodeMade) {
    write_text(repo_ / "calc.py", "def add(a, b):\n    return a - b\n");
    sh_ok("git add -A && git commit -q -m base", repo_);
    const fs::path precious = dir_ / "precious";
    fs::create_directories(precious);
    write_text(precious / "work.txt", "mine\n");
    const std::string agent =
        "echo '# nothing fixed' >> calc.py\n"
        "git commit -q -am 'Looks fixed' -m \"$COCODE_READY_MARKER\"\n"
        "own=$(git rev-parse HEAD)\n"
        "info=\"$JRUN_RUN_FOLDER/run-info.yaml\"\n"
        "sed -i -e \"s|^run_id: .*|run_id: \\\"19990101-000000000-1-1\\\"|\" "
        "-e \"s|^base_commit: .*|base_commit: \\\"$own\\\"|\" "
        "-e \"s|^worktree: .*|worktree: \\\"" +
        precious.string() +
        "\\\"|\" \"$info\"\n"
        "echo " +
        quote((precious / ".git").string()) + " > \"$(git rev-parse --git-dir)/gitdir\"\n";
    configure({{"agents", {{"hostile", script("hostile", agent)}}},
               {"check",
                {{"verify",
                  {{{"name", "add"},
                    {"run", "python3 -c 'from calc import add; assert add(2, 3) == 5'"}}}}}}});
    Shell run = dispatch_as_user("run 1");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;  // it ran; its verdict is below
    const auto& r = only_run();
    const json check = json::parse(read_text(r.folder / "check.json"));
    EXPECT_EQ(check["verdict"], "FAIL") << check.dump(2);
    EXPECT_EQ(check["base"],
              json::parse(read_text(repo_ / ".cocode/seals" /
                                    (r.folder.filename().string() + ".json")))["base_commit"]);
    Shell again = as_user(quote(tool_path("cocode-check").string()) + " --run " +
                          r.folder.filename().string());
    EXPECT_EQ(again.exit_code, 1) << again.out << again.err;
    Shell cleaned = dispatch_as_user("clean 1 --force");
    EXPECT_EQ(read_text(precious / "work.txt"), "mine\n") << cleaned.out << cleaned.err;
    EXPECT_FALSE(fs::exists(repo_ / ".cocode/worktrees/1-hostile/calc.py"))
        << "the worktree cocode made is removed: " << cleaned.out << cleaned.err;
}

}  // namespace
}  // namespace cocode::test
