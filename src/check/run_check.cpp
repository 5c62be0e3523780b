#include "check/run_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "check/gate.h"
#include "check/publish.h"
#include "check/report.h"
#include "config/presets.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "environment/key.h"
#include "environment/store.h"
#include "git/repository.h"
#include "github/reach.h"
#include "proc/interrupt.h"
#include "run/checking.h"
#include "run/rounds.h"
#include "run/run_folder.h"
#include "run/seal.h"

namespace cocode::check {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::optional<double> seconds_between(const std::string& start, const std::string& end) {
    auto a = parse_utc_timestamp(start), b = parse_utc_timestamp(end);
    if (!a || !b || *b < *a) return std::nullopt;
    return std::chrono::duration<double>(*b - *a).count();
}

// A run its time limit ended, of an agent that talks to a model: can that endpoint be reached
// from here? An unreachable one is the usual reason a coding CLI waits silently until killed.
std::string endpoint_diagnosis(const run::RunRecord& record, const config::Config& config) {
    if (record.exit_code != static_cast<int>(ExitCode::timeout)) return {};
    const config::AgentConfig* agent = config.find_agent(record.agent);
    if (!agent) return {};
    auto endpoint = config::model_endpoint(*agent, github::getenv_string);
    if (!endpoint.url) return {};
    auto reached = github::probe_endpoint(*endpoint.url, std::chrono::seconds(3));
    if (reached) return {};
    return "its model endpoint " + *endpoint.url +
           " cannot be reached from here: " + reached.error().message;
}

}  // namespace

Result<config::Config> config_at_commit(const fs::path& worktree, const std::string& base) {
    auto repo = git::Repository::open(worktree);
    if (!repo) return std::move(repo).error();
    auto text = repo->file_at(base, config::kConfigFile);
    if (!text) return std::move(text).error();
    if (!*text) return config::Config{};
    return config::parse_config(**text, base.substr(0, 12) + ":" + config::kConfigFile, worktree);
}

Result<TreeRules> tree_rules_for(const config::Config& rules, const fs::path& worktree,
                                 const fs::path& repo_root, const std::string& base,
                                 const std::string& sealed_key) {
    TreeRules tree;
    tree.setup = rules.setup;
    tree.repo_root = repo_root;
    tree.base = base;
    tree.environment_key = sealed_key;
    tree.store = environment::default_store();
    auto spec = environment::spec_at(rules, worktree, base);
    if (!spec) return std::move(spec).error();
    tree.environment = std::move(*spec);
    return tree;
}

std::vector<std::string> cocode_own_paths(const config::Config& config) {
    std::vector<std::string> own = {".cocode/runs", run::kSealsDir, ".cocode/checks",
                                    ".cocode/issues"};
    const fs::path root = fs::path(config.worktree_root).lexically_normal();
    if (!root.is_absolute()) own.push_back(root.generic_string());
    return own;
}

namespace {

// What started a round, for its line: the first round is the issue's.
std::string round_trigger_text(const std::string& trigger, long issue) {
    return !trigger.empty() ? trigger : issue ? "issue #" + std::to_string(issue) : "the run";
}

}  // namespace

Result<CheckoutInput> input_for_checkout(const CheckoutAsk& ask) {
    CheckoutInput out;
    auto opened = git::Repository::open(ask.worktree);
    if (!opened) return Error::usage("--worktree: " + opened.error().message);
    auto repo = std::move(opened).value();
    if (!repo.lookup(ask.base))
        return Error::usage("--base " + ask.base + ": no such commit in " + ask.worktree.string());
    auto config = config_at_commit(ask.worktree, ask.base);
    if (!config) return std::move(config).error();
    out.config = std::move(*config);
    JudgeInput& input = out.input;
    input.worktree = ask.worktree;
    input.base = ask.base;
    if (ask.head) input.head = *ask.head;
    input.exit_code = ask.exit_code;
    input.marker = ask.marker.empty() ? out.config.ready_marker : ask.marker;
    input.rules = out.config.check;
    input.rules_source = "the base commit's";
    out.main_root = repo.main_work_dir();
    auto tree = tree_rules_for(out.config, ask.worktree, out.main_root, ask.base, "");
    if (!tree) return std::move(tree).error();
    input.tree = std::move(*tree);
    input.worktree_own_paths = cocode_own_paths(out.config);
    input.issue = ask.issue;
    input.agent = ask.agent;
    input.branch = ask.branch.value_or(repo.head_branch().value_or(""));
    if (ask.report_dir) {
        input.report_dir = *ask.report_dir;
    } else {
        auto head = repo.lookup(input.head);
        if (!head) return Error::usage("--head " + input.head + ": no such commit");
        input.report_dir = out.main_root / ".cocode" / "checks" / head->id.substr(0, 12);
        (void)repo.exclude("/.cocode/checks/");
    }
    return out;
}

