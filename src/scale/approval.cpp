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

// The edits since the approval that were not made by someone who may start cocode: the
// first one found, described ("its body was edited by @x (read) at T"), or "" when none.
Result<std::string> unapproved_edit(github::GitHub& github, const config::Config& config,
                                    const github::IssueEdits& edits, const std::string& since) {
    const std::pair<const char*, const std::optional<github::TextEdit>*> parts[] = {
        {"its body was edited", &edits.body}, {"its title was changed", &edits.title}};
    for (const auto& [what, edit] : parts) {
        if (!*edit || (*edit)->at < since) continue;
        // An edit GitHub does not say the author of (a deleted account) is no writer's.
        if ((*edit)->by.empty()) return std::string(what) + " at " + (*edit)->at;
        auto standing = standing_of(github, config.trigger, (*edit)->by, (*edit)->bot);
        if (!standing) return std::move(standing).error();
        if (standing->may) continue;
        return std::string(what) + " by @" + (*edit)->by + " (" + standing->role + ") at " +
               (*edit)->at;
    }
    return std::string();
}

}  // namespace

Result<Approval> approval_of_event(const json& payload, std::string_view source) {
    const std::string where(source);
    if (!payload.is_object() || !payload.contains("issue") || !payload["issue"].is_object())
        return Error::usage(where + ": field 'issue': expected the issue the event is about");
    const json& issue = payload["issue"];
    Approval approval;
    approval.at = text_of(payload.value("comment", json()), "created_at");
    if (approval.at.empty()) approval.at = text_of(issue, "updated_at");
    if (approval.at.empty())
        return Error::usage(where + ": field 'issue.updated_at': expected when it was approved");
    if (issue.contains("number") && issue["number"].is_number_integer())
        approval.issue = issue["number"].get<long>();
    approval.title = text_of(issue, "title");
    approval.body = text_of(issue, "body");  // null: no description
    return approval;
}

Result<ApprovedText> approved_text(github::GitHub& github, const config::Config& config,
                                   github::Issue now, const Approval& approval) {
    ApprovedText out;
    const bool known = approval.title && approval.body && approval.issue == now.number;
    if (known && now.title == *approval.title && now.body == *approval.body) {
        out.issue = std::move(now);
        return out;
    }
    auto edits = github.issue_edits(now.number);
    if (!edits) return std::move(edits).error();
    auto unapproved = unapproved_edit(github, config, *edits, approval.at);
    if (!unapproved) return std::move(unapproved).error();
    const std::string issue = "#" + std::to_string(now.number);
    if (unapproved->empty()) {
        // Unchanged since, or changed only by people who may start cocode: as it is now.
        if (known)
            out.notice = issue + ": edited since it was approved, by people with write access";
        out.issue = std::move(now);
        return out;
    }
    if (known) {
        out.notice = issue + ": " + terminal_safe_line(*unapproved) +
                     "; the agent gets the text as it was approved";
        now.title = *approval.title;
        now.body = *approval.body;
        out.issue = std::move(now);
        return out;
    }
    // Not known what was approved: nothing runs, and the issue says why once.
    const std::string when = approval.at.empty() ? "" : " at " + approval.at;
    const std::string why = issue + " changed after it was approved" + when + ": " + *unapproved;
    if (auto posted = github.upsert_comment(
            now.number, github::comment_marker("refused/edited-" + std::to_string(now.number)),
            "cocode did not start: this issue's " + unapproved->substr(4) +
                ", after it was approved" + when +
                ", and an agent only gets text someone with write access approved. A "
                "maintainer can read it and start cocode again (apply the `" +
                config.trigger.label + "` label again, or say `" + config.trigger.command + "`).");
        !posted)
        return std::move(posted).error();
    return Error::general("refused: " + terminal_safe_line(why) +
                          "; a writer must approve it again");
}

}  // namespace cocode::scale
