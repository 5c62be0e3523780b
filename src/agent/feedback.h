// A round's feedback from the pull request (docs/review.md): the reviews that ask for
// changes and the threads on the diff, as the text the agent gets (prompt.md, and the file
// COCODE_FEEDBACK_FILE names). Everything in it is someone's words: hidden text is left out as
// for issues, and code is fenced so that no text can close its fence.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "github/types.h"

namespace cocode::agent {

// One thread on the diff: its first comment and the replies to it, oldest first.
struct ReviewThread {
    std::string path;
    std::optional<int> line;  // none: outdated, the lines it was about have changed since
    std::string diff_hunk;
    std::vector<github::ReviewComment> comments;
};

// The threads of `comments` (each reply under the comment it answers), in the order their
// first comments were made.
std::vector<ReviewThread> threads_of(const std::vector<github::ReviewComment>& comments);

// What the agent is asked to act on: each reviewer's latest review when it requests changes
// (with its words), and every thread whose lines are still in the diff. Outdated threads are
// left out: their lines have changed since. Empty when there is nothing to act on.
struct PullRequestFeedback {
    std::string text;
    int threads = 0;                     // threads in the text
    std::vector<ReviewThread> given;     // those threads
    std::vector<std::string> reviewers;  // logins whose latest review requests changes
};
PullRequestFeedback review_feedback(const std::vector<github::Review>& reviews,
                                    const std::vector<github::ReviewComment>& comments);

// A check that failed on the pull request's head: a GitHub Actions job, its failing step and
// the end of its log.
struct FailingCheck {
    std::string name;
    std::string step;      // the first step that failed, when known
    std::string log_tail;  // the last lines of the job's log
};

// Which of the head's check runs the round should act on: those that failed (failure,
// timed_out) on the head and not also on the base commit — a check that fails the same way on
// the base is not the pull request's doing. Those are in `on_base_too`, by name.
struct ChecksToFix {
    std::vector<github::CheckRun> fix;
    std::vector<std::string> on_base_too;
};
ChecksToFix checks_to_fix(const std::vector<github::CheckRun>& head,
                          const std::vector<github::CheckRun>& base);

// What was said with the command that asked for the round (`/cocode <words>`), first.
std::string command_feedback(const std::string& words);

// The failing checks as the agent reads them, after the reviews.
std::string check_feedback(const std::vector<FailingCheck>& checks);

}  // namespace cocode::agent
