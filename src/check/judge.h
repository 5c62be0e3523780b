// Judging a run with rules and the project's own tests (docs/check.md):
//   exit code   by the agent protocol's table (0: the marker decides);
//   marker      in the message of a commit in base..head, never the base, never a file;
//   commits     at least one since base, and the files they touched;
//   scope       every touched file inside allowed_paths, none in read_only_paths;
//   verify      the configured commands, run in the worktree with a timeout.
// Any fail makes the verdict FAIL; skipped checks do not count.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "check/verdict.h"
#include "config/config.h"
#include "core/result.h"
#include "run/seal.h"

namespace cocode::check {

struct JudgeInput {
    std::filesystem::path worktree;
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
    bool verify = true;  // false: verify commands are reported skipped (the pre-push gate's --fast)
    std::filesystem::path report_dir;  // verify logs go here
    // For the report only.
    std::string run_id, agent, branch, issue_url;
    long issue = 0;
    std::optional<double> run_seconds;
};

// The checks' meaning of each agent exit code (protocol table); nullopt for 0.
std::optional<std::string> exit_code_failure(int code);

// Errors only for what makes judging impossible (no repository, an unknown base); everything
// about the run itself is in the verdict.
Result<Verdict> judge(const JudgeInput& input);

}  // namespace cocode::check
