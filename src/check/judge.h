// Judging a run with rules and the project's own tests (docs/check.md):
//   exit code   by the agent protocol's table (0: the marker decides);
//   marker      in the message of a commit in base..head, never the base, never a file (for a
//               round, a commit of that round);
//   commits     at least one since base, and the files they touched;
//   scope       every touched file inside allowed_paths, none in read_only_paths;
//   network     with the agent's network enclosed: the connections its proxy blocked
//               (a FAIL under network.on_blocked: fail);
//   worktree    what the agent's worktree holds beyond the judged commit (reported, never
//               judged: the verify commands do not see it);
//   setup       the clean tree's environment and worktree_setup, when there are any;
//   verify      the configured commands, run with a timeout in a clean tree of exactly the
//               judged commit (check/clean_tree.h).
// Any fail makes the verdict FAIL; skipped checks do not count.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "check/clean_tree.h"
#include "check/verdict.h"
#include "check/work_plan.h"
#include "config/config.h"
#include "core/result.h"
#include "git/repository.h"
#include "net/proxy.h"
#include "run/seal.h"

namespace cocode::check {

// What a run's egress proxy blocked (its egress.jsonl, which the agent cannot write), and
// whether a block fails the check (the sealed network.on_blocked).
struct NetworkRecord {
    bool fail_on_blocked = false;
    std::vector<net::EgressEvent> blocked;
};

struct JudgeInput {
    // The agent's worktree: what it holds beyond the judged commit is reported (read in the
    // sandbox: its git folder is the agent's). `repository`: where cocode's own git reads the
    // commits, the main worktree for a run; empty: the worktree itself (a CI checkout).
    std::filesystem::path worktree;
    std::filesystem::path repository;
    std::string base;  // a commit (any rev-parse spelling)
    std::string head = "HEAD";
    std::optional<int> exit_code;  // the agent's; unknown (pre-push, CI without a run): skipped
    std::string run_summary;       // the dispatcher's word on how the run ended (error_summary)
    std::string marker = "cocode ready for check";
    config::CheckConfig rules;
    std::string rules_source;  // "as dispatched", "the base commit's": for the report
    // Where the base branch and its remote-tracking ref stood when the run started: rewritten
    // since (not moved forward) is a FAIL.
    std::vector<run::SealedRef> sealed_refs;
    std::optional<NetworkRecord> network;  // none: the agent's network was the host's
    bool verify = true;  // false: verify commands are reported skipped (the pre-push gate's --fast)
    std::filesystem::path report_dir;  // verify logs go here
    // For the report only.
    std::string run_id, agent, branch, issue_url;
    long issue = 0;
    std::optional<double> run_seconds;
    std::optional<run::RunUsage> usage;
    // Rounds on the pull request: this run's, where it started, and the pair's earlier ones.
    int round = 1;
    std::string round_trigger;
    std::string round_from;
    std::vector<RoundLine> earlier_rounds;
    // A plan round (sealed so): judged on writing nothing since round_from and on its answer
    // (`plan_answer`, the run's output.md) reading as a plan; no marker, no verify.
    bool plan_round = false;
    std::string plan_answer;
    // A round held to an approved plan (sealed): its files narrow the scope, its verify
    // commands run after the configured ones.
    std::optional<run::SealedPlan> plan;
    std::string requested_by;  // sealed: who asked for the pair on GitHub
    // Where the verify commands run: a clean tree of the judged commit, made by these rules
    // (the seal's worktree_setup and environment). false only for the critic, which judges an
    // agent's work in progress where the agent works (inside the agent's sandbox).
    bool clean_tree = true;
    TreeRules tree;
    // What runs the tree's setup and key commands and the verify commands, which run code the
    // agent wrote: agent::confined_runner (the sandbox), given by every caller; the critic's is
    // the unconfined one, as it runs inside the agent's sandbox already. Verify commands are
    // not run without one.
    CommandRunner runner;
    // Told of each step that runs commands as it starts: "clean tree" (its setup and build),
    // "verify: <name>" with its timeout. `status` shows it (check/progress_file.h).
    std::function<void(const std::string& step, std::optional<std::chrono::milliseconds> timeout)>
        on_step;
    // What the worktree item leaves out: paths cocode put in the worktree (its own folders,
    // a copied environment's).
    std::vector<std::string> worktree_own_paths;
};

// The checks' meaning of each agent exit code (protocol table); nullopt for 0.
std::optional<std::string> exit_code_failure(int code);

// The checks that are functions of their inputs alone (judge() adds the base and the marker,
// which read the repository, and the verify commands, which run).
//   exit code: skipped when unknown, else by exit_code_failure, with the run's summary;
CheckItem exit_code_check(const std::optional<int>& code, const std::string& run_summary);
//   commits: at least one since the base;
CheckItem commits_check(const std::vector<git::CommitInfo>& commits,
                        const std::vector<git::FileChange>& files, const std::string& base);
//   scope: every touched path (both ends of a rename) inside allowed_paths, none read-only.
CheckItem scope_check(const config::CheckConfig& rules, const std::vector<git::FileChange>& files);
//   network: no block, or blocks under on_blocked warn, pass; blocks under fail, fail. Each
//   blocked host:port once, with the commands that tried it, in `files`.
CheckItem network_check(const NetworkRecord& record);
// Why the verify commands are not run: a check failed already (they cost minutes and cannot
// turn a FAIL into a PASS), or --no-verify; empty when they run.
std::string verify_not_run_because(const std::vector<CheckItem>& checks, bool verify);
// A verdict passes when no check failed; skipped checks do not count.
bool passes(const std::vector<CheckItem>& checks);

// A plan round's checks, from its inputs: the agent's exit code, that nothing was written
// (`commits` since the round began, `uncommitted` paths in the worktree), and the plan read.
std::vector<CheckItem> plan_round_checks(const std::optional<int>& exit_code,
                                         const std::string& run_summary,
                                         const std::vector<git::CommitInfo>& commits,
                                         const std::vector<std::string>& uncommitted,
                                         const PlanRead& read);

// The worktree item: what `status` (git status --porcelain=v1 -z --ignored=traditional
// --untracked-files=normal, run in the worktree) shows beyond the commit, but `own_paths` and
// what is inside them; `worktree_head` is the commit the worktree has checked out.
CheckItem worktree_check(const std::string& status, const std::string& worktree_head,
                         const std::string& judged, const std::vector<std::string>& own_paths);
// The setup item, from what the clean tree got; nullopt when it got nothing to set up.
std::optional<CheckItem> setup_check(const TreeSetup& setup);

// Errors only for what makes judging impossible (no repository, an unknown base); everything
// about the run itself is in the verdict.
Result<Verdict> judge(const JudgeInput& input);

}  // namespace cocode::check
