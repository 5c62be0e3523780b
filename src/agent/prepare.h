// Preparing runs: for each (issue, agent) a run id, a run folder with its files, a worktree
// on its own branch from the base, the hook's pointer, the agent's exact environment.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/egress.h"
#include "config/config.h"
#include "config/presets.h"
#include "core/result.h"
#include "environment/spec.h"
#include "environment/store.h"
#include "environment/view.h"
#include "github/types.h"
#include "proc/sandbox.h"
#include "run/run_folder.h"
#include "run/seal.h"

namespace cocode::agent {

// A round on the pull request (docs/review.md): the pair's last run goes on, on its branch,
// judged by the rules sealed at its first round. `feedback` is data (a review's threads, a
// failing check's log, words typed at `continue`), already stripped of hidden text.
struct RoundRequest {
    std::string trigger = "terminal";  // "terminal", "review by @login", "check <name>"
    std::string feedback;
    // From a pull request: its number and the threads the feedback holds, sealed with the
    // round so that publishing it answers each of them (and only them).
    long pull_request = 0;
    std::vector<run::SealedThread> threads;
    // A plan round (docs/review.md, "Plans"): the worktree read-only, a plan for an answer.
    bool plan = false;
    // The code round an approved plan starts: sealed with it, and every round after it.
    std::optional<run::SealedPlan> approved;
    long long comment = 0;  // the GitHub comment that asked for it: a redelivery is seen
};

struct DispatchContext {
    std::filesystem::path repo_root;  // the main worktree, absolute
    config::Config config;
    std::string project_id;  // JRUN_PROJECT_ID: owner/name when known, else the folder name
    bool resume = false;     // continue an existing worktree for the same (issue, agent)
    std::optional<RoundRequest> round;  // each pair's next round rather than a new run
    std::map<std::string, RoundRequest> round_of_agent;  // a pair's own, over `round`
    const RoundRequest* round_for(const std::string& agent) const {
        auto own = round_of_agent.find(agent);
        return own != round_of_agent.end() ? &own->second : round ? &*round : nullptr;
    }
    bool plan = false;         // new runs are plan rounds (run --plan, trigger.plan)
    std::string requested_by;  // who asked on GitHub ("@login"): sealed, for the merge gate
    std::optional<config::Duration> timeout;  // --timeout, over every agent's own
    std::function<void(std::string_view)> notice;
    // GIT_AUTHOR_* and GIT_COMMITTER_* from the repository's user.name and user.email, given
    // to agents whose environment does not already set them (plan_runs fills it in).
    std::vector<std::pair<std::string, std::string>> commit_identity;
    // Whether agents can run in bubblewrap here (plan_runs probes it once, unless the
    // configuration says `sandbox: none`).
    std::optional<SandboxProbe> sandbox;
    // Routing by evidence (check/route.h): per issue, the agents it gets of those given, and
    // why (sealed with its runs). An issue not listed gets every agent given.
    struct IssueRoute {
        std::vector<std::string> agents;
        std::string why;
    };
    std::map<long, IssueRoute> routed;
    // A replay (replay/run.h): the task's id, sealed with the run; and what the agent must not
    // see at all (the main repository the replay's own was made from). A replay runs only in
    // the sandbox.
    std::string replay_task;
    std::vector<std::filesystem::path> hidden_first;

