#include "watching.h"

#include <nlohmann/json.hpp>

#include "agent/prepare.h"
#include "agent/usage.h"
#include "check/outcome.h"
#include "check/work_plan.h"
#include "common/executables.h"
#include "environment/store.h"
#include "proc/command.h"
#include "proc/spawn.h"
#include "run/run_folder.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The last line a command wrote to stderr, for an error that says why.
std::string last_line(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const auto newline = text.rfind('\n');
    return newline == std::string::npos ? text : text.substr(newline + 1);
}

// `cocode-dispatch <argv…>` with the watcher's issue source, in the repository: what it printed,
// or why it failed (its exit code and its last line on stderr).
Result<std::string> run_dispatch(const Workspace& ws, std::vector<std::string> argv,
                                 const SourceFlags& flags) {
    CommandOptions options;
    options.cwd = ws.root;
    auto source = flags.as_args();
    argv.insert(argv.end(), source.begin(), source.end());
    auto ran = run_command(argv, options);
    if (!ran) return std::move(ran).error();
    if (ran->exit_code != 0) {
        const std::string why = last_line(ran->err);
        return Error::general("cocode-dispatch " + argv[1] + " exited " +
                              std::to_string(ran->exit_code) +
                              (why.empty() ? std::string() : ": " + why));
    }
    return std::move(ran->out);
}

// `cocode-dispatch <argv…> --json` (run or continue, detached): the runs' ids.
Result<std::vector<std::string>> dispatch_json(const Workspace& ws, std::vector<std::string> argv,
                                               const SourceFlags& flags) {
    auto printed = run_dispatch(ws, argv, flags);
    if (!printed) return std::move(printed).error();
    const json out = json::parse(*printed, nullptr, false);
    std::vector<std::string> ids;
    if (out.is_object() && out.contains("runs") && out["runs"].is_array())
        for (const auto& r : out["runs"])
            if (r.is_object() && r.contains("run_id") && r["run_id"].is_string())
                ids.push_back(r["run_id"].get<std::string>());
    if (ids.empty()) return Error::general("cocode-dispatch " + argv[1] + " --json named no runs");
    return ids;
}

// `cocode-dispatch run N --detach --publish --json`: the runs' ids. Their supervisor lives on
// by itself (a session of its own), so the runs outlive a watcher that is killed.
Result<std::vector<std::string>> start_runs(const Workspace& ws, const SourceFlags& flags,
                                            long issue, const std::vector<std::string>& agents,
                                            const std::string& by,
                                            const scale::WatchApproval& approval,
                                            std::vector<std::string> more = {}) {
    if (!by.empty()) more.insert(more.end(), {"--requested-by", by});
    // The issue's text as a writer approved it (scale/approval.h).
    if (!approval.event.empty())
        more.insert(more.end(), {"--approved-event", approval.event});
    else if (!approval.at.empty())
        more.insert(more.end(), {"--approved-at", approval.at});
    CommandOptions options;
    options.cwd = ws.root;
    // An issue labelled again still has the worktrees and branches of its last runs: they go
    // first, as `clean` does it — never a branch with commits not pushed; then `run` says so.
    if (scale::cleaned_before_it_runs(run::list_runs(ws.runs_dir()).runs, issue)) {
        auto cleaned = run_command(
            {tool::self_executable("cocode-dispatch").string(), "clean", std::to_string(issue)},
            options);
        if (!cleaned) return std::move(cleaned).error();
    }
    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(),
                                     "run",
                                     std::to_string(issue),
                                     "--detach",
                                     "--publish",
                                     "--json"};
    for (const auto& agent : agents) argv.insert(argv.end(), {"--agent", agent});
    argv.insert(argv.end(), more.begin(), more.end());
    return dispatch_json(ws, std::move(argv), flags);
}

// A plan command (docs/review.md, "Plans"): `plan` is `run N --plan`; `approve`, `revise` and
// `reject` are `continue N --approve --hash H | --revise -m WORDS | --reject`, with who said it
// and the comment, where a refusal is answered. A rejection starts no run.
Result<std::vector<std::string>> start_plan(const Workspace& ws, const SourceFlags& flags,
                                            long issue, const std::vector<std::string>& agents,
                                            const scale::WatchPlan& plan, long long comment,
                                            const scale::WatchApproval& approval) {
    if (plan.verb == check::PlanVerb::plan) {
        return start_runs(ws, flags, issue, agents, plan.by, approval, {"--plan"});
    }
    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(),
                                     "continue",
                                     std::to_string(issue),
                                     "--" + std::string(check::plan_verb_name(plan.verb)),
                                     "--by",
                                     plan.by,
                                     "--comment",
                                     std::to_string(comment),
                                     "--publish"};
    for (const auto& agent : agents) argv.insert(argv.end(), {"--agent", agent});
    if (!plan.hash.empty()) argv.insert(argv.end(), {"--hash", plan.hash});
    if (!plan.words.empty()) argv.insert(argv.end(), {"-m", plan.words});
    if (plan.verb == check::PlanVerb::reject) {  // no run to name
        auto rejected = run_dispatch(ws, std::move(argv), flags);
        if (!rejected) return std::move(rejected).error();
        return std::vector<std::string>{};
    }
    argv.insert(argv.end(), {"--detach", "--json"});
    return dispatch_json(ws, std::move(argv), flags);
}