Result<JudgeInput> input_for_run(const run::RunRecord& record, const config::Config& config) {
    if (run::is_active(record.status))
        return Error::usage(
            "run " + record.run_id + " is still " + std::string(run::status_name(record.status)) +
            "; check it when it has ended (cocode-dispatch status " + record.run_id + ")");
    if (const std::string why = not_judged_because(record); !why.empty())
        return Error::general("run " + record.run_id + " is not judged: " + why);
    if (record.base_commit.empty())
        return Error::general(record.folder.string() +
                              "/run-info.yaml: field 'base_commit' is empty");
    std::error_code ec;
    JudgeInput input;
    bool network_fails = false;
    std::optional<config::Config> rules;  // what the run is judged by, for its clean tree
    std::string sealed_key;
    input.exit_code = record.exit_code;
    input.run_summary = record.error_summary;
    if (auto why = endpoint_diagnosis(record, config); !why.empty())
        input.run_summary += (input.run_summary.empty() ? "" : "; ") + why;
    // What the run is judged by comes from its seal, which the agent could not write: never
    // from run-info.yaml or the live configuration, which it could. The run is the one its
    // folder's name says (cocode named it), whatever run-info.yaml claims; a run without a
    // seal is not judged (its run-info would choose its own base and rules).
    const fs::path repo_root = record.folder.parent_path().parent_path().parent_path();
    const std::string run_id = record.folder.filename().string();
    auto seal = run::read_seal(repo_root, run_id);
    if (!seal) return std::move(seal).error();
    if (!*seal)
        return Error::general("run " + run_id + " has no seal (" +
                              run::seal_path(repo_root, run_id).string() +
                              "): nothing says what it is judged by; cocode-check --worktree "
                              "DIR --base SHA judges a checkout by its base commit's rules");
    input.repository = repo_root;
    {
        const run::Seal& s = **seal;
        input.base = s.base_commit;
        input.head = "refs/heads/" + s.branch;
        input.marker = s.marker;
        input.sealed_refs = s.refs;
        if (!s.config_text.empty()) {
            auto sealed = config::parse_config(
                s.config_text, run::seal_path(repo_root, record.run_id).string() + " (config)",
                repo_root);
            if (!sealed) return Error::general(sealed.error().message);
            input.rules = sealed->check;
            network_fails = sealed->network.fail_on_blocked;
            rules = std::move(*sealed);
        } else {
            rules = config::Config{};
        }
        sealed_key = s.environment_key;
        input.rules_source = "as dispatched";
        input.plan_round = s.plan_round;
        input.plan = s.plan;
        input.requested_by = s.requested_by;
        if (s.plan_round)  // the plan is the agent's answer (its final message, or stdout)
            input.plan_answer =
                read_file_tail(run::RunFiles{record.folder}.output(), kPlanAnswerCap);
    }
    // The worktree is where cocode made it — the sealed configuration's worktree_root and the
    // pair's name, the sealed branch without its prefix — never the path run-info.yaml holds.
    const fs::path root_of_worktrees = config::worktree_root_of(rules->worktree_root, repo_root);
    const std::string branch = input.head.substr(std::string_view("refs/heads/").size());
    if (branch.rfind(rules->branch_prefix, 0) != 0 || branch.size() == rules->branch_prefix.size())
        return Error::general("run " + run_id + ": its sealed branch " + branch +
                              " is not one of cocode's (" + rules->branch_prefix + "…)");
    input.worktree = root_of_worktrees / branch.substr(rules->branch_prefix.size());
    if (!fs::is_directory(input.worktree, ec))
        return Error::general("run " + run_id + ": its worktree " + input.worktree.string() +
                              " is gone (cleaned?); nothing to check");
    // cocode's git reads the main repository, never the worktree's git folder (the agent's).
    auto tree = tree_rules_for(*rules, repo_root, repo_root, input.base, sealed_key);
    if (!tree) return std::move(tree).error();
    input.tree = std::move(*tree);
    input.worktree_own_paths = cocode_own_paths(*rules);
    if (!sealed_key.empty())
        for (const auto& path : environment::Store(input.tree.store).paths_of(sealed_key))
            input.worktree_own_paths.push_back(path);
    // The proxy's record, which the sandbox kept out of the agent's reach: there only when
    // the run's network was enclosed.
    if (const fs::path record_file = record.folder / "egress.jsonl"; fs::exists(record_file, ec)) {
        NetworkRecord network;
        network.fail_on_blocked = network_fails;
        for (auto& e : net::read_egress(record_file))
            if (!e.allowed) network.blocked.push_back(std::move(e));
        input.network = std::move(network);
    }
    input.report_dir = record.folder;
    input.run_id = record.run_id;
    input.agent = record.agent;
    input.branch = branch;  // the seal's, never run-info's
    input.issue = record.issue;
    input.issue_url = record.issue_url;
    input.run_seconds = seconds_between(record.start_time, record.end_time);
    if (auto end = run::read_run_end(run::RunFiles{record.folder});
        end && end->usage && !end->usage->empty())
        input.usage = end->usage;
    input.round = record.round;
    input.round_trigger = record.round_trigger;
    input.round_from = record.round_from;
    // Earlier rounds only for a round beyond the first: a first round has none, and listing
    // every run folder on each check is work most checks need not do.
    const auto rounds = record.round > 1
                            ? run::rounds_of(run::list_runs(record.folder.parent_path()).runs,
                                             record.issue, record.agent)
                            : std::vector<run::RoundSeen>{};
    for (const auto& seen : rounds) {
        if (seen.number >= record.round) break;
        input.earlier_rounds.push_back(
            {seen.number, round_trigger_text(seen.run.round_trigger, record.issue),
             seen.judged ? std::optional<bool>(seen.judged->pass) : std::nullopt,
             seen.run.round_from.empty() ? seen.run.base_commit : seen.run.round_from,
             seen.judged ? seen.judged->head : seen.run.ready_commit, seen.run.run_id,
             seen.run.plan_round});
    }
    return input;
}

