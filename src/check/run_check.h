// Checking one run of cocode-dispatch from its run folder, and where its results land:
// check.json and check.md in the run folder (whole verify output beside them), a CHECK event
// on the run's events and the bus.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "check/judge.h"
#include "check/publish.h"
#include "check/verdict.h"
#include "config/config.h"
#include "core/result.h"
#include "issues/source.h"
#include "proc/interrupt.h"
#include "run/run_folder.h"

namespace cocode::check {

inline constexpr const char* kCheckJson = run::kCheckJsonFile;
inline constexpr char kCheckMarkdown[] = "check.md";
// What of a plan round's answer is read as its plan: its last 64 KiB.
inline constexpr std::size_t kPlanAnswerCap = 64 << 10;

// The configuration commit `base` holds (defaults when it holds none): the rules a change is
// judged by in CI, so that it cannot loosen them itself.
Result<config::Config> config_at_commit(const std::filesystem::path& worktree,
                                        const std::string& base);

// What a check's clean tree gets under the configuration `rules` (the seal's, or the base
// commit's): its worktree_setup, and its environment — `environment` in `rules`, else the
// devcontainer.json of `base` — keyed as sealed (`sealed_key`; "" : the judged commit's own).
Result<TreeRules> tree_rules_for(const config::Config& rules, const std::filesystem::path& worktree,
                                 const std::filesystem::path& repo_root, const std::string& base,
                                 const std::string& sealed_key);

// The paths cocode writes into a repository's main worktree (.cocode/runs, seals, checks,
// issues, the worktree root): what the worktree item leaves out.
std::vector<std::string> cocode_own_paths(const config::Config& config);

// The judge's input for a run that has ended (a run still queued or running is a usage
// error: its exit code is not known yet).
Result<JudgeInput> input_for_run(const run::RunRecord& record, const config::Config& config);

// The judge's input for a checkout (`cocode-check --worktree`: CI's checkout of a change, the
// pre-push gate's): its rules are the base commit's, so that a change cannot loosen the rules
// it is judged by; the ready marker the configuration's, or `marker` when given; the clean
// tree's rules the base commit's; the report in `report_dir`, else
// `.cocode/checks/<head>/` of the main worktree (excluded from git). Its runner is the
// caller's to set (the sandbox is agent/'s).
struct CheckoutAsk {
    std::filesystem::path worktree;
    std::string base;
    std::optional<std::string> head;
    std::optional<int> exit_code;
    std::string marker;  // COCODE_READY_MARKER, when set
    long issue = 0;
    std::string agent;
    std::optional<std::string> branch;
    std::optional<std::filesystem::path> report_dir;
};
struct CheckoutInput {
    config::Config config;  // the base commit's
    JudgeInput input;
    std::filesystem::path main_root;  // the main worktree of the checkout's repository
};
Result<CheckoutInput> input_for_checkout(const CheckoutAsk& ask);

// While it lives, the run shows as being checked at its step (run/checking.h: `status` shows
// it, `stop` finds it) and a person's stop of the run (`cocode-dispatch stop`, the dashboard's
// Stop) is asked of this thread as Ctrl-C is (proc/interrupt.h): a verify's group ends, a
// request to GitHub is cut short. A stop request left from before the check is not for it
// (the check's first step removes it); one that came as the check ended is for the publishing that
// follows. With no run id it does nothing.
class RunStep {
  public:
    enum class Begins { the_check, a_later_step };
    RunStep(const std::filesystem::path& repo_root, const std::string& run_id,
            const std::string& first_step, Begins begins = Begins::the_check);
    ~RunStep();
    RunStep(const RunStep&) = delete;
    RunStep& operator=(const RunStep&) = delete;
    void next(const std::string& step, std::optional<std::chrono::milliseconds> timeout);