// `cocode-dispatch continue ISSUE --agent A --from-pr --detach --publish --json [-m WORDS]`:
// the round's run id. `continue` reads the pull request as it is when the round starts.
Result<std::vector<std::string>> start_round(const Workspace& ws, const SourceFlags& flags,
                                             long issue, const std::string& agent,
                                             const std::string& instruction) {
    std::vector<std::string> argv = {tool::self_executable("cocode-dispatch").string(),
                                     "continue",
                                     std::to_string(issue),
                                     "--agent",
                                     agent,
                                     "--from-pr",
                                     "--detach",
                                     "--publish",
                                     "--json"};
    if (!instruction.empty()) argv.insert(argv.end(), {"-m", instruction});
    return dispatch_json(ws, std::move(argv), flags);
}

// The base branch's environment, built ahead: when the base's head moves and its key is one
// the store does not hold, `cocode-dispatch env build --commit SHA` starts in a session of
// its own (its log in .cocode/watch/environment.log); runs that need that key meanwhile wait
// for its build instead of making their own. Looked at once a minute at most.
class Ahead {
  public:
    explicit Ahead(const Workspace& ws) : ws_(ws) {}

    void operator()() {
        if (child_) {
            if (!exited_by(*child_, std::chrono::steady_clock::now())) return;
            const int code = end_group(*child_, std::chrono::seconds(1));
            child_.reset();
            notice(code == 0 ? "environment " + key_ + ": built ahead"
                             : "environment " + key_ + ": building ahead failed (exit " +
                                   std::to_string(code) + "; see " + log().string() + ")");
        }
        const auto now = std::chrono::steady_clock::now();
        if (!scale::due(looked_, now, scale::kAheadEvery)) return;
        looked_ = now;
        agent::DispatchContext context;
        context.repo_root = ws_.root;
        context.config = ws_.config;
        auto base = agent::resolve_base(context);
        if (!base || base->commit == commit_) return;
        commit_ = base->commit;
        auto at = agent::environment_at(context, base->commit);
        if (!at) {
            notice("environment: " + at.error().message);
            return;
        }
        if (!*at || (*at)->key == key_) return;
        key_ = (*at)->key;
        const environment::Store store(environment::default_store());
        std::string why;
        if (auto taken = store.take(key_, &why); taken && *taken) return;
        ChildOptions child;
        child.argv = {tool::self_executable("cocode-dispatch").string(), "env", "build", "--commit",
                      base->commit};
        child.cwd = ws_.root;
        std::error_code ec;
        fs::create_directories(log().parent_path(), ec);
        child.out = ChildStream::append_to(log());
        child.err = ChildStream::append_to(log());
        child.group = ChildOptions::Group::own_session;
        auto pid = start_child(child);
        if (!pid) {
            notice("environment " + key_ + ": cannot build ahead: " + pid.error().message);
            return;
        }
        child_ = *pid;
        notice("environment " + key_ + ": building ahead for " + base->branch + " at " +
               base->commit.substr(0, 12));
    }

  private:
    fs::path log() const { return ws_.root / ".cocode" / "watch" / "environment.log"; }
    const Workspace& ws_;
    std::optional<pid_t> child_;
    std::optional<std::chrono::steady_clock::time_point> looked_;
    std::string commit_, key_;
};

// What became of the pull requests of the repository's runs (check/outcome.h), learnt as the
// watcher goes: at its first pass, then every ten minutes (one conditional request for each
// pair not settled yet: an unchanged answer costs no rate limit), and at once when asked.
class Outcomes {
  public:
    Outcomes(const Workspace& ws, issues::IssueSource& source) : ws_(ws), source_(source) {}