namespace {

// `a` and `b` under `path`, into `out`: the leaves whose values differ.
void differences(const json& a, const json& b, const std::string& path,
                 std::vector<std::string>& out, std::size_t limit) {
    if (out.size() >= limit || a == b) return;
    if (a.is_object() && b.is_object()) {
        std::set<std::string> keys;
        for (const auto& [key, value] : a.items()) keys.insert(key);
        for (const auto& [key, value] : b.items()) keys.insert(key);
        for (const auto& key : keys)
            differences(a.value(key, json()), b.value(key, json()), path + "." + key, out, limit);
        return;
    }
    out.push_back(path);
}

}  // namespace

std::vector<std::string> judging_rules_changed(const std::string& sealed,
                                               const std::string& current, std::size_t limit) {
    const json a = json::parse(sealed, nullptr, false);
    const json b = json::parse(current, nullptr, false);
    std::vector<std::string> out;
    if (!a.is_object() || !b.is_object()) return out;
    for (const char* key : {"check", "worktree_setup", "environment", "ready_marker", "network"})
        differences(a.value(key, json()), b.value(key, json()), key, out, limit);
    return out;
}

std::string not_judged_because(const run::RunRecord& record) {
    switch (run::not_judged(record.reason)) {
        case run::NotJudged::interrupted:
            return "it was interrupted (" +
                   (record.error_summary.empty() ? std::string("Ctrl-C or stop")
                                                 : record.error_summary) +
                   "): nothing of the agent's to judge";
        case run::NotJudged::never_started:
            return "its agent never started (" + std::string(run::reason_name(record.reason)) +
                   "): nothing of the agent's to judge";
        case run::NotJudged::no:
            break;
    }
    return {};
}

