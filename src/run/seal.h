// What the dispatcher fixes about a run before its agent starts, kept where the agent cannot
// write (.cocode/seals/<run_id>.json, read-only inside the sandbox; the run folder is not):
// the base commit, the branch, the marker, the configuration the run was dispatched under
// (the check's rules), and where the base branch and its remote-tracking ref stood. The check
// judges by the seal, never by run-info.yaml or the live configuration, which an agent can
// rewrite (docs/check.md, "What the agent cannot change").
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace cocode::run {

inline constexpr char kSealsDir[] = ".cocode/seals";

struct SealedRef {
    std::string name;    // "refs/heads/main", "refs/remotes/origin/main"
    std::string commit;  // where it stood; "" when it did not exist
};

// A thread on the pull request a round answers (continue --from-pr): its first comment, and
// where it was. Sealed, so that the replies go only to threads the round was given.
struct SealedThread {
    long long id = 0;
    std::string path;
    int line = 0;  // in the branch as the round found it
};

// The plan a person approved (docs/review.md, "Plans"): sealed with the code round it started
// and every round after it, so that the check holds the agent to it. `files` narrow the
// configured allowed_paths (a file must match both); `verify` joins the configured commands
// (only those plan.bind_verify let through; the rest are `left_out`, and said so).
struct SealedPlan {
    std::string hash;
    std::vector<std::string> files;
    std::vector<std::string> verify;
    std::vector<std::string> left_out;
    std::string approved_by;  // "@login", or "terminal"
};

// A sealed plan as the seal and a verdict both write it ({"hash", "files", "verify",
// "left_out", "approved_by"}), and read back (what is missing reads empty).
nlohmann::json sealed_plan_json(const SealedPlan& plan);
SealedPlan sealed_plan_of(const nlohmann::json& object);

struct Seal {
    std::string run_id;
    std::string base_commit;
    std::string branch;
    std::string marker;
    std::string config_text;  // .cocode/config.json as the dispatcher read it; "" for defaults
    std::vector<SealedRef> refs;
    long pull_request = 0;  // a round from a pull request: its number, and the threads given
    std::vector<SealedThread> threads;
    bool plan_round = false;         // a plan round: judged on its plan, and on writing nothing
    std::optional<SealedPlan> plan;  // the approved plan this round is held to
    std::string requested_by;        // who asked for the pair on GitHub ("@login"), if known
    // The prepared environment of the pair (environment/key.h), "" for none: every verify and
    // every later round uses it, whatever the base's lockfiles become.
    std::string environment_key;
    // SHA-256 of the issue's text the agent got (issue_text_sha256): what a writer approved.
    std::string issue_sha256;
    // The issue's labels when the agent got it: the kind of work the scorecard counts it as
    // (check/scorecard.h), which the agent cannot relabel.
    std::vector<std::string> issue_labels;
    // Why this agent was among those the issue got, when routing by evidence chose them:
    // "raced claude and codex: 71% ±9 and 66% ±11 on fix" (check/route.h).
    std::string route;
    // A replay's task (replay/task.h): this run answers a question whose answer is known.
    std::string replay_task;
};

// The digest a seal keeps of the issue's text an agent got: its title, a newline, its body.
std::string issue_text_sha256(std::string_view title, std::string_view body);

std::filesystem::path seal_path(const std::filesystem::path& repo_root, const std::string& run_id);

// A person's request to stop a run (`cocode-dispatch stop`, the dashboard): beside its seal,
// where its agent cannot write, so an agent can neither stop another run nor undo a stop.
// Its supervisor looks for it on every tick and stops the run as it stops on Ctrl-C.
std::filesystem::path stop_request_path(const std::filesystem::path& repo_root,
                                        const std::string& run_id);

// The seal as its file holds it (JSON), as parse_seal reads it.
std::string seal_text(const Seal& seal);

// Written once, atomically and durably, before the agent starts.
Result<void> write_seal(const std::filesystem::path& repo_root, const Seal& seal);

// nullopt when the run has no seal (a run from before seals were kept); an error when it
// has one that cannot be read or is not a seal.
Result<std::optional<Seal>> read_seal(const std::filesystem::path& repo_root,
                                      const std::string& run_id);
// A seal from its text; `source` names it in errors, which are general (1): a seal is
// cocode's own file, not something a person wrote.
Result<Seal> parse_seal(std::string_view text, const std::string& source,
                        const std::string& run_id);

}  // namespace cocode::run