    void operator()(bool now) {
        github::GitHub* github = source_.github_api();
        if (!github) return;  // a local issue folder: no pull requests
        const auto at = std::chrono::steady_clock::now();
        if (!scale::due(looked_, at, scale::kOutcomesEvery, now)) return;
        looked_ = at;
        auto done = check::refresh_outcomes(ws_.root, run::list_runs(ws_.runs_dir()).runs, *github,
                                            std::chrono::system_clock::now());
        if (!done) {
            notice("outcomes: " + done.error().message);
            return;
        }
        for (const auto& line : done->unknown) notice("outcomes: " + line);
        if (done->recorded)
            notice("outcomes: " + std::to_string(done->recorded) +
                   " pull requests' outcomes learnt");
    }

  private:
    const Workspace& ws_;
    issues::IssueSource& source_;
    std::optional<std::chrono::steady_clock::time_point> looked_;
};

}  // namespace

std::chrono::milliseconds duration_flag(const std::string& flag, const std::string& text) {
    auto parsed = config::parse_duration(text);
    if (!parsed) throw Failure(Error::usage(flag + " " + text + ": " + parsed.error().message));
    if (parsed->count() < 1000) throw Failure(Error::usage(flag + " " + text + ": at least 1s"));
    return *parsed;
}

std::unique_ptr<Watching> start_watching(const WatcherArgs& args) {
    const auto lease = duration_flag("--lease", args.lease);
    auto held = std::make_unique<Watching>(Watching{open_workspace(), nullptr, nullptr, "", {}});
    Watching& w = *held;
    const auto agents = config::choose_agents(w.ws.config, args.agents).value_or_throw();
    SourceFlags source_flags = args.source;
    source_flags.options.repo_dir = w.ws.root;
    w.source = issues::open_source(source_flags.resolve("cocode-dispatch")).value_or_throw();
    w.label = args.label.value_or(w.ws.config.trigger.label);

    scale::WatchOptions options;
    options.label = w.label;
    options.lease = std::chrono::duration_cast<std::chrono::seconds>(lease);
    options.max_parallel = args.max_parallel;
    options.repo_root = w.ws.root;
    options.config = &w.ws.config;
    options.source = w.source.get();
    std::string names;
    for (const auto& a : agents) names += (names.empty() ? "" : ", ") + ("`" + a.name + "`");
    options.note = "agents: " + names;
    const Workspace* ws = &w.ws;
    options.dispatch = [ws, source = args.source, mine = args.agents](
                           long issue, const std::vector<std::string>& named, const std::string& by,
                           const scale::WatchApproval& approval) {
        return start_runs(*ws, source, issue, named.empty() ? mine : named, by, approval);
    };
    options.dispatch_plan = [ws, source = args.source, mine = args.agents](
                                long issue, const std::vector<std::string>& named,
                                const scale::WatchPlan& plan, long long comment,
                                const scale::WatchApproval& approval) {
        return start_plan(*ws, source, issue,
                          named.empty() && plan.verb == check::PlanVerb::plan ? mine : named, plan,
                          comment, approval);
    };
    options.dispatch_round = [ws, source = args.source](long issue, const std::string& agent,
                                                        const std::string& instruction) {
        return start_round(*ws, source, issue, agent, instruction);
    };
    options.notice = notice;
    if (w.ws.config.budget.daily_usd)
        options.hold = [ws] {
            return agent::daily_budget_spent(ws->config, run::list_runs(ws->runs_dir()).runs,
                                             std::chrono::system_clock::now());
        };
    options.rounds = true;  // watch polls for them; serve's come by webhook
    auto outcomes = std::make_shared<Outcomes>(w.ws, *w.source);
    w.learn_outcomes = [outcomes] { (*outcomes)(true); };
    options.ahead = [ahead = std::make_shared<Ahead>(w.ws), outcomes] {
        (*ahead)();
        (*outcomes)(false);
    };
    w.watcher = scale::Watcher::open(std::move(options)).value_or_throw();
    return held;
}

std::optional<std::chrono::milliseconds> hold_for_github(const Watching& w) {
    const auto left = scale::github_hold(*w.source->github_api(), std::chrono::system_clock::now());
    if (!left) return std::nullopt;
    notice("GitHub asked for no requests for " + std::to_string(left->count()) +
           " s; holding every step until then");
    return *left;
}

sigset_t block_stop_signals() {
    sigset_t stops;
    sigemptyset(&stops);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stops, sig);
    ::sigprocmask(SIG_BLOCK, &stops, nullptr);
    return stops;
}

bool stop_requested(const sigset_t& stops, std::chrono::milliseconds limit) {
    if (limit.count() < 0) limit = std::chrono::milliseconds(0);
    timespec timeout{static_cast<time_t>(limit.count() / 1000),
                     static_cast<long>(limit.count() % 1000) * 1000000L};
    return ::sigtimedwait(&stops, nullptr, &timeout) > 0;
}

}  // namespace cocode::dispatch_cli