RunStep::RunStep(const fs::path& repo_root, const std::string& run_id,
                 const std::string& first_step, Begins begins) {
    if (run_id.empty() || repo_root.empty()) return;
    root_ = repo_root;
    run_id_ = run_id;
    const fs::path request = run::stop_request_path(root_, run_id_);
    std::error_code ec;
    if (begins == Begins::the_check) fs::remove(request, ec);
    scope_.emplace([request] {
        std::error_code missing;
        return fs::exists(request, missing);
    });
    next(first_step, std::nullopt);
}

void RunStep::next(const std::string& step, std::optional<std::chrono::milliseconds> timeout) {
    if (run_id_.empty()) return;
    (void)run::note_checking(
        root_, run_id_, {step, format_utc_timestamp(std::chrono::system_clock::now()), timeout});
}

RunStep::~RunStep() {
    if (run_id_.empty()) return;
    run::clear_checking(root_, run_id_);
    std::error_code ec;
    fs::remove(run::stop_request_path(root_, run_id_), ec);
}

Result<Verdict> judge_and_record(const JudgeInput& given) {
    std::error_code ec;
    fs::create_directories(given.report_dir, ec);
    if (ec)
        return Error::general("cannot create " + given.report_dir.string() + ": " + ec.message());
    JudgeInput input = given;
    // Its check's record beside the seal is gone once judge() returns, before what follows;
    // how the check ended is kept before it goes (`stop`, waiting for the check to end, reads
    // the one once the other is gone).
    bool interrupted = false;
    auto verdict = [&] {
        RunStep check(given.repository, given.run_id, "its start");
        input.on_step = [&check, then = given.on_step](
                            const std::string& step,
                            std::optional<std::chrono::milliseconds> timeout) {
            check.next(step, timeout);
            if (then) then(step, timeout);
        };
        auto judged = judge(input);
        interrupted = !judged && judged.error().code == ExitCode::interrupted;
        if (!input.run_id.empty() && (judged || interrupted))
            (void)run::note_check_ended(input.report_dir, interrupted);
        return judged;
    }();
    if (interrupted && !input.run_id.empty()) {
        (void)run::append_event(input.report_dir, input.run_id, "CHECK_INTERRUPTED",
                                {{"why", verdict.error().message}});
        return verdict;
    }
    if (!verdict) return verdict;
    if (input.round > 1 || !input.earlier_rounds.empty()) {
        verdict->round = input.round;
        verdict->rounds = input.earlier_rounds;
        verdict->rounds.push_back(
            {input.round, round_trigger_text(input.round_trigger, input.issue), verdict->pass,
             input.round_from.empty() ? verdict->base : input.round_from, verdict->head,
             input.run_id, input.plan_round});
    }
    if (auto w = write_file_atomic(input.report_dir / kCheckJson,
                                   json_dump(to_json(*verdict), 2) + "\n");
        !w)
        return std::move(w).error();
    if (auto w = write_file_atomic(input.report_dir / kCheckMarkdown, render_markdown(*verdict));
        !w)
        return std::move(w).error();
    if (!input.run_id.empty()) {
        (void)run::append_event(
            input.report_dir, input.run_id, "CHECK",
            {{"verdict", verdict->pass ? "PASS" : "FAIL"}, {"head", verdict->head}});
    }
    return verdict;
}

