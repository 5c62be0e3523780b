#include "agent/feedback.h"

#include <algorithm>
#include <map>

#include "core/markdown.h"
#include "core/visible_text.h"

namespace cocode::agent {

namespace {

// Someone's words, one quoted block: what a reader of the page sees of them.
std::string quoted(const std::string& words) {
    std::string visible = visible_text(words).text;
    while (!visible.empty() && (visible.back() == '\n' || visible.back() == ' '))
        visible.pop_back();
    if (visible.empty()) return "> (no words)\n";
    std::string out = "> ";
    for (char c : visible) {
        out += c;
        if (c == '\n') out += "> ";
    }
    return out + "\n";
}

}  // namespace

std::string command_feedback(const std::string& words) {
    return "Asked with the command:\n\n" + quoted(words) + "\n";
}

std::vector<ReviewThread> threads_of(const std::vector<github::ReviewComment>& comments) {
    std::vector<github::ReviewComment> ordered = comments;
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.id < b.id; });
    std::vector<ReviewThread> threads;
    std::map<long long, std::size_t> thread_of;  // comment id → its thread
    for (const auto& comment : ordered) {
        auto parent = comment.in_reply_to ? thread_of.find(comment.in_reply_to) : thread_of.end();
        if (parent == thread_of.end()) {
            threads.push_back({comment.path, comment.line, comment.diff_hunk, {comment}});
            thread_of[comment.id] = threads.size() - 1;
        } else {
            threads[parent->second].comments.push_back(comment);
            thread_of[comment.id] = parent->second;
        }
    }
    return threads;
}

PullRequestFeedback review_feedback(const std::vector<github::Review>& reviews,
                                    const std::vector<github::ReviewComment>& comments) {
    PullRequestFeedback out;
    // Each reviewer's latest word that is a verdict (a comment-only review does not lift a
    // request for changes, as on GitHub).
    std::map<std::string, const github::Review*> latest;
    for (const auto& review : reviews)
        if (review.state == "CHANGES_REQUESTED" || review.state == "APPROVED" ||
            review.state == "DISMISSED")
            latest[review.author] = &review;
    for (const auto& review : reviews) {
        auto it = latest.find(review.author);
        if (it == latest.end() || it->second != &review || review.state != "CHANGES_REQUESTED")
            continue;
        out.reviewers.push_back(review.author);
        out.text +=
            "Review by @" + review.author + ", changes requested:\n\n" + quoted(review.body) + "\n";
    }
    for (const auto& thread : threads_of(comments)) {
        if (!thread.line) continue;  // outdated
        ++out.threads;
        out.given.push_back(thread);
        out.text += "Thread on " + thread.path + ", line " + std::to_string(*thread.line) + ":\n\n";
        out.text += fenced(thread.diff_hunk, "diff") + "\n";
        for (const auto& comment : thread.comments)
            out.text += "@" + comment.author + ":\n" + quoted(comment.body) + "\n";
    }
    return out;
}

ChecksToFix checks_to_fix(const std::vector<github::CheckRun>& head,
                          const std::vector<github::CheckRun>& base) {
    auto failed = [](const github::CheckRun& run) {
        return run.status == "completed" &&
               (run.conclusion == "failure" || run.conclusion == "timed_out");
    };
    ChecksToFix out;
    for (const auto& run : head) {
        if (!failed(run)) continue;
        const bool on_base = std::any_of(base.begin(), base.end(), [&](const auto& b) {
            return b.name == run.name && failed(b);
        });
        if (on_base)
            out.on_base_too.push_back(run.name);
        else
            out.fix.push_back(run);
    }
    return out;
}

std::string check_feedback(const std::vector<FailingCheck>& checks) {
    std::string out;
    for (const auto& check : checks) {
        out += "Check " + check.name + " failed";
        out += check.step.empty() ? ".\n\n" : ", at the step \"" + check.step + "\".\n\n";
        if (!check.log_tail.empty())
            out += "The end of its log:\n\n" + fenced(check.log_tail, "text") + "\n";
    }
    return out;
}

}  // namespace cocode::agent
