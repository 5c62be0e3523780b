#include "check/gate.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "check/report.h"
#include "core/markdown.h"

namespace cocode::check {
namespace {

bool on_head(const std::string& sha, const std::string& head) {
    return !sha.empty() && (sha == head || (sha.size() >= 7 && head.rfind(sha, 0) == 0));
}

bool is_bot(const std::string& login) {
    return login.size() > 5 && login.compare(login.size() - 5, 5, "[bot]") == 0;
}

}  // namespace

GateDecision decide_gate(const GateInput& in) {
    GateDecision d;
    std::map<std::string, const GateVote*> latest;   // each person's last word on the head
    std::map<std::string, bool> approved_elsewhere;  // by someone whose approval would count
    for (const auto& vote : in.votes) {
        if (on_head(vote.sha, in.head))
            latest[vote.login] = &vote;
        else if (vote.approve && vote.may_write && !vote.bot)
            approved_elsewhere[vote.login] = true;
    }
    for (const auto& [login, vote] : latest) {
        if (!vote->approve) continue;
        if ("@" + login == in.requester) {
            d.requester_approved = true;
            continue;
        }
        if (vote->may_write && !vote->bot) d.counted.push_back(login);
    }
    for (const auto& [login, elsewhere] : approved_elsewhere)
        if (!latest.count(login) && "@" + login != in.requester) ++d.stale;
    const int approvals = static_cast<int>(d.counted.size());
    const std::string verdict = !in.pass   ? "no cocode verdict on this head yet"
                                : *in.pass ? "PASS ✓"
                                           : "FAIL ✗";
    d.description =
        verdict + " · approvals " + std::to_string(approvals) + " of " + std::to_string(in.needed);
    if (d.requester_approved) d.description += " (requester's does not count)";
    if (d.stale > 0) d.description += " · " + std::to_string(d.stale) + " stale (an earlier head)";
    d.state = in.pass && !*in.pass                            ? "failure"
              : in.pass && *in.pass && approvals >= in.needed ? "success"
                                                              : "pending";
    return d;
}

std::optional<std::string> approve_merge_sha(std::string_view body, const std::string& command) {
    std::istringstream in{std::string(body)};
    std::string line;
    while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) {
    }
    std::istringstream words(line);
    std::string said, verb, sha;
    if (!(words >> said >> verb >> sha) || said != command || verb != "approve-merge")
        return std::nullopt;
    if (sha.size() < 7 || sha.size() > 40 ||
        sha.find_first_not_of("0123456789abcdef") != std::string::npos)
        return std::nullopt;
    return sha;
}

Result<GateDecision> read_gate(github::GitHub& github, const config::Config& config,
                               const github::PullRequest& pull, long issue,
                               const std::string& agent) {
    GateInput in;
    in.needed = config.gate.approvals;
    in.head = pull.head_sha;
    auto issue_comments = github.comments(issue);
    if (!issue_comments) return std::move(issue_comments).error();
    // A list may show the pair's comment as it was before its last edit (GitHub's replicas
    // lag: the verdict of the round before): it is read again by its id, as it is now.
    const std::string marker = github::comment_marker(comment_key(issue, agent));
    for (auto c = issue_comments->begin(); c != issue_comments->end();) {
        if (c->body.find(marker) == std::string::npos) {
            ++c;
            continue;
        }
        auto now = github.comment(c->id);
        if (!now) return std::move(now).error();
        if (!*now) {
            c = issue_comments->erase(c);
            continue;
        }
        *c++ = std::move(**now);
    }
    // The pair's verdict as it published it (only the comment publishing keeps, by the
    // repository's people or a bot), and only when it judged this very head.
    if (auto published = published_pair(*issue_comments, issue, agent)) {
        const Verdict& v = published->verdict;
        if (!v.plan_round && v.head == pull.head_sha) in.pass = v.pass;
        in.requester = v.requested_by;
    }
    auto reviews = github.reviews(pull.number);
    if (!reviews) return std::move(reviews).error();
    for (const auto& r : *reviews) {
        if (r.state != "APPROVED" && r.state != "CHANGES_REQUESTED" && r.state != "DISMISSED")
            continue;
        in.votes.push_back({r.author, r.commit_id, r.state == "APPROVED", false, is_bot(r.author)});
    }
    auto comments = github.comments(pull.number);
    if (!comments) return std::move(comments).error();
    for (const auto& c : *comments)
        if (auto sha = approve_merge_sha(c.body, config.trigger.command))
            in.votes.push_back({c.author, *sha, true, false, is_bot(c.author)});
    // Who may write, asked of GitHub once per person who approved.
    std::map<std::string, bool> may;
    for (auto& vote : in.votes) {
        if (vote.bot || !vote.approve) continue;
        auto [it, added] = may.try_emplace(vote.login, false);
        if (added) {
            auto permission = github.collaborator_permission(vote.login);
            if (!permission) return std::move(permission).error();
            it->second = permission->can_write();
        }
        vote.may_write = it->second;
    }
    return decide_gate(in);
}

Result<void> write_gate(github::GitHub& github, const config::Config& config,
                        const github::PullRequest& pull, const std::string& agent,
                        const GateDecision& d) {
    std::string body = "### cocode gate · " + markdown_code(agent) + " · " +
                       (d.state == "success"   ? "✅ ready to merge"
                        : d.state == "failure" ? "❌ not mergeable"
                                               : "⏳ waiting") +
                       "\n\n" + d.description + "\n\n";
    if (!d.counted.empty()) {
        body += "Approvals counted:";
        for (const auto& login : d.counted) body += " @" + login;
        body += "\n\n";
    }
    body += "On `" + pull.head_sha.substr(0, 12) + "`: it needs a cocode PASS and approvals from " +
            std::to_string(config.gate.approvals) +
            " people with write access (a review approving this commit, or `" +
            config.trigger.command + " approve-merge " + pull.head_sha.substr(0, 12) +
            "`), not counting whoever asked for the run. A new push makes approvals stale.\n";
    auto comment =
        github.upsert_comment(pull.number, github::comment_marker("gate/" + agent), body);
    if (!comment) return std::move(comment).error();
    github::CommitStatus status;
    status.state = d.state;
    status.context = "cocode/gate";
    status.description =
        d.description.size() > 140 ? d.description.substr(0, 137) + "..." : d.description;
    if (comment->html_url.rfind("https://", 0) == 0) status.target_url = comment->html_url;
    auto set = github.create_status(pull.head_sha, status);
    if (!set) return std::move(set).error();
    return {};
}

}  // namespace cocode::check