std::optional<Verdict> recorded_verdict(const fs::path& run_folder) {
    // While its agent may be alive, what is in its folder under the verdict's name is the
    // agent's: a verdict is cocode's only once the run has ended (what was planted is gone).
    if (const auto status = run::kept_status(run_folder);
        status && (*status == run::RunStatus::queued || *status == run::RunStatus::running))
        return std::nullopt;
    auto text = read_file_no_follow(run_folder / kCheckJson, std::size_t{16} << 20);
    if (!text) return std::nullopt;
    auto parsed = parse_json_text(*text, (run_folder / kCheckJson).string(), "a check result");
    if (!parsed || !parsed->is_object()) return std::nullopt;
    return verdict_from_json(*parsed);
}

Result<void> note_published(const fs::path& run_folder, const std::string& run_id,
                            const std::string& comment_url, const std::string& pr_url) {
    nlohmann::json fields = {{"comment", comment_url}};
    if (!pr_url.empty()) fields["pull_request"] = pr_url;
    auto noted = run::append_event(run_folder, run_id, "PUBLISH", fields);
    if (!noted)
        return Error::general("published, but could not note it in " +
                              run::RunFiles{run_folder}.events().string() + ": " +
                              noted.error().message);
    return {};
}

void add_run_parts(PublishRequest& request, const Verdict& verdict, const fs::path& repo_root) {
    if (verdict.run_id.empty()) return;
    auto seal = run::read_seal(repo_root, verdict.run_id);
    if (!seal || !*seal) return;
    // With the seal, a round can go on from this run on a machine that never had it.
    request.continuation = continuation_record(
        {**seal, read_file_tail(run::RunFiles{repo_root / run::kRunsDir / verdict.run_id}.output(),
                                kContinuationOutputCap)});
    if (verdict.rounds.empty() || !(*seal)->pull_request) return;
    // The pull request is where a round from it is seen: its branch is pushed (never forced).
    request.push = true;
    request.round_pull = (*seal)->pull_request;
    request.threads = (*seal)->threads;
    request.round = verdict.round;
    request.round_from = verdict.rounds.back().from;
    request.run_id = verdict.run_id;
}

Result<PublishResult> publish_run_verdict(issues::IssueSource& source, const config::Config& config,
                                          const run::RunRecord& record, const Verdict& verdict) {
    // Published from the main repository: cocode's git never runs in the worktree's git folder,
    // which is the agent's (its remote, its credential helper would be the agent's choice).
    auto request = configured_request(
        config, record.folder.parent_path().parent_path().parent_path(), verdict);
    const fs::path repo_root = record.folder.parent_path().parent_path().parent_path();
    add_run_parts(request, verdict, repo_root);
    RunStep publishing(repo_root, record.run_id, "publishing", RunStep::Begins::a_later_step);
    auto published = publish(source, verdict, request);
    (void)run::note_publish_ended(record.folder,
                                  !published && published.error().code == ExitCode::interrupted);
    if (!published) return published;
    // The merge gate follows each verdict on the pull request's head (docs/review.md).
    github::GitHub* github = source.github_api();
    if (config.gate.approvals > 0 && !verdict.plan_round && github) {
        auto pull = github->open_pull_request_for(verdict.branch);
        if (pull && *pull) {
            github::PullRequest judged = **pull;
            judged.head_sha = verdict.head;  // the commit judged (and pushed, when asked)
            auto gate = read_gate(*github, config, judged, verdict.issue, verdict.agent);
            Result<void> written =
                gate ? write_gate(*github, config, judged, verdict.agent, *gate) : gate.error();
            published->notes.push_back(written ? "gate: " + gate->state + ": " + gate->description
                                               : "gate not set: " + written.error().message);
        } else if (!pull) {
            published->notes.push_back("gate not set: " + pull.error().message);
        }
    }
    if (auto noted =
            note_published(record.folder, record.run_id, published->comment_url, published->pr_url);
        !noted)
        return std::move(noted).error();
    return published;
}

bool verdict_published(const fs::path& run_folder) {
    return run::last_event_of(run_folder, {"CHECK", "PUBLISH"}) == "PUBLISH";
}

Judges::Judges(const config::Config& config, int parallel, issues::IssueSource* publish_to,
               CommandRunner runner, std::function<void(const BatchCheck&)> on_judged)
    : config_(config),
      publish_to_(publish_to),
      runner_(std::move(runner)),
      on_judged_(std::move(on_judged)),
      parallel_(std::max(1, parallel)) {}