    std::filesystem::path runs_dir() const { return repo_root / run::kRunsDir; }
    std::filesystem::path worktree_root() const;
};

// One (issue, agent) run, ready to start.
struct PlannedRun {
    std::string run_id;
    std::string route;          // why routing by evidence chose this agent for its issue, if it did
    std::string parent_run_id;  // the run this one resumes
    int round = 1;              // the round on the pull request (a resumed run keeps its own)
    std::string round_trigger;
    std::string round_from;         // the branch's head when the round began
    bool plan_round = false;        // a plan round: read-only worktree, a plan for an answer
    long long request_comment = 0;  // the GitHub comment that asked for this round
    // A round of claude, codex or gemini: the CLI's own session of the last round, resumed
    // when it is on this machine; "" for a new session (docs/review.md, "The CLI's own
    // session").
    std::string resumed_session;
    // How its agent is billed: "key", "subscription" or "" (agent/usage.h, billing_of).
    std::string billing;
    run::RunFiles files;
    std::filesystem::path stop_request;  // run::stop_request_path: a person asked it to stop
    long issue = 0;
    std::string issue_url;
    std::string issue_title;  // as the issue gave it: the agent's COCODE_ISSUE_TITLE, one line
    config::AgentConfig agent;
    std::filesystem::path worktree;
    std::string branch;
    std::string base_commit;
    std::string ready_marker;       // COCODE_READY_MARKER: what makes a commit READY
    std::vector<std::string> argv;  // argv[0] resolved to a path
    std::vector<std::string> environment;
    config::LaunchAdjustments launch;  // base_url and model in the CLI's terms, IS_SANDBOX
    // What made its sandbox (kCocodeSandbox, kBubblewrap), or "none" and why: in run-info.
    std::string sandbox;
    bool sandboxed() const { return !sandbox.empty() && sandbox.rfind("none", 0) != 0; }
    run::PairSandbox own;  // its HOME and /tmp in the sandbox
    EgressPlan egress;     // its network: open, or enclosed behind its proxy
    // Its prepared environment (docs/environments.md): the key (sealed), what builds it and
    // from which commit, how it reaches the worktree, and the overlays its processes get.
    std::string environment_key;  // "" for none
    std::optional<environment::Spec> environment_spec;
    std::string environment_commit;
    environment::Mode environment_mode = environment::Mode::copy;
    std::optional<environment::Entry> environment_entry;  // taken or built, before the start
    std::vector<OverlayMount> overlays;
    std::string prompt;
    config::Duration timeout{};
    std::optional<config::Duration> idle_timeout;
    std::uint64_t output_cap = std::uint64_t{1} << 30;  // stdout + stderr, then it is stopped
    // Prepared but it cannot start: a program that is not installed, a setup step that
    // failed. The run is recorded as failed with this error's exit code.
    std::optional<Error> failed;
    run::StopReason failed_reason = run::StopReason::none;  // missing_dependency, setup

    std::string tag() const { return "JRUN_ID=" + run_id; }
};

// The base every worktree starts from: `base_branch`, else the default branch, fetched
// from `origin` first when there is one.
struct Base {
    std::string branch;
    std::string revision;  // what the worktrees are made from ("origin/main" or "main")
    std::string commit;
};
Result<Base> resolve_base(const DispatchContext& context);

// The environment of a commit of the repository (the base's head, for new runs): its spec
// (the configuration's `environment`, else the commit's devcontainer.json) and key; nullopt
// when the repository has none.
struct CommitEnvironment {
    std::string commit;
    environment::Spec spec;
    std::string key;
};
Result<std::optional<CommitEnvironment>> environment_at(const DispatchContext& context,
                                                        const std::string& commit);

// It taken from the machine's store, or built there as a run's is (the sandbox, the egress
// allowlist, notices through context.notice); `use` recorded on it first.
Result<environment::Entry> ensure_environment(const DispatchContext& context,
                                              const CommitEnvironment& environment,
                                              const environment::Use& use);

// Everything for `issues` × `agents` in FIFO order (issue by issue, agents in the order
// given). Refuses, before making anything, a pair whose worktree or branch already exists
// unless `resume` is set. Each run's folder holds run-info.yaml in state `queued`.
Result<std::vector<PlannedRun>> plan_runs(const DispatchContext& context,
                                          const std::vector<github::Issue>& issues,
                                          const std::vector<config::AgentConfig>& agents);

// A run that was planned, made and left queued by another process (`run --detach` plans,
// then starts a supervisor of its own): everything to start it again, from its run folder
// and the configuration. Its environment is made anew here: secrets are never on disk.
Result<PlannedRun> replan_run(const DispatchContext& context, const run::RunRecord& record);

// What prompt.md holds: the issue, the protocol's instructions, the marker. For a round, also
// what the agent said at the end of the last one (`last_output`) and the feedback, as data.
std::string render_prompt(const github::Issue& issue, const PlannedRun& run,
                          std::string_view marker, std::string_view last_output = {},
                          std::string_view feedback = {});

// The runner contract's prefix for a restarted attempt.
inline constexpr char kRestartPrefix[] = "Continue working on the following:\n\n";

// The agent's whole environment, from `ours` (NAME=value entries): the allowlisted base
// (proxies and CA bundles included), the variables its CLI documents for its credentials and
// provider, the configured names and values, the commit identity, base_url and model in the
// CLI's own terms, the five COCODE_* and the JRUN_* variables. Never the GitHub token.
std::vector<std::string> agent_environment(const std::vector<std::string>& ours,
                                           const PlannedRun& run, const DispatchContext& context);

}  // namespace cocode::agent
