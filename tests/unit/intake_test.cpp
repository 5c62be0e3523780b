// The intake's table (src/scale/intake.h): every event cocode answers × who asks (each standing
// GitHub gives a person, a listed bot, an unlisted bot with write, a typed Bot whose login lacks
// `[bot]`) × the configuration (allowed bots, review.fix_checks, trigger.plan) × the door it
// came in by: a delivery (read_event: `serve`, the action's `plan --event`, `continue --event`)
// or `watch`'s poll (the polled readers). No GitHub: the facts are asked of the table.
#include "scale/intake.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scale/approval.h"
#include "scale/claim.h"
#include "scale/trigger.h"
#include "webhook_examples.h"

namespace cocode {
namespace {

using json = nlohmann::json;
using scale::EventRequest;
using scale::Request;

constexpr char kRepository[] = "Codertocat/Hello-World";  // GitHub's examples' repository
constexpr long kIssue = 1;
constexpr long kPull = 7;
constexpr long long kId = 4242;  // the comment's, review's or check's

struct Actor {
    std::string login;
    bool typed_bot = false;  // GitHub's `type` is "Bot"
    std::string permission, role;
    bool bot() const { return github::bot_account(login, typed_bot); }
};

const std::vector<Actor>& actors() {
    static const std::vector<Actor> all = {
        {"owner", false, "admin", "admin"},      {"maintainer", false, "write", "maintain"},
        {"writer", false, "write", "write"},     {"triager", false, "read", "triage"},
        {"reader", false, "read", "read"},       {"passer-by", false, "none", "none"},
        {"helper[bot]", true, "", ""},            // listed in trigger.allowed_bots
        {"deploy[bot]", true, "write", "write"},  // a bot needs listing, even with write
        {"Copilot", true, "write", "write"},      // typed Bot, no [bot]: listed in some configs
    };
    return all;
}

struct Setting {
    bool copilot_listed, fix_checks, plan;
    std::string name() const {
        return std::string(copilot_listed ? "copilot-listed" : "copilot-unlisted") +
               (fix_checks ? "+fix_checks" : "") + (plan ? "+plan" : "");
    }
};

config::Config configured(const Setting& s) {
    json doc = {
        {"agents", {{"claude", {{"type", "claude"}}}, {"codex", {{"type", "codex"}}}}},
        {"trigger",
         {{"allowed_bots", s.copilot_listed ? json{"helper[bot]", "Copilot"} : json{"helper[bot]"}},
          {"plan", s.plan}}},
        {"review", {{"fix_checks", s.fix_checks}}}};
    auto config = config::parse_config(doc.dump(), ".cocode/config.json", "/repo");
    if (!config) ADD_FAILURE() << config.error().message;
    return *config;
}

// A delivery as the action's `plan --event` and `continue --event` decide it (its own
// labelling), as `serve` does (a label on its latest labelling, here the same person's), and
// what `watch`'s poll finds.
enum class Door { delivery, serve, poll };

// The events, each as a delivery's payload and as what `watch`'s poll finds.
enum class Event {
    label,
    command,
    command_naming_agents,
    command_naming_unknown_agent,
    plan,
    approve,
    approve_without_hash,
    revise,
    revise_without_words,
    reject,
    issue_body,
    issue_body_approve,
    review_changes,
    review_command,
    review_comment_command,
    pull_comment_command,
    fork_review_changes,
    check_failed,
};
constexpr Event kEvents[] = {Event::label,
                             Event::command,
                             Event::command_naming_agents,
                             Event::command_naming_unknown_agent,
                             Event::plan,
                             Event::approve,
                             Event::approve_without_hash,
                             Event::revise,
                             Event::revise_without_words,
                             Event::reject,
                             Event::issue_body,
                             Event::issue_body_approve,
                             Event::review_changes,
                             Event::review_command,
                             Event::review_comment_command,
                             Event::pull_comment_command,
                             Event::fork_review_changes,
                             Event::check_failed};

const char* name_of(Event e) {
    static constexpr const char* kNames[] = {"label",
                                             "command",
                                             "command naming agents",
                                             "command naming an unknown agent",
                                             "plan",
                                             "approve",
                                             "approve without a hash",
                                             "revise",
                                             "revise without words",
                                             "reject",
                                             "a new issue's command",
                                             "a new issue's approve",
                                             "review requesting changes",
                                             "review saying the command",
                                             "review comment saying the command",
                                             "pull request comment saying the command",
                                             "a fork's review requesting changes",
                                             "failed check suite"};
    static_assert(std::size(kNames) == std::size(kEvents));
    return kNames[static_cast<int>(e)];
}

const char* body_of(Event e) {
    switch (e) {
        case Event::command:
        case Event::issue_body:
        case Event::pull_comment_command:
            return "/cocode\nThe README says Helo.";
        case Event::command_naming_agents:
            return "/cocode claude codex";
        case Event::command_naming_unknown_agent:
            return "/cocode claude <img src=x>";
        case Event::plan:
            return "/cocode plan";
        case Event::approve:
            return "/cocode approve claude 0123456789ab";
        case Event::approve_without_hash:
        case Event::issue_body_approve:
            return "/cocode approve claude";
        case Event::revise:
            return "Keep the old flag.\n/cocode revise claude";
        case Event::revise_without_words:
            return "/cocode revise claude";
        case Event::reject:
            return "/cocode reject claude";
        case Event::review_command:
        case Event::review_comment_command:
            return "/cocode fix the typo too";
        case Event::review_changes:
        case Event::fork_review_changes:
            return "Please rename it.";
        default:
            return "";
    }
}

json user(const Actor& a) { return {{"login", a.login}, {"type", a.typed_bot ? "Bot" : "User"}}; }

github::PullRequest pull(Event e) {
    github::PullRequest p;
    p.number = kPull;
    p.head_ref = "cocode/1-claude";
    p.head_repository = e == Event::fork_review_changes ? "stranger/Hello-World" : kRepository;
    return p;
}

// A delivery of the event, read as serve, the action and continue --event read it.
EventRequest delivered(Event e, const Actor& a, const config::Config& config) {
    std::string name;
    json payload;
    switch (e) {
        case Event::label:
            name = "issues";
            payload = test::example_payload("issues", "labeled");
            payload["issue"]["number"] = kIssue;
            payload["label"]["name"] = config.trigger.label;
            payload["sender"] = user(a);
            break;
        case Event::issue_body:
        case Event::issue_body_approve:
            name = "issues";
            payload = test::example_payload("issues", "opened");
            payload["issue"]["number"] = kIssue;
            payload["issue"]["body"] = body_of(e);
            payload["issue"]["user"] = user(a);
            break;
        case Event::review_changes:
        case Event::review_command:
        case Event::fork_review_changes: {
            name = "pull_request_review";
            payload = test::example_payload("pull_request_review", "submitted");
            payload["review"]["id"] = kId;
            payload["review"]["state"] =
                e == Event::review_command ? "commented" : "changes_requested";
            payload["review"]["body"] = body_of(e);
            payload["review"]["user"] = user(a);
            const auto p = pull(e);
            payload["pull_request"]["number"] = p.number;
            payload["pull_request"]["head"]["ref"] = p.head_ref;
            payload["pull_request"]["head"]["repo"]["full_name"] = p.head_repository;
            break;
        }
        case Event::review_comment_command:
            name = "pull_request_review_comment";
            payload = test::example_payload("pull_request_review_comment", "created");
            payload["comment"]["id"] = kId;
            payload["comment"]["body"] = body_of(e);
            payload["comment"]["user"] = user(a);
            payload["pull_request"]["number"] = kPull;
            payload["pull_request"]["head"]["ref"] = "cocode/1-claude";
            payload["pull_request"]["head"]["repo"]["full_name"] = kRepository;
            break;
        case Event::check_failed:
            name = "check_suite";
            payload = test::example_payload("check_suite", "completed");
            payload["check_suite"]["id"] = kId;
            payload["check_suite"]["conclusion"] = "failure";
            payload["check_suite"]["pull_requests"] =
                json::array({{{"number", kPull}, {"head", {{"ref", "cocode/1-claude"}}}}});
            break;
        default:  // a comment: on the issue, or on the pull request (pull_comment_command)
            name = "issue_comment";
            payload = test::example_payload("issue_comment", "created");
            payload["issue"]["number"] = e == Event::pull_comment_command ? kPull : kIssue;
            if (e == Event::pull_comment_command)
                payload["issue"]["pull_request"] = {{"url", "https://api.github.com/x"}};
            else
                payload["issue"].erase("pull_request");
            payload["comment"]["id"] = kId;
            payload["comment"]["body"] = body_of(e);
            payload["comment"]["user"] = user(a);
            break;
    }
    payload["repository"]["full_name"] = kRepository;
    auto request = scale::read_event(name, payload, config.trigger);
    if (!request) ADD_FAILURE() << request.error().message;
    return *request;
}

// The same event as `watch`'s poll finds it; nullopt where the poll reads it as no request.
std::optional<EventRequest> polled(Event e, const Actor& a, const config::Config& config) {
    switch (e) {
        case Event::label: {
            const auto labelled = scale::latest_labelling(
                {github::IssueEvent{kId, "labeled", config.trigger.label, "2026-11-28T10:00:00Z",
                                    a.login, a.typed_bot}},
                config.trigger.label);
            return scale::label_event(kIssue, labelled, config.trigger.label, config.trigger);
        }
        case Event::issue_body:
        case Event::issue_body_approve: {
            github::Issue issue;
            issue.number = kIssue;
            issue.body = body_of(e);
            issue.author = a.login;
            issue.author_is_bot = a.typed_bot;
            return scale::polled_issue_body(issue, config.trigger);
        }
        case Event::review_changes:
        case Event::review_command:
        case Event::fork_review_changes:
            return scale::polled_request(pull(e), {Request::Kind::review, kId}, a.login,
                                         a.typed_bot, body_of(e), e != Event::review_command,
                                         config.trigger);
        case Event::review_comment_command:
            return scale::polled_request(pull(e), {Request::Kind::review_comment, kId}, a.login,
                                         a.typed_bot, body_of(e), false, config.trigger);
        case Event::pull_comment_command:
            return scale::polled_request(pull(e), {Request::Kind::command, kId}, a.login,
                                         a.typed_bot, body_of(e), false, config.trigger);
        case Event::check_failed:
            return scale::polled_failed_check(pull(e), kId);
        default: {
            github::Comment c;
            c.id = kId;
            c.body = body_of(e);
            c.author = a.login;
            c.author_is_bot = a.typed_bot;
            c.issue = kIssue;
            return scale::polled_comment(kIssue, c, config.trigger);
        }
    }
}

// The facts, asked of the table: each question counted. `latest`: who applied the label last
// (serve's door), `a` unless said.
struct Asked {
    int permissions = 0;
    int pulls = 0;
    int labellings = 0;
};
constexpr long long kLabelling = 555;
constexpr char kLabelledAt[] = "2026-11-30T10:00:00Z";
scale::Facts facts_for(const EventRequest& request, const Actor& a, const config::Config& config,
                       Asked& asked, scale::Labelling labelling = scale::Labelling::as_delivered,
                       std::optional<Actor> latest = std::nullopt,
                       long long latest_id = kLabelling) {
    const Actor asker = latest.value_or(a);
    scale::Askers ask{kRepository,
                      [&](const std::string& login) -> Result<github::CollaboratorPermission> {
                          ++asked.permissions;
                          EXPECT_EQ(login, asker.login);
                          if (asker.permission.empty()) return Error::general("not asked of a bot");
                          return github::CollaboratorPermission{asker.permission, asker.role};
                      },
                      [&](long number) -> Result<github::PullRequest> {
                          ++asked.pulls;
                          EXPECT_EQ(number, kPull);
                          return pull(Event::pull_comment_command);
                      },
                      [&](long issue, const std::string& label) -> Result<scale::LabelRequest> {
                          ++asked.labellings;
                          EXPECT_EQ(issue, kIssue);
                          EXPECT_EQ(label, config.trigger.label);
                          if (latest_id == 0) return scale::LabelRequest{};
                          return scale::LabelRequest{latest_id, "@" + asker.login, asker.login,
                                                     asker.bot(), kLabelledAt};
                      }};
    auto facts = scale::gather(request, config, ask, labelling);
    if (!facts) ADD_FAILURE() << facts.error().message;
    return facts ? *facts : scale::Facts{};
}

// What a person would check of an intake: the work, the reply, the reaction, the label.
std::string summary(const scale::Intake& t) {
    const auto& d = t.decision;
    std::string agents;
    for (const auto& name : d.agents) agents += name + ",";
    return "run=" + std::to_string(d.run) + " round=" + std::to_string(d.round) +
           " issue=" + std::to_string(d.issue) + " pull=" + std::to_string(d.pull) +
           " agents=" + agents + " verb=" + std::string(check::plan_verb_name(d.verb)) +
           " hash=" + d.plan_hash + " words=" + d.instruction + " by=" + d.by +
           " notice=" + d.notice + " reply=" + (t.reply ? t.reply->marker + t.reply->text : "-") +
           " reaction=" +
           (t.reaction ? std::to_string(static_cast<int>(t.reaction->on)) + ":" +
                             std::to_string(t.reaction->id)
                       : "-") +
           " unlabel=" + t.label_to_remove;
}

bool writes(const Actor& a) {
    return a.role == "admin" || a.role == "maintain" || a.role == "write";
}

bool on_pull(Event e) {
    return e == Event::review_changes || e == Event::review_command ||
           e == Event::review_comment_command || e == Event::pull_comment_command ||
           e == Event::fork_review_changes || e == Event::check_failed;
}

TEST(Intake, EveryEventFromEveryoneThroughEveryDoorIsOneDecision) {
    std::vector<Setting> settings;
    for (bool listed : {false, true})
        for (bool fix : {false, true})
            for (bool plan : {false, true}) settings.push_back({listed, fix, plan});
    int rows = 0;
    for (const auto& setting : settings) {
        const config::Config config = configured(setting);
        for (const Event e : kEvents)
            for (const auto& a : actors()) {
                SCOPED_TRACE(setting.name() + " × " + name_of(e) + " × " + a.login);
                // Who may: a bot only when listed, a person with write, maintain or admin.
                const bool listed =
                    a.login == "helper[bot]" || (a.login == "Copilot" && setting.copilot_listed);
                const bool may = a.bot() ? listed : writes(a);
                std::map<Door, std::string> by_door;
                for (const Door door : {Door::delivery, Door::serve, Door::poll}) {
                    SCOPED_TRACE(door == Door::delivery ? "delivered"
                                 : door == Door::serve  ? "delivered to serve"
                                                        : "polled");
                    const std::optional<EventRequest> request =
                        door != Door::poll ? std::optional(delivered(e, a, config))
                                           : polled(e, a, config);
                    ASSERT_TRUE(request) << "the poll reads it as no request";
                    Asked asked;
                    const scale::Facts facts =
                        facts_for(*request, a, config, asked,
                                  door == Door::serve ? scale::Labelling::latest
                                                      : scale::Labelling::as_delivered);
                    // Only serve asks who labelled last, and only of a label.
                    EXPECT_EQ(asked.labellings, door == Door::serve && e == Event::label ? 1 : 0);
                    const scale::Intake t = scale::intake(*request, facts, config);
                    const auto& d = t.decision;
                    by_door[door] = summary(t);
                    ++rows;
                    // Nobody's standing is asked of GitHub for a bot, a check, a fork's branch
                    // or what asks nothing; a person's once.
                    const bool asks_nothing = e == Event::issue_body_approve;
                    EXPECT_EQ(asked.permissions, a.bot() || e == Event::check_failed ||
                                                         e == Event::fork_review_changes ||
                                                         asks_nothing
                                                     ? 0
                                                     : 1);
                    // Only a comment's event lacks its pull request's branch.
                    EXPECT_EQ(asked.pulls,
                              door != Door::poll && e == Event::pull_comment_command ? 1 : 0);
                    // Nothing but a label is ever taken off; nothing but a refused one is.
                    EXPECT_EQ(t.label_to_remove,
                              e == Event::label && !may ? config.trigger.label : "");
                    switch (e) {
                        case Event::label:
                            EXPECT_EQ(d.run, may);
                            EXPECT_EQ(d.verb, may && setting.plan ? check::PlanVerb::plan
                                                                  : check::PlanVerb::none);
                            EXPECT_EQ(t.reply.has_value(), !may);  // a bot's label too
                            if (t.reply) {
                                EXPECT_EQ(t.reply->marker, "<!-- cocode:refused/label-1 -->");
                            }
                            EXPECT_FALSE(t.reaction);
                            break;
                        case Event::check_failed:
                            EXPECT_EQ(d.run, setting.fix_checks);
                            EXPECT_EQ(d.round, setting.fix_checks);
                            EXPECT_FALSE(t.reply);
                            EXPECT_FALSE(t.reaction);
                            break;
                        case Event::fork_review_changes:
                            EXPECT_FALSE(d.run);
                            EXPECT_NE(d.notice.find("from another repository"), std::string::npos);
                            EXPECT_FALSE(t.reply);
                            break;
                        case Event::issue_body_approve:
                            EXPECT_FALSE(d.run);
                            EXPECT_EQ(d.notice,
                                      "nothing to do: a new issue's body can ask for a plan, not "
                                      "answer one");
                            EXPECT_FALSE(t.reply);
                            break;
                        case Event::review_changes:
                            EXPECT_EQ(d.run, may);
                            EXPECT_FALSE(t.reply);  // a reader's review is not answered
                            EXPECT_FALSE(t.reaction);
                            break;
                        default: {
                            // A command: runs for whoever may, when it is whole; one reply to a
                            // person who may not (a bot gets none: no bot loops).
                            const bool whole = e != Event::command_naming_unknown_agent &&
                                               e != Event::approve_without_hash &&
                                               e != Event::revise_without_words;
                            EXPECT_EQ(d.run, may && whole);
                            EXPECT_EQ(t.reply.has_value(), may ? !whole : !a.bot());
                            if (d.run && e != Event::review_command) {  // a review has none
                                ASSERT_TRUE(t.reaction);
                                EXPECT_EQ(t.reaction->on, e == Event::issue_body
                                                              ? scale::Reaction::On::issue
                                                          : e == Event::review_comment_command
                                                              ? scale::Reaction::On::review_comment
                                                              : scale::Reaction::On::comment);
                            } else {
                                EXPECT_FALSE(t.reaction);
                            }
                            if (t.reply && !may) {
                                EXPECT_EQ(t.reply->text.rfind("@" + a.login + " thanks", 0), 0u)
                                    << t.reply->text;
                            }
                            if (e == Event::command_naming_unknown_agent && t.reply) {
                                // The name a command gave is not echoed when it is markup.
                                EXPECT_EQ(t.reply->text.find("<img"), std::string::npos);
                            }
                            if (d.run && on_pull(e)) {
                                EXPECT_TRUE(d.round);
                                EXPECT_EQ(d.issue, 1);
                                EXPECT_EQ(d.pull, kPull);
                                EXPECT_EQ(d.agents, std::vector<std::string>{"claude"});
                            }
                            if (d.run && e == Event::approve) {
                                EXPECT_EQ(d.verb, check::PlanVerb::approve);
                                EXPECT_EQ(d.plan_hash, "0123456789ab");
                            }
                            if (d.run && e == Event::revise) {
                                EXPECT_EQ(d.instruction, "Keep the old flag.");
                            }
                            if (d.run && e == Event::command_naming_agents) {
                                EXPECT_EQ(d.agents, (std::vector<std::string>{"claude", "codex"}));
                            }
                            break;
                        }
                    }
                }
                // Whichever door it came in by, the same decision, reply and reaction.
                EXPECT_EQ(by_door[Door::delivery], by_door[Door::poll]);
                EXPECT_EQ(by_door[Door::serve], by_door[Door::poll]);
            }
    }
    EXPECT_EQ(rows, 8 * static_cast<int>(std::size(kEvents)) * 9 * 3);
}

// serve decides a delivered label on who applied it last (the labelling its claim is for);
// the action on the event's own labelling. A writer's labelling re-applied since by a reader
// is the reader's: refused, answered, taken off; a reader's re-applied by a writer runs, its
// approval from then; a label taken off since starts nothing and asks nothing more.
TEST(Intake, ServeDecidesALabelOnItsLatestLabellingTheActionOnItsOwn) {
    const config::Config config = configured({false, false, false});
    const Actor writer{"writer", false, "write", "write"};
    const Actor reader{"reader", false, "read", "read"};
    {
        Asked asked;
        const auto request = delivered(Event::label, writer, config);
        const auto t = scale::intake(
            request, facts_for(request, writer, config, asked, scale::Labelling::latest, reader),
            config);
        EXPECT_FALSE(t.decision.run);
        EXPECT_EQ(t.label_to_remove, config.trigger.label);
        ASSERT_TRUE(t.reply);
        EXPECT_EQ(t.reply->text.rfind("@reader ", 0), 0u) << t.reply->text;
    }
    {
        Asked asked;
        const auto request = delivered(Event::label, reader, config);
        const auto t = scale::intake(
            request, facts_for(request, reader, config, asked, scale::Labelling::latest, writer),
            config);
        EXPECT_TRUE(t.decision.run);
        EXPECT_EQ(t.decision.by, "@writer");
        EXPECT_EQ(t.decision.request, (Request{Request::Kind::label, kLabelling}));
        EXPECT_EQ(t.decision.approved_at, kLabelledAt);
        EXPECT_FALSE(t.reply);
    }
    {
        Asked asked;
        const auto request = delivered(Event::label, writer, config);
        const auto t = scale::intake(
            request,
            facts_for(request, writer, config, asked, scale::Labelling::latest, std::nullopt, 0),
            config);
        EXPECT_FALSE(t.decision.run);
        EXPECT_EQ(asked.permissions, 0);
        EXPECT_EQ(t.decision.notice, "nothing to do: the label 'cocode' is no longer on issue #1");
        EXPECT_FALSE(t.reply);
        EXPECT_TRUE(t.label_to_remove.empty());
    }
    {
        // The action's event: its sender decides, and it is approved as the payload's issue was
        // last changed (a labelling's payload has no time of its own).
        Asked asked;
        const auto request = delivered(Event::label, writer, config);
        const auto t = scale::intake(request, facts_for(request, writer, config, asked), config);
        EXPECT_TRUE(t.decision.run);
        EXPECT_EQ(asked.labellings, 0);
        EXPECT_EQ(t.decision.approved_at, request.at);
        EXPECT_FALSE(t.decision.approved_at.empty());
        EXPECT_EQ(t.decision.request, (Request{Request::Kind::label, 0}));
    }
}

// A delivery for a repository other than the one cocode works for asks GitHub nothing, runs
// nothing and answers nothing, whoever sent it; the gate and outcomes it would touch are not
// this repository's either.
TEST(Intake, AnEventForAnotherRepositoryAsksNothingAndDoesNothing) {
    config::Config config = configured({true, true, false});
    config.gate.approvals = 1;
    const Actor writer{"writer", false, "write", "write"};
    for (const Event e : kEvents) {
        SCOPED_TRACE(name_of(e));
        EventRequest request = delivered(e, writer, config);
        request.repository = "stranger/Elsewhere";
        request.gate = request.outcome = true;
        Asked asked;
        const auto facts = facts_for(request, writer, config, asked, scale::Labelling::latest);
        EXPECT_EQ(asked.permissions + asked.pulls + asked.labellings, 0);
        const auto t = scale::intake(request, facts, config);
        EXPECT_FALSE(t.decision.run);
        EXPECT_FALSE(t.decision.refresh_gate);
        EXPECT_FALSE(t.decision.learn_outcomes);
        EXPECT_EQ(t.decision.notice, "nothing to do: the event is for stranger/Elsewhere, not " +
                                         std::string(kRepository));
        EXPECT_FALSE(t.reply);
        EXPECT_FALSE(t.reaction);
        EXPECT_TRUE(t.label_to_remove.empty());
    }
}

// Whatever an event asks for, the gate is read again when it touches one and gate.approvals
// is on, and outcomes are learnt again after a pull request closed; a command is approved as
// of its comment, a new issue's as of the issue.
TEST(Intake, TheGateOutcomesAndApprovalTimeAreTheIntakesToo) {
    for (const int approvals : {0, 1}) {
        config::Config config = configured({false, false, false});
        config.gate.approvals = approvals;
        const Actor writer{"writer", false, "write", "write"};
        for (const bool touched : {false, true}) {
            EventRequest request = delivered(Event::review_changes, writer, config);
            request.gate = touched;
            request.outcome = touched;
            Asked asked;
            const auto t =
                scale::intake(request, facts_for(request, writer, config, asked), config);
            EXPECT_EQ(t.decision.refresh_gate, touched && approvals > 0);
            EXPECT_EQ(t.decision.learn_outcomes, touched);
        }
        Asked asked;
        const auto command = delivered(Event::command, writer, config);
        const auto t = scale::intake(command, facts_for(command, writer, config, asked), config);
        ASSERT_TRUE(t.decision.run);
        EXPECT_EQ(t.decision.request, (Request{Request::Kind::command, kId}));
        EXPECT_FALSE(t.decision.approved_at.empty());
        EXPECT_EQ(t.decision.approved_at, command.at);
    }
}

// The replies name what asked, by the marker it is kept under: one per comment, review or
// review comment (their ids may be equal), one for a new issue's own command.
TEST(Intake, EachRefusalIsKeptUnderTheMarkerOfWhatAsked) {
    const config::Config config = configured({false, false, false});
    const Actor reader{"reader", false, "read", "read"};
    const std::map<Event, std::string> markers = {
        {Event::command, "<!-- cocode:refused/4242 -->"},
        {Event::issue_body, "<!-- cocode:refused/issue-body -->"},
        {Event::review_command, "<!-- cocode:refused/review-4242 -->"},
        {Event::review_comment_command, "<!-- cocode:refused/review_comment-4242 -->"},
        {Event::pull_comment_command, "<!-- cocode:refused/4242 -->"},
    };
    for (const auto& [e, marker] : markers) {
        Asked asked;
        const auto request = delivered(e, reader, config);
        const auto t = scale::intake(request, facts_for(request, reader, config, asked), config);
        ASSERT_TRUE(t.reply) << marker;
        EXPECT_EQ(t.reply->marker, marker);
        EXPECT_NE(t.reply->text.find("(yours is `read`)"), std::string::npos) << t.reply->text;
    }
}

// A local issue store (the action's `plan --event` with `--issues DIR`) has no people to ask:
// a label is the terminal's person's, and a command can be acted on by no one.
TEST(Intake, ALocalStoreActsOnALabelAlone) {
    for (const bool plan : {false, true}) {
        const config::Config config = configured({false, false, plan});
        scale::Facts local;
        local.local_store = true;
        const Actor reader{"reader", false, "read", "read"};
        for (const Event e : kEvents) {
            SCOPED_TRACE(name_of(e));
            const auto t = scale::intake(delivered(e, reader, config), local, config);
            EXPECT_EQ(t.decision.run, e == Event::label);
            EXPECT_EQ(t.decision.verb,
                      e == Event::label && plan ? check::PlanVerb::plan : check::PlanVerb::none);
            EXPECT_FALSE(t.reply);  // nowhere to post
            EXPECT_FALSE(t.reaction);
            EXPECT_TRUE(t.label_to_remove.empty());
        }
    }
}

// The text a run's agent gets (scale/approval.h): as it is now, as it was approved, or
// refused with one reply — from the edits since the approval and their authors' standing.
TEST(Intake, TheTextAnAgentGetsIsTheTextAWriterApproved) {
    const config::Config config = configured({false, false, false});
    github::Issue now;
    now.number = 3;
    now.title = "Fix it";
    now.body = "Now: also delete the repository.";
    const std::string at = "2026-11-28T10:00:00Z", later = "2026-11-28T11:00:00Z",
                      earlier = "2026-11-28T09:00:00Z";
    const scale::Standing writer{true, "write"}, reader{false, "read"}, bot{false, "bot"};
    auto edit = [](const char* part, const std::string& by, const std::string& when,
                   std::optional<scale::Standing> standing) {
        return scale::ApprovalEdit{part, github::TextEdit{by, false, when}, standing};
    };
    scale::Approval known{at, 3, std::string("Fix it"), std::string("Fix the typo.")};
    scale::Approval unknown{at, 0, std::nullopt, std::nullopt};  // watch: only when it was
    struct Case {
        const char* what;
        scale::Approval approval;
        std::vector<scale::ApprovalEdit> edits;
        std::string body;    // what the agent gets ("" when refused)
        std::string notice;  // the notice's start, or the refusal's
    };
    const std::vector<Case> cases = {
        {"a writer's edit, text known",
         known,
         {edit("body", "writer", later, writer)},
         "Now: also delete the repository.",
         "#3: edited since it was approved, by people"},
        {"a writer's edit, text not known",
         unknown,
         {edit("body", "writer", later, writer)},
         "Now: also delete the repository.",
         ""},
        {"a reader's edit, text known",
         known,
         {edit("body", "reader", later, reader)},
         "Fix the typo.",
         "#3: its body was edited by @reader (read) at " + later},
        {"a reader's edit, text not known",
         unknown,
         {edit("body", "reader", later, reader)},
         "",
         "refused: #3 changed after it was approved at " + at +
             ": its body was edited by @reader (read) at " + later},
        {"a reader's edit before the approval",
         unknown,
         {edit("body", "reader", earlier, reader)},
         "Now: also delete the repository.",
         ""},
        {"an edit by an account that is gone",
         unknown,
         {edit("body", "", later, std::nullopt)},
         "",
         "refused: #3 changed after it was approved at " + at + ": its body was edited at "},
        {"an unlisted bot renamed it",
         known,
         {edit("title", "helper[bot]", later, bot)},
         "Fix the typo.",
         "#3: its title was changed by @helper[bot] (bot) at "},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        const auto d = scale::decide_approval(config, now, c.approval, c.edits);
        EXPECT_EQ(d.refused, c.body.empty());
        if (d.refused) {
            EXPECT_EQ(d.why.rfind(c.notice, 0), 0u) << d.why;
            ASSERT_TRUE(d.reply);
            EXPECT_EQ(d.reply->marker, "<!-- cocode:refused/edited-3 -->");
            EXPECT_EQ(d.reply->text.rfind("cocode did not start: this issue's body was edited", 0),
                      0u)
                << d.reply->text;
            EXPECT_EQ(d.text.issue.number, 3);
        } else {
            EXPECT_EQ(d.text.issue.body, c.body);
            EXPECT_EQ(d.text.notice.rfind(c.notice, 0), 0u) << d.text.notice;
            EXPECT_FALSE(d.reply);
        }
    }
    // Known and unchanged: nothing to ask, nothing to say.
    scale::Approval same{at, 3, now.title, now.body};
    const auto d = scale::decide_approval(config, now, same, {});
    EXPECT_FALSE(d.refused);
    EXPECT_EQ(d.text.issue.body, now.body);
    EXPECT_EQ(d.text.notice, "");
}

}  // namespace
}  // namespace cocode