Judges::~Judges() {
    {
        std::lock_guard lock(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    for (auto& thread : threads_) thread.join();
}

void Judges::add(const run::RunRecord& run) {
    std::lock_guard lock(mutex_);
    if (std::any_of(runs_.begin(), runs_.end(),
                    [&](const run::RunRecord& r) { return r.run_id == run.run_id; }))
        return;
    runs_.push_back(run);
    checks_.emplace_back();
    checks_.back().run_id = run.run_id;
    // A judge of its own while fewer than `parallel` judge: none waits behind a long verify.
    if (idle_ == 0 && static_cast<int>(threads_.size()) < parallel_)
        threads_.emplace_back([this] { work(); });
    changed_.notify_all();
}

bool Judges::has(const std::string& run_id) const {
    std::lock_guard lock(mutex_);
    return std::any_of(runs_.begin(), runs_.end(),
                       [&](const run::RunRecord& r) { return r.run_id == run_id; });
}

void Judges::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        ++idle_;
        changed_.wait(lock, [&] { return closing_ || next_ < runs_.size(); });
        --idle_;
        if (next_ >= runs_.size()) return;  // closing, nothing left
        const std::size_t i = next_++;
        const run::RunRecord run = runs_[i];
        lock.unlock();
        BatchCheck check;
        check.run_id = run.run_id;
        auto input = input_for_run(run, config_);
        if (interrupt_requested()) {
            check.interrupted = true;
            check.error = "interrupted before its check";
        } else if (!input) {
            check.error = input.error().message;
        } else {
            input->runner = runner_;
            auto verdict = judge_and_record(*input);
            if (verdict)
                check.verdict = std::move(*verdict);
            else
                check.error = verdict.error().message;
            check.interrupted = !verdict && verdict.error().code == ExitCode::interrupted;
        }
        // Publishing is a step of the check: an interrupt before it leaves the verdict here.
        if (check.verdict && publish_to_ && interrupt_requested()) {
            check.error = "interrupted before publishing: the verdict is only here";
        } else if (check.verdict && publish_to_) {
            std::lock_guard publishing(publishing_);
            auto published = publish_run_verdict(*publish_to_, config_, run, *check.verdict);
            if (published) {
                check.comment_url = published->comment_url;
                check.pr_url = published->pr_url;
            } else {
                check.error = "publishing: " + published.error().message;
                check.publish_interrupted = published.error().code == ExitCode::interrupted;
            }
        }
        if (on_judged_) on_judged_(check);
        lock.lock();
        checks_[i] = std::move(check);
        ++done_;
        changed_.notify_all();
    }
}

std::vector<BatchCheck> Judges::finish() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_ == runs_.size(); });
    return checks_;
}

std::vector<BatchCheck> check_batch(const std::vector<run::RunRecord>& runs,
                                    const config::Config& config, int parallel,
                                    issues::IssueSource* publish_to, const CommandRunner& runner,
                                    const std::function<void(const BatchCheck&)>& on_judged) {
    Judges judges(config, parallel, publish_to, runner, on_judged);
    for (const auto& run : runs) judges.add(run);
    return judges.finish();
}

SourceHint source_of(const std::string& issue_url) {
    SourceHint hint;
    if (issue_url.rfind("file://", 0) == 0) {
        hint.issues_dir = fs::path(issue_url.substr(7)).parent_path();
        return hint;
    }
    // https://<host>/<owner>/<name>/issues/<n>
    if (issue_url.rfind("https://", 0) != 0) return hint;
    std::string rest = issue_url.substr(8);
    std::size_t slash = rest.find('/');
    if (slash == std::string::npos) return hint;
    const std::string host = rest.substr(0, slash);
    std::string path = rest.substr(slash + 1);
    std::size_t issues = path.find("/issues/");
    if (issues == std::string::npos) return hint;
    hint.repo = path.substr(0, issues);
    if (host != "github.com") hint.api_url = "https://" + host + "/api/v3";
    return hint;
}

}  // namespace cocode::check
