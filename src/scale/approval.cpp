#include "scale/approval.h"

#include "core/terminal_text.h"
#include "scale/intake.h"
#include "scale/trigger.h"

namespace cocode::scale {
namespace {

using json = nlohmann::json;

std::string text_of(const json& object, const char* field) {
    if (!object.is_object()) return "";
    auto it = object.find(field);
    return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// How an unapproved edit is said: "body was edited by @x (read) at T" — after "its " in a
// notice, after "this issue's " in the comment.
std::string said(const ApprovalEdit& e) {
    const std::string what = e.part == "body" ? "body was edited" : "title was changed";
    // An edit GitHub does not say the author of (a deleted account) is no writer's.
    if (e.edit.by.empty()) return what + " at " + e.edit.at;
    return what + " by @" + e.edit.by + " (" + (e.standing ? e.standing->role : "") + ") at " +
           e.edit.at;
}

bool approved_by_writer(const ApprovalEdit& e) {
    return !e.edit.by.empty() && e.standing && e.standing->may;
}

}  // namespace

Result<Approval> approval_of_event(const json& payload, std::string_view source) {
    const std::string where(source);
    if (!payload.is_object() || !payload.contains("issue") || !payload["issue"].is_object())
        return Error::usage(where + ": field 'issue': expected the issue the event is about");
    const json& issue = payload["issue"];
    Approval approval;
    approval.at = asked_at(payload);  // the intake's rule for every door
    if (approval.at.empty())
        return Error::usage(where + ": field 'issue.updated_at': expected when it was approved");
    if (issue.contains("number") && issue["number"].is_number_integer())
        approval.issue = issue["number"].get<long>();
    approval.title = text_of(issue, "title");
    approval.body = text_of(issue, "body");  // null: no description
    return approval;
}

bool text_known_unchanged(const github::Issue& now, const Approval& approval) {
    return approval.title && approval.body && approval.issue == now.number &&
           now.title == *approval.title && now.body == *approval.body;
}

Result<std::vector<ApprovalEdit>> gather_edits(github::GitHub& github, const config::Config& config,
                                               const github::Issue& now, const Approval& approval) {
    std::vector<ApprovalEdit> out;
    if (text_known_unchanged(now, approval)) return out;
    auto edits = github.issue_edits(now.number);
    if (!edits) return std::move(edits).error();
    for (const auto& [part, edit] : {std::pair{"body", &edits->body}, {"title", &edits->title}}) {
        if (!*edit || (*edit)->at < approval.at) continue;
        ApprovalEdit e{part, **edit, std::nullopt};
        if (!e.edit.by.empty()) {
            auto standing = standing_of(github, config.trigger, e.edit.by, e.edit.bot);
            if (!standing) return std::move(standing).error();
            e.standing = *standing;
        }
        out.push_back(std::move(e));
    }
    return out;
}

ApprovalDecision decide_approval(const config::Config& config, github::Issue now,
                                 const Approval& approval, const std::vector<ApprovalEdit>& edits) {
    ApprovalDecision d;
    if (text_known_unchanged(now, approval)) {
        d.text.issue = std::move(now);
        return d;
    }
    const bool known = approval.title && approval.body && approval.issue == now.number;
    const std::string issue = "#" + std::to_string(now.number);
    const ApprovalEdit* unapproved = nullptr;
    for (const auto& e : edits)
        if (e.edit.at >= approval.at && !approved_by_writer(e)) {
            unapproved = &e;
            break;
        }
    if (!unapproved) {
        // Unchanged since, or changed only by people who may start cocode: as it is now.
        if (known)
            d.text.notice = issue + ": edited since it was approved, by people with write access";
        d.text.issue = std::move(now);
        return d;
    }
    if (known) {
        d.text.notice = issue + ": its " + terminal_safe_line(said(*unapproved)) +
                        "; the agent gets the text as it was approved";
        now.title = *approval.title;
        now.body = *approval.body;
        d.text.issue = std::move(now);
        return d;
    }
    // Not known what was approved: nothing runs, and the issue says why once.
    const std::string when = approval.at.empty() ? "" : " at " + approval.at;
    d.refused = true;
    const long number = now.number;
    d.why = "refused: " +
            terminal_safe_line(issue + " changed after it was approved" + when + ": its " +
                               said(*unapproved)) +
            "; a writer must approve it again";
    d.reply = Reply{github::comment_marker("refused/edited-" + std::to_string(number)),
                    "cocode did not start: this issue's " + said(*unapproved) +
                        ", after it was approved" + when +
                        ", and an agent only gets text someone with write access approved. A "
                        "maintainer can read it and start cocode again (apply the `" +
                        config.trigger.label + "` label again, or say `" + config.trigger.command +
                        "`)."};
    d.text.issue = std::move(now);  // where the reply goes
    return d;
}

Result<ApprovedText> approved_text(github::GitHub& github, const config::Config& config,
                                   github::Issue now, const Approval& approval) {
    auto edits = gather_edits(github, config, now, approval);
    if (!edits) return std::move(edits).error();
    ApprovalDecision d = decide_approval(config, std::move(now), approval, *edits);
    if (d.reply)
        if (auto posted =
                github.upsert_comment(d.text.issue.number, d.reply->marker, d.reply->text);
            !posted)
            return std::move(posted).error();
    if (d.refused) return Error::general(d.why);
    return std::move(d.text);
}

}  // namespace cocode::scale
