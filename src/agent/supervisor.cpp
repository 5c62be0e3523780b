#include "agent/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <future>
#include <limits>
#include <optional>

#include "agent/builtin.h"
#include "agent/confined.h"
#include "agent/ready_watch.h"
#include "agent/transcript.h"
#include "agent/usage.h"
#include "core/files.h"
#include "core/redact.h"
#include "git/agent_repo.h"
#include "git/git_files.h"
#include "git/repository.h"
#include "github/reach.h"
#include "hook/ready.h"
#include "net/proxy.h"
#include "proc/interrupt.h"
#include "proc/network_pool.h"
#include "proc/process_tree.h"
#include "proc/spawn.h"

namespace cocode::agent {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kTick{200};  // the longest we sleep without looking
constexpr milliseconds kMaxBackoff = std::chrono::seconds(60);
constexpr milliseconds kStopGrace{1000};     // a stop's grace at most (begin_stop)
constexpr milliseconds kViewInterval{1000};  // how often the live view hears of every run
// How much of the end of a CLI's stream is read for its final answer (output.md).
constexpr std::size_t kAnswerTail = std::size_t{8} << 20;
// Said of an agent that was stopped having written nothing at all: a CLI that cannot reach
// its model retries quietly until it is killed.
constexpr std::string_view kSilentAgent =
    ", with no output at all: the agent most likely never reached its model (check its "
    "base_url, HTTPS_PROXY and key: `cocode-dispatch doctor`) or waited for input";

enum class Phase { queued, running, stopping, backoff, done };

// A take-back's answer (agent::take_back): the branch's head, or nullopt with why when
// something went wrong.
struct Taken {
    std::optional<std::string> head;
    std::string why;
};

struct Slot {
    PlannedRun* run = nullptr;
    Phase phase = Phase::queued;
    pid_t pid = 0;
    ProcessStamp leader;  // the agent as started: what proves its group is still the run's
    bool exited = false;
    bool stop_asked = false;  // its stop request was seen (and acted on, once)
    int wait_status = 0;
    Clock::time_point attempt_start, last_output, ready_at, stop_deadline, restart_at;
    std::uintmax_t out_size = 0, err_size = 0;
    fs::file_time_type info_time{};
    std::string ready_commit;
    run::StopReason stop_reason = run::StopReason::none;  // why we stop it; none: it ended itself
    bool killed = false;
    bool started_once = false;
    RunResult result;
    // Its commits, as the ready watch sees them.
    std::optional<git::GitDirs> dirs;
    std::string last_head;    // the newest commit already scanned for the marker
    std::string branch_mark;  // what its branch's ref read at the last look
    std::string take_error;   // why its branch could not be taken back at its end
    // Its branch being taken back, beside the loop (a fetch an agent can make slow must not
    // hold every other run's clock): at most one at a time; a change seen meanwhile asks for
    // one more after it. `final_take`: the one after the agent's last process ended.
    std::optional<std::future<Taken>> taking;
    bool taking_always = false, take_again = false, again_always = false;
    bool final_take = false;
    std::string keep_error;  // why its state could not be kept beside its seal
    int commits = 0;         // since the base
    Clock::time_point first_start{}, ended{};
    // What it used, read from its stream (a built-in agent's usage.jsonl) as it grows.
    std::optional<UsageReader> usage;
    std::uint64_t usage_read = 0;               // bytes of that file read
    std::optional<run::RunUsage> usage_priced;  // what it comes to, until more is read
    run::RunUsage usage_before;                 // at the start of the current attempt
    std::vector<run::AttemptUsage> attempts;
    std::string over_budget;  // why it was stopped for its budget
    // Its end, until run-info and the events have it.
    run::RunEnd end;
    bool end_pending = false;
    Clock::time_point end_tried{};
    std::string end_error;
    // The run's egress proxy, from its first start to its end (agent/egress.h).
    std::unique_ptr<net::EgressProxy> proxy;
    // The network namespace its sandbox was given (proc/network_pool.h), while it runs.
    UniqueFd network;
};

// Where a run's usage is read from: a built-in agent's usage.jsonl, else its stdout.
fs::path usage_source(const PlannedRun& run) {
    return config::is_builtin(run.agent.type) ? run.files.folder / kUsageFile
                                              : run.files.stdout_file();
}

std::uintmax_t size_of(const fs::path& path) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    return ec ? 0 : size;
}

// The last non-empty line the agent wrote to stderr, short, with secrets masked: enough for
// error_summary to say why without opening the file.
std::string last_stderr_line(const fs::path& path) {
    // Only the tail is read: an agent's stderr can be hundreds of megabytes.
    std::string text = read_file_tail(path, 4096);
    std::string_view all = text;
    while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.remove_suffix(1);
    std::size_t start = all.rfind('\n');
    std::string line(all.substr(start == std::string_view::npos ? 0 : start + 1));
    if (line.size() > 200) line = line.substr(0, 200) + "…";
    return redact(line);
}

// This thread's CPU time (the supervisor's loop is one thread; reaped agents not counted).
std::chrono::microseconds own_cpu_time() {
    rusage usage{};
    ::getrusage(RUSAGE_THREAD, &usage);
    auto us = [](const timeval& t) {
        return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
    };
    return us(usage.ru_utime) + us(usage.ru_stime);
}

class Supervisor {
  public:
    Supervisor(std::vector<PlannedRun>& runs, const SupervisorOptions& options)
        : options_(options) {
        for (auto& run : runs) {
            Slot slot;
            slot.run = &run;
            slots_.push_back(std::move(slot));
        }
    }

