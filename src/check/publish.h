// Putting a verdict where the team looks (docs/check.md, "Publishing"):
//   push        the branch to origin (a GitHub token over HTTPS when there is one, else the
//               user's own git credentials), when asked;
//   status      `cocode/<agent>` on the branch head, once the head is on the remote;
//   comment     one per (issue, agent), upserted through its hidden marker;
//   labels      pass or fail label; a FAIL never takes away another agent's pass label;
//   pull request a draft "Closes #N" with the report as its body, or the open one updated.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "check/report.h"
#include "check/verdict.h"
#include "config/config.h"
#include "core/result.h"
#include "issues/source.h"
#include "run/seal.h"

namespace cocode::check {

struct PublishRequest {
    std::filesystem::path worktree;  // where to push from
    std::string markdown;            // the report
    bool status = true;
    bool labels = true;
    bool push = false;
    bool pull_request = false;  // implies push
    std::string pass_label = "cocode:ready";
    std::string fail_label = "cocode:failed";
    std::string base_branch;  // the pull request's base
    // A round from a pull request (docs/review.md): each thread it was given gets one reply,
    // naming the round's commit that changed its lines or saying it left them alone. The
    // replies carry `run_id` in a hidden marker, so that publishing again adds none.
    long round_pull = 0;
    std::vector<run::SealedThread> threads;
    std::string round_from;  // the branch's head when the round began
    int round = 1;
    std::string run_id;
    // How the pair goes on where its run folder is not (continuation_record), appended to
    // the comment; empty: nothing appended.
    std::string continuation;
};

struct PublishResult {
    std::string comment_url;
    std::string pr_url;
    bool pushed = false;
    std::vector<std::string> notes;  // what was done or left out, one line each
};

Result<PublishResult> publish(issues::IssueSource& source, const Verdict& verdict,
                              const PublishRequest& request);

// The request the configuration asks for (publish.*, check.labels), for `verdict`'s worktree;
// the pull request's base is base_branch, else origin's HEAD branch, else "main".
// `asked`: what the command line adds to the configuration (`--push`, `--open-pr`); a plan
// round pushes nothing and opens nothing, whatever is asked.
struct PublishAsks {
    bool push = false;
    bool pull_request = false;
};
PublishRequest configured_request(const config::Config& config,
                                  const std::filesystem::path& worktree, const Verdict& verdict,
                                  PublishAsks asked = {});

// Pushes `branch` from `worktree` to origin. A GitHub token, when one is available, goes to
// git through its environment (never the command line, never a file) for an https origin on
// the token's host; otherwise git uses the user's own credentials.
Result<void> push_branch(const std::filesystem::path& worktree, const std::string& branch);

}  // namespace cocode::check