  private:
    std::filesystem::path root_;
    std::string run_id_;
    std::optional<StopScope> scope_;
};

// Judges, then writes check.json and check.md into input.report_dir (atomically) and, for a
// run, appends a CHECK event.
Result<Verdict> judge_and_record(const JudgeInput& input);

// The verdict recorded in a run folder, if any; none while the run is queued or running.
std::optional<Verdict> recorded_verdict(const std::filesystem::path& run_folder);

// A run's verdict is on its issue: a PUBLISH event (the comment's address) on the run's events
// and the bus, after the CHECK event judge_and_record appended.
Result<void> note_published(const std::filesystem::path& run_folder, const std::string& run_id,
                            const std::string& comment_url, const std::string& pr_url = "");
// What publishing a run's verdict adds from its seal (which the agent could not write): how to
// go on from it on another machine (the continuation record); and for a round from a pull
// request, a push of its branch (the pull request shows it), the threads it was given and
// where the round began, so that publishing answers each thread.
void add_run_parts(PublishRequest& request, const Verdict& verdict,
                   const std::filesystem::path& repo_root);
// Publishes a run's verdict on its issue as the configuration asks (publish.h), then notes it.

Result<PublishResult> publish_run_verdict(issues::IssueSource& source, const config::Config& config,
                                          const run::RunRecord& record, const Verdict& verdict);
// Whether the run's latest verdict was published: a PUBLISH event after its last CHECK event.
// Events the agent wrote while it ran all come before that CHECK, so none of them counts.
bool verdict_published(const std::filesystem::path& run_folder);

// After a batch of cocode-dispatch: every ended run judged (up to `parallel` at once; verify
// commands are the project's tests), then, with `publish_to`, each verdict published in turn.
// Where the rules a run is judged by (its seal's configuration, `sealed`) differ from the
// configuration's text now (`current`): the dotted names of what judging reads — check.*,
// worktree_setup.*, environment.*, ready_marker, network.* — whose values differ, at most
// `limit` of them. Empty when they agree or either is not JSON.
std::vector<std::string> judging_rules_changed(const std::string& sealed,
                                               const std::string& current, std::size_t limit = 5);

// Why a run is not judged at all, "" when it is: it was interrupted (Ctrl-C, `stop`) or its
// agent never started (its program missing, its setup failed, it could not be started).
// Nothing of the agent's doing is there to judge; the scorecard counts such runs apart.
std::string not_judged_because(const run::RunRecord& record);

struct BatchCheck {
    std::string run_id;
    std::optional<Verdict> verdict;
    std::string error;         // why there is no verdict, or why publishing failed
    std::string comment_url;   // when published
    std::string pr_url;        // when a pull request was opened
    bool interrupted = false;  // the check was stopped (Ctrl-C, `stop`): no verdict, no error
    bool publish_interrupted = false;  // its publishing was stopped: the verdict only here
};
// Runs judged as they are handed in (each as soon as it ended, wherever it started), up to
// `parallel` at once, each verdict published right after (one publication at a time: the
// source is shared). `on_judged` hears of each run once judged (and published), from the
// thread that judged it. `runner` runs the clean trees' setup and the verify commands
// (agent/confined.h).
class Judges {
  public:
    Judges(const config::Config& config, int parallel, issues::IssueSource* publish_to,
           CommandRunner runner, std::function<void(const BatchCheck&)> on_judged = nullptr);
    ~Judges();  // waits for the judging under way
    Judges(const Judges&) = delete;
    Judges& operator=(const Judges&) = delete;

    // Thread-safe; a run handed in twice is judged once.
    void add(const run::RunRecord& run);
    bool has(const std::string& run_id) const;
    // Waits until every run handed in is judged: their checks, in the order handed in.
    std::vector<BatchCheck> finish();

  private:
    void work();
    const config::Config& config_;
    issues::IssueSource* publish_to_;
    CommandRunner runner_;
    std::function<void(const BatchCheck&)> on_judged_;
    int parallel_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<run::RunRecord> runs_;
    std::vector<BatchCheck> checks_;
    std::size_t next_ = 0;  // the first run not taken by a judge yet
    std::size_t done_ = 0;
    std::vector<std::thread> threads_;
    int idle_ = 0;
    bool closing_ = false;
    std::mutex publishing_;
};

// The same for a batch handed in at once: every run judged, then their checks.
std::vector<BatchCheck> check_batch(
    const std::vector<run::RunRecord>& runs, const config::Config& config, int parallel,
    issues::IssueSource* publish_to, const CommandRunner& runner,
    const std::function<void(const BatchCheck&)>& on_judged = nullptr);

// Where a run's issue lives, from its issue_url: a local store (file://…/<n>.json) or a
// GitHub repository (https://<host>/<owner>/<name>/issues/<n>), for publishing to the run's
// own source when none is named.
struct SourceHint {
    std::optional<std::filesystem::path> issues_dir;
    std::optional<std::string> repo;     // owner/name
    std::optional<std::string> api_url;  // for a host other than github.com
};
SourceHint source_of(const std::string& issue_url);

}  // namespace cocode::check
