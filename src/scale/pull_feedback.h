// What a round on a pair's pull request is given (docs/review.md), decided here once for every
// way a round starts — a webhook under `serve`, `watch`'s poll, the action's `continue --event`,
// `continue --from-pr` at a terminal: the reviews and threads of people who may command, the
// checks failing on the head and not on the base, and the words said with the command. Tools
// parse and print; what counts is decided here, beside the decision on who may ask (trigger.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/feedback.h"
#include "agent/prepare.h"
#include "config/config.h"
#include "core/result.h"
#include "github/api.h"
#include "run/run_folder.h"

namespace cocode::scale {

// One line for the log (what was left out, what failed to be read).
using Said = std::function<void(const std::string&)>;

// Reviews and review comments whose authors may not command are left out: anyone may review a
// public repository's pull request, and only people with write, maintain or admin (asked of
// GitHub) or a bot trigger.allowed_bots lists may start a round, so only their words reach the
// agent. Each author is asked of GitHub once; each left out is said.
Result<void> keep_those_who_may_command(github::GitHub& github,
                                        const config::TriggerConfig& trigger,
                                        std::vector<github::Review>& reviews,
                                        std::vector<github::ReviewComment>& comments,
                                        const Said& said);

// The checks failing on the pull request's head that are its own doing (not failing on `base`
// too), each with its failing step and the end of its log; those failing on the base too are
// in `on_base_too` (and said). A job's steps or log GitHub no longer keeps does not stop it.
Result<std::vector<agent::FailingCheck>> failing_checks(github::GitHub& github,
                                                        const std::string& head,
                                                        const std::string& base,
                                                        std::vector<std::string>& on_base_too,
                                                        const Said& said);

// The round the open pull request of `last`'s branch asks for: its feedback (the words said
// with the command first, then reviews asking for changes and threads on lines still in the
// diff, then failing checks), what asked for it and its threads. A usage error when no pull
// request is open for the branch, or it has nothing to act on — then, when only checks that
// fail on the base too are failing, the pull request is told so once.
Result<agent::RoundRequest> round_from_pull_request(github::GitHub& github,
                                                    const config::Config& config,
                                                    const run::RunRecord& last,
                                                    const std::string& words, const Said& said);

// The label a pair's pull request gets once its rounds have stopped (docs/review.md).
inline constexpr char kNeedsHumanLabel[] = "cocode:needs-human";

// Rounds have stopped for the pair of `agent` whose branch is `branch` (run::decide_round said
// `why_not`): its open pull request, when it has one, gets kNeedsHumanLabel and is told why,
// once (the comment is upserted under its marker).
Result<void> hand_to_a_person(github::GitHub& github, const std::string& branch,
                              const std::string& agent, const std::string& why_not);

// On a machine that never ran them (a fresh runner), the rounds of issue `number`'s pairs of
// `agents` that have none here, restored from the comment each pair's last round published
// (check::published_pair: the verdict with every round's run, and the seal the next round
// copies; check::rounds_to_restore), with the text as a writer approved it, and its
// branch from origin (not for a plan, which made none). Nothing published, or not by the
// repository's people or a bot: nothing restored. Each restored pair is said.
Result<void> restore_published_rounds(github::GitHub& github, const config::Config& config,
                                      const std::filesystem::path& repo_root,
                                      const std::filesystem::path& runs_dir, long number,
                                      const std::vector<std::string>& agents, const Said& said);

}  // namespace cocode::scale