    Result<BatchResult> run() {
        sigset_t set, previous;
        sigemptyset(&set);
        std::vector<int> watched = {SIGCHLD, SIGINT, SIGTERM};
        if (options_.stop_on_hangup) watched.push_back(SIGHUP);
        // Blocked and taken with sigtimedwait; an inherited SIG_IGN (a background job of a
        // non-interactive shell ignores SIGINT) would drop them, so back to the default first.
        for (int s : watched) {
            ::signal(s, SIG_DFL);
            sigaddset(&set, s);
        }
        ::sigprocmask(SIG_BLOCK, &set, &previous);
        int sfd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
        if (sfd < 0) {
            int err = errno;
            ::sigprocmask(SIG_SETMASK, &previous, nullptr);
            return Error::from_errno("signalfd", err);
        }
        signals_ = UniqueFd(sfd);
        takes_done_ = UniqueFd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
        if (!takes_done_.valid()) {
            int err = errno;
            ::sigprocmask(SIG_SETMASK, &previous, nullptr);
            return Error::from_errno("eventfd", err);
        }
        // Without inotify (no instances left), commits and the hook's READY are looked for
        // on every tick instead.
        if (auto watch = ReadyWatch::create()) watch_.emplace(std::move(*watch));
        subreaper_ = become_subreaper();
        reserve_networks();
        const auto cpu_before = own_cpu_time();
        const auto wall_before = std::chrono::steady_clock::now();  // measured, never injected

        for (auto& slot : slots_) {
            if (!slot.run->failed) continue;
            const Error& error = *slot.run->failed;
            finish(slot, static_cast<int>(error.code), slot.run->failed_reason, error.message);
        }
        // Interrupted while the runs were being prepared: none starts.
        if (interrupt_requested()) interrupt();
        bool announced = false;
        while (true) {
            start_waiting_runs();
            if (!announced) {
                announced = true;
                if (options_.on_started) options_.on_started();
            }
            if (std::all_of(slots_.begin(), slots_.end(),
                            [](const Slot& s) { return s.phase == Phase::done; }))
                break;
            wait_for_events();
            reap();
            const auto now = clock_now();
            for (auto& slot : slots_) tick(slot, now);
            retry_ends(now);
            show(now);
        }
        show(clock_now(), true);
        sweep_orphans();
        for (auto& slot : slots_) write_end(slot);
        ::sigprocmask(SIG_SETMASK, &previous, nullptr);
        BatchResult result;
        result.interrupted = interrupted_;
        result.cpu = own_cpu_time() - cpu_before;
        result.wall = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - wall_before);
        for (const auto& slot : slots_) {
            result.runs.push_back(slot.result);
            if (slot.end_pending)
                result.unrecorded.push_back(
                    "run " + slot.run->run_id + ": its end (" +
                    std::string(run::status_name(slot.end.status)) + ", exit " +
                    std::to_string(slot.end.exit_code) + ") is not in run-info.yaml: " +
                    slot.end_error + "; it is kept in " + slot.run->files.end().string() +
                    " and `cocode-dispatch status` writes it once there is room");
        }
        return result;
    }

  private:
    // Deadlines (timeouts, idle limits, grace, backoff, READY's quiet time) are read from this
    // clock: a test hands in its own to pass an hour without waiting one.
    Clock::time_point clock_now() const { return options_.clock ? options_.clock() : Clock::now(); }

    void update(const Slot& slot, UpdateKind kind, std::string detail) {
        views_changed_ = true;
        if (options_.on_update) options_.on_update(RunUpdate{slot.run, kind, std::move(detail)});
    }

    // The live view: after a change, and once a second for the clocks.
    void show(Clock::time_point now, bool force = false) {
        if (!options_.on_tick) return;
        if (!force && !views_changed_ && now - last_view_ < kViewInterval) return;
        views_changed_ = false;
        last_view_ = now;
        std::vector<RunView> views;
        for (auto& slot : slots_) {
            RunView view;
            view.run = slot.run;
            switch (slot.phase) {
                case Phase::queued:
                    view.state = ViewState::queued;
                    break;
                case Phase::running:
                    view.state = ViewState::running;
                    break;
                case Phase::stopping:
                    view.state = ViewState::stopping;
                    break;
                case Phase::backoff:
                    view.state = ViewState::restarting;
                    break;
                case Phase::done:
                    view.state = slot.result.status == run::RunStatus::completed
                                     ? ViewState::completed
                                     : ViewState::failed;
                    view.result = slot.result;
                    break;
            }
            view.started = slot.first_start;
            view.ended = slot.ended;
            view.output_bytes = slot.out_size + slot.err_size;
            if (slot.usage) view.usage = usage_of(slot);
            view.commits = slot.commits;
            view.ready_commit = slot.ready_commit;
            views.push_back(std::move(view));
        }
        options_.on_tick(views);
    }

    static RunMarks marks(const Slot& slot) { return {slot.leader, slot.run->tag()}; }

    std::size_t index_of(const Slot& slot) const {
        return static_cast<std::size_t>(&slot - slots_.data());
    }

    // The main repository of a run (<repo>/.cocode/runs/<id>): where cocode's own git reads.
    static fs::path main_root(const PlannedRun& run) {
        return run.files.folder.parent_path().parent_path().parent_path();
    }

    // Opened once, for reading commits of every run: worktrees share one object store. The
    // main repository, never a worktree's git folder (its `.git` file is the agent's).
    const git::Repository* repository() {
        if (!repo_opened_) {
            repo_opened_ = true;
            if (!slots_.empty())
                if (auto repo = git::Repository::open(main_root(*slots_.front().run)))
                    repo_.emplace(std::move(*repo));
        }
        return repo_ ? &*repo_ : nullptr;
    }

    // The agent's own repository (git/agent_repo.h): its git folder is the agent's.
    static git::AgentRepo agent_repo(const PlannedRun& run) {
        return {run.own.git(), run.worktree, run.branch};
    }

    // Arms the ready watch before the agent first starts, so that no commit can slip by.
    void watch_commits(Slot& slot) {
        PlannedRun& run = *slot.run;
        const git::AgentRepo own = agent_repo(run);
        slot.dirs = git::GitDirs{own.git_dir, own.git_dir};
        if (watch_) (void)watch_->watch(index_of(slot), *slot.dirs, run.files.folder);
        slot.branch_mark = git::agent_branch_mark(own);
        slot.last_head = run.base_commit;
        if (auto* repo = repository()) {
            if (auto head = repo->lookup("refs/heads/" + run.branch)) slot.last_head = head->id;
            if (!run.base_commit.empty())
                if (auto commits = repo->commits_between(run.base_commit, slot.last_head))
                    slot.commits = static_cast<int>(commits->size());
        }
    }

    // The agent's branch taken back into the main repository (agent::take_back): every object
    // checked on the way, its code run in the sandbox. Its head, or nullopt (nothing taken,
    // `why` says what went wrong when something did). Run on a thread of its own: the loop goes
    // on, and `takes_done_` wakes it when the answer is there.
    static Taken take_branch(std::optional<SandboxMaker> maker, const fs::path& root,
                             const git::AgentRepo& own) {
        auto taken = take_back(maker, root, own);
        if (!taken) return {std::nullopt, taken.error().message};
        return {*taken, ""};
    }

    // The branch may have moved: taken back (at once, or after the take in flight), then its
    // new commits read. `always`: taken back even when the ref reads as before (the end),
    // unless it reads as exactly the commit the main repository has of the branch already:
    // then there is nothing to take. (The ref is the agent's to write: one that reads so while
    // the branch moved only leaves the agent's own work untaken, never takes anything unchecked.)
    void scan_commits(Slot& slot, bool always = false) {
        PlannedRun& run = *slot.run;
        if (!slot.dirs) return;
        const std::string mark = git::agent_branch_mark(agent_repo(run));
        if (mark == slot.branch_mark && !always) return;
        slot.branch_mark = mark;
        if (slot.taking) {
            slot.take_again = true;
            slot.again_always = slot.again_always || always;
            return;
        }
        if (always && !slot.last_head.empty() && mark == "loose " + slot.last_head + "\n") {
            slot.take_error.clear();
            return;
        }
        std::optional<SandboxMaker> maker;
        if (run.sandboxed()) maker = maker_named(run.sandbox);
        const int done = takes_done_.get();
        slot.taking_always = always;
        slot.taking = std::async(std::launch::async,
                                 [maker, root = main_root(run), own = agent_repo(run), done] {
                                     Taken taken = take_branch(maker, root, own);
                                     const std::uint64_t one = 1;
                                     (void)!::write(done, &one, sizeof one);
                                     return taken;
                                 });
    }

    // The takes that ended: their commits read (below), and the next one started when a
    // change came meanwhile. `wait`: this slot's take is waited for (a run that ends with one
    // in flight).
    void collect_takes(Clock::time_point now, Slot* wait = nullptr) {
        for (auto& slot : slots_) {
            if (!slot.taking) continue;
            if (&slot != wait &&
                slot.taking->wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                continue;
            Taken taken = slot.taking->get();
            slot.taking.reset();
            if (slot.taking_always) slot.take_error = taken.why;  // the end reports the last
            if (taken.head) read_commits(slot, *taken.head, now);
            if (slot.take_again && &slot != wait) {
                slot.take_again = false;
                const bool always = slot.again_always;
                slot.again_always = false;
                scan_commits(slot, always);
            }
        }
    }

    // Whether the agent's work is all taken back after its last process ended: the last
    // take asked for, then waited on beside the loop. False until then.
    bool taken_back(Slot& slot) {
        if (!slot.final_take) {
            slot.final_take = true;
            scan_commits(slot, true);
        }
        return !slot.taking;
    }

    // New commits on the branch, up to `head`: only those since the last look are read, from
    // the main repository; the newest carrying the marker is READY.
    void read_commits(Slot& slot, const std::string& head, Clock::time_point now) {
        PlannedRun& run = *slot.run;
        if (head == slot.last_head) return;
        if (watch_) (void)watch_->watch(index_of(slot), *slot.dirs, run.files.folder);
        const git::Repository* repo = repository();
        if (!repo) return;
        std::vector<std::string> hidden;
        if (!run.base_commit.empty()) hidden.push_back(run.base_commit);
        if (!slot.last_head.empty() && slot.last_head != run.base_commit)
            hidden.push_back(slot.last_head);
        auto fresh = repo->commits_between(hidden, head);
        if (!fresh) return;
        slot.last_head = head;
        views_changed_ = true;
        if (!run.base_commit.empty())
            if (auto all = repo->commits_between(run.base_commit, head))
                slot.commits = static_cast<int>(all->size());
        for (const auto& commit : *fresh) {  // newest first
            if (!hook::message_has_marker(commit.message, run.ready_marker)) continue;
            if (commit.id != run.base_commit) {
                record_ready(run, commit.id);
                note_ready(slot, commit.id, now);
            }
            break;
        }
    }

    // READY as cocode saw it, in the commit it took back: recorded unless the hook (which runs
    // in the agent's sandbox) already did. Nothing is taken from run-info but whether the hook
    // got there first — where the events go is cocode's own knowledge, never the `message_bus`
    // run-info names — and the agent's locks are waited on for a moment only.
    static void record_ready(const PlannedRun& run, const std::string& commit) {
        (void)run::keep_state(run.files.folder, [&](FlatYaml& kept) {
            if (kept.get("ready_commit") == commit) return;
            kept.set("ready_commit", commit);
            kept.set("ready_time", format_utc_timestamp(std::chrono::system_clock::now()));
        });
        bool recorded = false;
        (void)run::update_run_info(
            run.files.folder,
            [&](FlatYaml& info) {
                recorded = info.get("ready_commit") == commit;
                info.set("ready_commit", commit);
            },
            Durability::content);
        if (!recorded)
            (void)run::append_event(run.files.folder, run.run_id, "READY",
                                    {{"commit", commit}, {"by", "watch"}});
    }

    void note_ready(Slot& slot, const std::string& commit, Clock::time_point now) {
        if (commit.empty() || commit == slot.ready_commit) return;
        slot.ready_commit = commit;
        slot.ready_at = now;
        update(slot, UpdateKind::ready, "commit " + commit.substr(0, 12));
    }

    int alive() const {
        return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) {
            return s.phase == Phase::running || s.phase == Phase::stopping ||
                   s.phase == Phase::backoff;
        }));
    }

    void start_waiting_runs() {
        if (interrupted_) return;
        int free = options_.concurrency - alive();
        for (auto& slot : slots_) {
            if (free <= 0) break;
            if (slot.phase != Phase::queued) continue;
            start(slot);
            --free;
        }
    }

    // What the run's usage file added since it was last read, at most `limit` bytes of it.
    static void read_usage(Slot& slot, std::uint64_t limit) {
        const fs::path source = usage_source(*slot.run);
        if (slot.run->agent.type == config::AgentType::command) {
            const std::uint64_t size = size_of(source);
            if (size > slot.usage_read + kScriptUsageTail) {
                slot.usage->skip();
                slot.usage_read = size - kScriptUsageTail;
            }
        }
        const std::uint64_t read =
            scan_file_from(source, slot.usage_read, limit,
                           [&](std::string_view bytes) { slot.usage->feed(bytes); });
        slot.usage_read += read;
        if (read > 0) slot.usage_priced.reset();
    }

    // Priced once per read that found something, not on every look.
    run::RunUsage usage_of(Slot& slot) const {
        if (!slot.usage_priced)
            slot.usage_priced = price_usage(*slot.usage, slot.run->billing, options_.pricing);
        return *slot.usage_priced;
    }

    // The attempt that ended: its share of the run's usage.
    void close_attempt_usage(Slot& slot) {
        if (!slot.usage) return;
        read_usage(slot, std::numeric_limits<std::uint64_t>::max());
        const run::RunUsage now = usage_of(slot);
        run::AttemptUsage attempt;
        attempt.tokens = now.tokens - slot.usage_before.tokens;
        if (now.cost_usd) attempt.cost_usd = *now.cost_usd - slot.usage_before.cost_usd.value_or(0);
        slot.attempts.push_back(attempt);
        slot.usage_before = now;
    }

    void start(Slot& slot) {
        PlannedRun& run = *slot.run;
        if (!slot.started_once) watch_commits(slot);
        if (!slot.usage)
            slot.usage.emplace(run.agent.model.value_or(""), declared_stream(run.agent),
                               run.sandboxed() ? run.own.home() : fs::path());
        if (run.egress.enclosed() && !slot.proxy) {
            auto proxy = start_proxy(run);
            if (!proxy) {
                finish(slot, static_cast<int>(proxy.error().code), run::StopReason::spawn,
                       proxy.error().message);
                return;
            }
            slot.proxy = std::move(proxy).value();
        }
        ChildOptions child;
        child.argv = run.argv;
        child.environment = run.environment;
        child.cwd = run.worktree;
        if (run.agent.stdin_from == config::Stdin::prompt)
            child.in = ChildStream::read_from(run.files.prompt());
        child.out = ChildStream::append_to(run.files.stdout_file());
        child.err = ChildStream::append_to(run.files.stderr_file());
        child.group = ChildOptions::Group::own_session;
        child.overlays = run.overlays;  // its environment, copy-on-write (environment/view.h)
        // Its network: one of the batch's, made ahead (proc/network_pool.h), where cocode's
        // sandbox encloses it; else the sandbox makes one.
        if (pooled_network(run)) {
            if (!networks_) networks_.emplace(run.argv.front());
            slot.network = networks_->take();
            if (slot.network.valid()) {
                child.fd3 = slot.network.get();
                child.argv.insert(child.argv.begin() + 1, {"--net-from-fd", "3"});
            }
        }
        // Read before the spawn: the attempt's time starts no later than the agent does.
        const auto now = clock_now();
        auto pid = start_child(child);
        if (!pid) {
            finish(slot, static_cast<int>(ExitCode::general), run::StopReason::spawn,
                   pid.error().message);
            return;
        }
        slot.pid = *pid;
        slot.leader = stamp_of(*pid);
        if (slot.leader.pid == 0) slot.leader = {*pid, 0};  // already gone: its tag still counts
        slot.exited = false;
        slot.final_take = false;
        slot.killed = false;
        slot.stop_reason = run::StopReason::none;
        slot.phase = Phase::running;
        slot.attempt_start = slot.last_output = now;
        slot.out_size = size_of(run.files.stdout_file());
        slot.err_size = size_of(run.files.stderr_file());
        const std::string start_time = format_utc_timestamp(std::chrono::system_clock::now());
        const bool first = !slot.started_once;
        slot.started_once = true;
        if (first) slot.first_start = now;
        // The folder is not flushed: after a power loss nothing is running any more, and a
        // run that reads back as queued is reconciled like one that was running. Its end is.
        // The same fields twice: beside the seal, where cocode reads them (what it signals, and
        // whether the run is running, decided from there: run-info is the agent's to
        // rewrite), and in run-info for its readers. A run whose state cannot be kept cannot
        // be stopped safely by another process, and says so at its end.
        const auto started = [&](FlatYaml& fields) {
            fields.set("status", std::string(run::status_name(run::RunStatus::running)));
            fields.set("reason", "");
            run::set_agent(fields, {slot.pid, slot.leader.start, slot.leader.ino});
            run::set_supervisor(fields, self_);
            fields.set("boot_id", boot_);
            if (first) fields.set("start_time", start_time);
        };
        if (auto kept = run::keep_state(run.files.folder, started); !kept)
            slot.keep_error = kept.error().message;
        (void)run::update_run_info(
            run.files.folder,
            [&](FlatYaml& info) {
                started(info);
                info.set_number("restarts", slot.result.restarts);
            },
            Durability::content);
        (void)run::append_event(run.files.folder, run.run_id, "RUN_START",
                                {{"issue", run.issue},
                                 {"agent", run.agent.name},
                                 {"pid", slot.pid},
                                 {"attempt", slot.result.restarts + 1}});
        update(slot, UpdateKind::started, "pid " + std::to_string(slot.pid));
    }

    // Whether a run's sandbox gets one of the batch's network namespaces (proc/network_pool.h):
    // cocode's sandbox, its network enclosed, and no overlay (cocode-overlay's user namespace
    // would be the sandbox's parent, and the pool's is not within it).
    static bool pooled_network(const PlannedRun& run) {
        return run.sandbox == kCocodeSandbox && run.egress.enclosed() && run.overlays.empty();
    }

    // The batch's network namespaces, made before the first run starts: one for each run that
    // can go at once (each given back when its run ends, for the next).
    void reserve_networks() {
        int wanted = 0;
        const std::string* program = nullptr;
        for (const auto& slot : slots_)
            if (!slot.run->failed && pooled_network(*slot.run)) {
                ++wanted;
                program = &slot.run->argv.front();
            }
        if (!program) return;
        networks_.emplace(*program);
        networks_->reserve(std::min(wanted, std::max(1, options_.concurrency)));
    }

    // Sleeps until a signal, a change the ready watch saw, or the next deadline.
    void wait_for_events() {
        auto now = clock_now();
        auto wake = now + kTick;
        for (const auto& s : slots_) {
            if (s.phase == Phase::backoff) wake = std::min(wake, s.restart_at);
            // Past its grace and gone, it waits on its last take: that take wakes us.
            if (s.phase == Phase::stopping && !(s.exited && s.final_take))
                wake = std::min(wake, s.stop_deadline);
        }
        auto wait = std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(wake - now));
        // An interrupt's eventfd (proc/interrupt.h) stays readable once asked: polled only
        // until this batch is interrupted.
        pollfd fds[4] = {{signals_.get(), POLLIN, 0},
                         {takes_done_.get(), POLLIN, 0},
                         {interrupted_ ? -1 : interrupt_fd(), POLLIN, 0},
                         {watch_ ? watch_->fd() : -1, POLLIN, 0}};
        (void)::poll(fds, watch_ ? 4 : 3, static_cast<int>(wait.count()));
        signalfd_siginfo info;
        while (::read(signals_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
            const auto signal = static_cast<int>(info.ssi_signo);
            if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) interrupt();
        }
        // Taken by the process's InterruptWatch instead, or asked by another part of it.
        if (interrupt_requested()) interrupt();
        std::uint64_t ended = 0;
        (void)!::read(takes_done_.get(), &ended, sizeof ended);
        collect_takes(clock_now());
        if (!watch_) return;
        auto changes = watch_->changed();
        for (std::size_t i : changes.refs)
            if (i < slots_.size() && is_live(slots_[i])) scan_commits(slots_[i]);
        for (std::size_t i : changes.run_info)
            if (i < slots_.size() && is_live(slots_[i])) watch_ready(slots_[i]);
    }

    static bool is_live(const Slot& slot) {
        return slot.phase == Phase::running || slot.phase == Phase::stopping;
    }

    // After the last run: whatever is still our child was adopted as an orphan of one of our
    // agents (only their descendants can be reparented to a subreaper), and escaped every
    // run's marks — a daemon started with `env -i`, outside the sandbox. It is ours to end.
    void sweep_orphans() {
        if (!subreaper_) return;
        // Never a child another thread started and waits for (a judge's verify command).
        const auto children = orphans_to_end();
        for (pid_t pid : children) ::kill(pid, SIGKILL);
        for (pid_t pid : children) {
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }

    // Every child that ended: our agents, and orphans of theirs we adopted as subreaper — by
    // their pids, never waitpid(-1): the runs already ended are judged meanwhile, in threads
    // of this process whose children must stay theirs to reap.
    void reap() {
        for (auto& slot : slots_) {
            if (slot.exited || slot.pid <= 0 ||
                (slot.phase != Phase::running && slot.phase != Phase::stopping))
                continue;
            int status = 0;
            if (wait_child(slot.pid, &status, WNOHANG) == slot.pid) {
                slot.exited = true;
                slot.wait_status = status;
                // Back to the pool only from a sandbox that ended by itself: its first
                // process waited for every other, so nothing of it is left in there.
                if (slot.network.valid() && WIFEXITED(status) && networks_)
                    networks_->give_back(std::move(slot.network));
                slot.network = UniqueFd();
            }
        }
        if (subreaper_) reap_orphans();
    }

    void interrupt() {
        if (interrupted_) return;
        interrupted_ = true;
        // What else this process runs for these runs (a check under way) stops as well.
        request_interrupt();
        for (auto& slot : slots_) stop_slot(slot);
    }

    // Ctrl-C for one run, or a person's stop request for it (run::stop_request_path).
    void stop_slot(Slot& slot) {
        switch (slot.phase) {
            case Phase::queued:
            case Phase::backoff:
                finish(slot, static_cast<int>(ExitCode::interrupted), run::StopReason::interrupted,
                       "interrupted before it started");
                break;
            case Phase::running:
                begin_stop(slot, run::StopReason::interrupted);
                break;
            case Phase::stopping:
                slot.stop_reason = run::StopReason::interrupted;
                break;
            case Phase::done:
                break;
        }
    }

    void begin_stop(Slot& slot, run::StopReason reason) {
        slot.stop_reason = reason;
        slot.phase = Phase::stopping;
        // Stop means stop: a person's stop and Ctrl-C give an agent at most a second to end
        // before it is killed (a run ends within 2 s: docs/runs.md, "Stopping"); `grace` is for
        // the supervisor's own stops (timeouts, budgets), which nobody is waiting on.
        slot.stop_deadline =
            clock_now() + (reason == run::StopReason::interrupted
                               ? std::min<Clock::duration>(options_.grace, kStopGrace)
                               : Clock::duration(options_.grace));
        signal_run(marks(slot), SIGTERM);
        update(slot, UpdateKind::stopping, std::string(run::reason_name(reason)));
    }

    // run-info.yaml was rewritten: the hook may have recorded READY. What it names is the
    // agent's to have written: it only sends cocode to take the branch back and read the
    // commits itself.
    void watch_ready(Slot& slot) {
        if (!watch_) {  // no inotify: only read it when it changed
            std::error_code ec;
            auto time = fs::last_write_time(slot.run->files.info(), ec);
            if (ec || time == slot.info_time) return;
            slot.info_time = time;
        }
        auto info = run::read_run_info(slot.run->files.folder);
        if (!info) return;
        const std::string named = info->get("ready_commit").value_or("");
        if (!named.empty() && named != slot.ready_commit) scan_commits(slot, true);
    }

    void tick(Slot& slot, Clock::time_point now) {
        PlannedRun& run = *slot.run;
        if (slot.phase != Phase::done && !slot.stop_asked && !run.stop_request.empty() &&
            ::access(run.stop_request.c_str(), F_OK) == 0) {
            slot.stop_asked = true;
            stop_slot(slot);
        }
        if (slot.phase == Phase::backoff) {
            if (now >= slot.restart_at) start(slot);
            return;
        }
        if (slot.phase != Phase::running && slot.phase != Phase::stopping) return;
        if (!watch_) {
            watch_ready(slot);
            scan_commits(slot);
        }
        auto out = size_of(run.files.stdout_file());
        auto err = size_of(run.files.stderr_file());
        if (out != slot.out_size || err != slot.err_size) {
            slot.out_size = out;
            slot.err_size = err;
            slot.last_output = now;
            // A tick reads at most this much of it: an agent writing faster is read on.
            if (slot.usage) read_usage(slot, std::uint64_t{16} << 20);
        }
        if (slot.phase == Phase::running) {
            // Before its exit: a burst written just before exiting is past the cap all the same.
            if (slot.out_size + slot.err_size > run.output_cap) {
                begin_stop(slot, run::StopReason::output_cap);
                return;
            }
            if (slot.usage && (run.agent.max_cost_usd || run.agent.max_tokens) && !slot.exited)
                if (auto why = budget_crossed(run.agent, usage_of(slot))) {
                    slot.over_budget = *why;
                    begin_stop(slot, run::StopReason::budget);
                    return;
                }
            if (slot.exited) {
                // The agent is gone; whatever it left behind (a grandchild holding its
                // output, a daemon) goes too, the same way.
                if (!left_behind(slot)) {
                    if (!taken_back(slot)) return;
                    end_attempt(slot);
                } else {
                    slot.phase = Phase::stopping;
                    slot.stop_deadline = now + options_.grace;
                    signal_run(marks(slot), SIGTERM);
                }
                return;
            }
            if (now - slot.attempt_start >= run.timeout) {
                begin_stop(slot, run::StopReason::timeout);
            } else if (run.idle_timeout && now - slot.last_output >= *run.idle_timeout) {
                begin_stop(slot, run::StopReason::idle);
            } else if (!slot.ready_commit.empty() &&
                       now - std::max(slot.last_output, slot.ready_at) >= options_.ready_quiet) {
                begin_stop(slot, run::StopReason::ready_quiet);
            }
            return;
        }
        // Stopping: done when the agent has exited and nothing of the run is left.
        const bool left = !run_processes(marks(slot)).empty();
        if (slot.exited && !left) {
            if (!taken_back(slot)) return;
            end_attempt(slot);
            return;
        }
        if (now >= slot.stop_deadline) {
            slot.killed = true;
            signal_run(marks(slot), SIGKILL);
        }
    }

    // Whether an agent that exited left processes behind. The quick answer, without reading
    // every process's environment: as subreaper, whatever left the group and outlived its
    // parent is now our child, so an empty group and no children but live agents means none.
    bool left_behind(const Slot& slot) const {
        if (subreaper_ && !group_alive(slot.pid)) {
            if (auto children = own_children()) {
                bool adopted = std::any_of(children->begin(), children->end(), [&](pid_t pid) {
                    return std::none_of(slots_.begin(), slots_.end(), [&](const Slot& s) {
                        return s.pid == pid && !s.exited &&
                               (s.phase == Phase::running || s.phase == Phase::stopping);
                    });
                });
                if (!adopted) return false;
            }
        }
        return !run_processes(marks(slot)).empty();
    }

    void end_attempt(Slot& slot) {
        PlannedRun& run = *slot.run;
        int code = 0;
        if (WIFEXITED(slot.wait_status))
            code = WEXITSTATUS(slot.wait_status);
        else if (WIFSIGNALED(slot.wait_status))
            code = 128 + WTERMSIG(slot.wait_status);
        using run::StopReason;
        const StopReason why = slot.stop_reason;
        const bool limit = why == StopReason::timeout || why == StopReason::idle;
        if (limit)
            code = static_cast<int>(ExitCode::timeout);
        else if (why == StopReason::interrupted)
            code = static_cast<int>(ExitCode::interrupted);
        else if (why == StopReason::ready_quiet)
            code = 0;  // it said it was done, then lingered
        else if (why == StopReason::output_cap)
            code = static_cast<int>(ExitCode::general);
        else if (why == StopReason::budget)
            code = static_cast<int>(ExitCode::budget);
        close_attempt_usage(slot);

        if (why == StopReason::none && code != 0 && slot.result.restarts < run.agent.restarts &&
            slot.ready_commit.empty() && !interrupted_) {
            ++slot.result.restarts;
            auto delay = options_.restart_backoff * (1 << std::min(slot.result.restarts - 1, 16));
            delay = std::min<config::Duration>(delay, kMaxBackoff);
            slot.restart_at = clock_now() + delay;
            slot.phase = Phase::backoff;
            (void)write_file_atomic(run.files.prompt(), kRestartPrefix + run.prompt);
            (void)run::update_run_info(run.files.folder, [&](FlatYaml& info) {
                info.set_number("restarts", slot.result.restarts);
                info.set("reason", std::string(run::reason_name(StopReason::restarting)));
            });
            (void)run::append_event(run.files.folder, run.run_id, "RUN_CRASH",
                                    {{"exit_code", code},
                                     {"attempt", slot.result.restarts},
                                     {"restart_in_ms", delay.count()}});
            update(slot, UpdateKind::restarting,
                   "exit " + std::to_string(code) + ", restart " +
                       std::to_string(slot.result.restarts) + " of " +
                       std::to_string(run.agent.restarts) + " in " +
                       config::format_duration(delay));
            return;
        }
        std::string summary;
        if (why == StopReason::timeout)
            summary = "timed out after " + config::format_duration(run.timeout);
        else if (why == StopReason::idle)
            summary = "no output for " + config::format_duration(*run.idle_timeout);
        else if (why == StopReason::interrupted)
            summary = "interrupted while its agent ran";
        else if (why == StopReason::output_cap)
            summary = cap_output(run);
        else if (why == StopReason::budget)
            summary = "over its budget: " + slot.over_budget;
        else if (code != 0) {
            summary = "exit code " + std::to_string(code);
            if (auto line = last_stderr_line(run.files.stderr_file()); !line.empty())
                summary += ": " + line;
        }
        if (limit && slot.out_size + slot.err_size == 0) summary += std::string(kSilentAgent);
        finish(slot, code, why, summary);
    }

    // The egress proxy of a run whose network is enclosed.
    Result<std::unique_ptr<net::EgressProxy>> start_proxy(const PlannedRun& run) {
        return start_egress_proxy(run.egress,
                                  "network.allow (every agent) or agents." + run.agent.name +
                                      ".network_allow in .cocode/config.json",
                                  run.run_id);
    }

    void finish(Slot& slot, int code, run::StopReason reason, const std::string& summary) {
        PlannedRun& run = *slot.run;
        slot.proxy.reset();  // every process of the run is gone: nothing is left to go out
        slot.phase = Phase::done;
        slot.ended = clock_now();
        if (watch_) watch_->forget(index_of(slot));
        // What it committed, taken back before anything reads its branch (its verdict): an
        // agent's last take was waited for beside the loop (taken_back); one still in flight
        // (a run stopped between two attempts) is waited for here.
        if (slot.taking) collect_takes(clock_now(), &slot);
        // Nothing of it is left: what it left under the names of cocode's records goes.
        const auto dropped = run::drop_planted_records(run.files);
        slot.result.exit_code = code;
        slot.result.status = code == 0 ? run::RunStatus::completed : run::RunStatus::failed;
        slot.result.reason = reason;
        const std::string status_text(run::status_name(slot.result.status));
        const std::string reason_text(run::reason_name(reason));
        write_output_md(run);
        run::RunEnd& end = slot.end;
        end.status = slot.result.status;
        end.reason = reason;
        end.exit_code = code;
        end.restarts = slot.result.restarts;
        end.end_time = format_utc_timestamp(std::chrono::system_clock::now());
        end.error_summary = summary;
        if (!dropped)
            end.error_summary += (end.error_summary.empty() ? "" : "; ") + dropped.error().message;
        if (!slot.take_error.empty())
            end.error_summary += (end.error_summary.empty() ? "" : "; ") +
                                 std::string("its branch could not be taken back: ") +
                                 slot.take_error;
        if (!slot.keep_error.empty())
            end.error_summary += (end.error_summary.empty() ? "" : "; ") +
                                 std::string("its state could not be kept: ") + slot.keep_error;
        end.ready_commit = slot.ready_commit;
        if (slot.usage) {
            end.usage = usage_of(slot);
            end.usage->attempts = slot.attempts;
        }
        // First into the space kept for it, which a full disk cannot refuse; then run-info and
        // the events, tried again until they land (see retry_ends).
        if (auto kept = run::write_run_end(run.files, end); !kept)
            slot.end_error = kept.error().message;
        slot.end_pending = true;
        write_end(slot);
        update(slot, UpdateKind::finished,
               status_text + " (exit " + std::to_string(code) +
                   (reason_text.empty() ? "" : ", " + reason_text) + ")" +
                   (summary.empty() ? "" : ": " + summary));
    }

    // An agent stopped for writing too much: each file keeps its first and last quarter of the
    // cap, the middle cut with a note saying how much. Said in the run's summary.
    static std::string cap_output(const PlannedRun& run) {
        const std::uint64_t keep = run.output_cap / 4;
        std::string failures;
        for (const auto& file : {run.files.stdout_file(), run.files.stderr_file()})
            if (auto ok = keep_head_and_tail(file, keep, keep,
                                             "\n[cocode: %zu bytes cut here: the run passed its "
                                             "output cap]\n");
                !ok)
                failures += "; " + ok.error().message;
        return "wrote more than its output cap of " + config::format_size(run.output_cap) +
               "; each of its output files keeps its first and last " + config::format_size(keep) +
               failures;
    }

    // run-info and the events learn how the run ended. A failure (ENOSPC, EIO) is kept, not
    // ignored: the end stays in memory, tried again every second while the batch goes on and
    // once more at its end; what never landed is reported, and reconcile() writes it from
    // run-end.json once there is room.
    void write_end(Slot& slot) {
        if (!slot.end_pending) return;
        PlannedRun& run = *slot.run;
        slot.end_tried = clock_now();
        auto info = run::record_end(run.files, run.run_id, slot.end);
        if (!info) {
            slot.end_error = info.error().message;
            return;
        }
        slot.end_pending = false;
        slot.end_error.clear();
        slot.result.ready_commit = info->get("ready_commit").value_or("");
    }

    void retry_ends(Clock::time_point now) {
        for (auto& slot : slots_)
            if (slot.end_pending && now - slot.end_tried >= std::chrono::seconds(1))
                write_end(slot);
    }

    // output.md: the agent's own; else the final answer when its stdout is a coding CLI's
    // stream (not pages of JSON events); else a copy of its stdout (runner contract). Nothing
    // writes stdout any more, so a hard link is that copy without copying what may be
    // hundreds of megabytes; a file system without links gets a real copy.
    static void write_output_md(const PlannedRun& run) {
        std::error_code ec;
        if (fs::exists(fs::symlink_status(run.files.output(), ec))) return;
        if (auto answer = final_answer(read_file_tail(run.files.stdout_file(), kAnswerTail),
                                       declared_stream(run.agent))) {
            if (!answer->empty() && answer->back() != '\n') *answer += '\n';
            if (write_file_atomic(run.files.output(), *answer, 0644, Durability::content)) return;
        }
        fs::create_hard_link(run.files.stdout_file(), run.files.output(), ec);
        // A file system without links: a copy of its last 64 MiB, read as data (the agent
        // could have made its stdout file a link).
        if (ec)
            (void)write_file_atomic(run.files.output(),
                                    read_file_tail(run.files.stdout_file(), std::size_t{64} << 20),
                                    0644, Durability::content);
    }

    const SupervisorOptions& options_;
    // Written by a take-back's thread when it ends; before the slots, whose takes (futures)
    // are waited for when they go.
    UniqueFd takes_done_;
    std::vector<Slot> slots_;
    bool interrupted_ = false;
    bool subreaper_ = false;
    std::optional<NetworkPool> networks_;  // the batch's network namespaces, made as asked
    UniqueFd signals_;
    const ProcessStamp self_ = stamp_of(::getpid());
    const std::string boot_ = boot_id();
    std::optional<ReadyWatch> watch_;
    std::optional<git::Repository> repo_;
    bool repo_opened_ = false;
    bool views_changed_ = true;
    Clock::time_point last_view_{};
};

}  // namespace

int batch_exit_code(const BatchResult& batch) {
    if (batch.interrupted) return static_cast<int>(ExitCode::interrupted);
    int code = batch.unrecorded.empty() ? 0 : static_cast<int>(ExitCode::general);
    bool stopped = false;  // a run a person stopped (`stop`, the dashboard) is no failure
    for (const auto& r : batch.runs) {
        if (r.status == run::RunStatus::completed) continue;
        if (r.reason == run::StopReason::missing_dependency)
            return static_cast<int>(ExitCode::missing_dependency);
        if (r.reason == run::StopReason::interrupted)
            stopped = true;
        else
            code = static_cast<int>(ExitCode::general);
    }
    return code == 0 && stopped ? static_cast<int>(ExitCode::interrupted) : code;
}

std::string_view view_state_name(ViewState state) {
    switch (state) {
        case ViewState::queued:
            return "queued";
        case ViewState::running:
            return "running";
        case ViewState::stopping:
            return "stopping";
        case ViewState::restarting:
            return "restarting";
        case ViewState::completed:
            return "completed";
        case ViewState::failed:
            return "failed";
    }
    return "failed";
}

bool judged_after(const BatchResult& batch, bool check_requested) {
    return check_requested && !batch.interrupted;
}

Result<BatchResult> supervise(std::vector<PlannedRun>& runs, const SupervisorOptions& options) {
    return Supervisor(runs, options).run();
}

}  // namespace cocode::agent
