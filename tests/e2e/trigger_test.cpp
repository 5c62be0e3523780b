// Who may start cocode from GitHub: `plan --event` on GitHub's own example payloads
// (@octokit/webhooks-examples: issues.labeled, issue_comment.created), against the loopback
// GitHub. A label dispatches; a /cocode comment runs only for write, maintain or admin — asked
// of GitHub — and gets 👀; read and none get one polite reply, however often the event is
// replayed; bots are refused without a reply unless listed.
#include "scale/trigger.h"

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "fake_github.h"
#include "github/api.h"
#include "github/http.h"
#include "scale/intake.h"
#include "test_support.h"
#include "webhook_examples.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class Trigger : public ::testing::Test {
  protected:
    void SetUp() override {
        FakeGitHub::Options options = loopback_options();
        options.owner = "Codertocat";  // the examples' repository
        options.repo = "Hello-World";
        github_ = std::make_unique<FakeGitHub>(options);
        github_->add_issue(1, "Spelling error in the README file", "It says Helo.", {"bug"});
        make_repo(dir_ / "repo");
        fs::create_directories(dir_ / "repo/.cocode");
        write_text(
            dir_ / "repo/.cocode/config.json",
            json{{"agents", {{"claude", {{"type", "claude"}}}, {"codex", {{"type", "codex"}}}}},
                 {"trigger", {{"label", "bug"}, {"allowed_bots", {"helper[bot]"}}}}}
                .dump());
    }

    // `cocode-dispatch <command> --event FILE` with the payload, as the action runs it.
    Shell with_event(const std::string& command, const json& payload,
                     const std::string& event_name) {
        write_text(dir_ / "event.json", payload.dump());
        return sh("GITHUB_TOKEN=" + std::string(kTestToken) +
                      " GITHUB_API_URL=" + github_->base_url() +
                      " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) +
                      " GITHUB_EVENT_NAME=" + event_name + " " +
                      quote(tool_path("cocode-dispatch").string()) + " " + command + " --event " +
                      quote((dir_ / "event.json").string()),
                  dir_ / "repo");
    }
    // plan --event: prints the matrix's entries.
    Shell plan(const json& payload, const std::string& event_name) {
        return with_event("plan --json", payload, event_name);
    }

    json comment(const std::string& body, const std::string& login,
                 const std::string& type = "User") {
        json payload = example_payload("issue_comment", "created");
        payload["comment"]["id"] = github_->add_comment(1, body, login);
        payload["comment"]["body"] = body;
        payload["comment"]["user"]["login"] = login;
        payload["comment"]["user"]["type"] = type;
        return payload;
    }

    std::size_t replies_on(long number) const {
        std::size_t n = 0;
        for (const auto& c : github_->comments_of(number))
            n += c["body"].get<std::string>().find("<!-- cocode:refused/") != std::string::npos;
        return n;
    }

    std::vector<json> replies() const {
        std::vector<json> out;
        for (const auto& c : github_->comments_of(1))
            if (c["body"].get<std::string>().find("<!-- cocode:refused/") != std::string::npos)
                out.push_back(c);
        return out;
    }

    TempDir dir_;
    std::unique_ptr<FakeGitHub> github_;
};

// One decision for what is said on a cocode pull request, whatever brought it: `serve`'s webhook
// (read_event as the X-GitHub-Event header names it, then decide), the action's `continue
// --event` (the same payload under GITHUB_EVENT_NAME, the tool itself run here) and `watch`'s
// poll (polled_request on what GitHub's lists say, then decide). A table of (event, actor's
// permission, command, state of the pull request) → action, run against all three: a round
// with the words said; a refusal answered once (a person's command); a refusal not answered (a
// review, an unlisted bot); or nothing asked (an approve-merge is the gate's alone).
TEST_F(Trigger, WhatIsSaidOnAPullRequestIsOneDecisionWhateverBringsIt) {
    github_->set_permission("writer", "write", "write");
    github_->set_permission("reader", "read", "read");
    github_->set_permission("deploy[bot]", "write", "write");
    const long pair = github_->add_pull("Fix the README", "cocode/1-claude");
    const long other = github_->add_pull("A person's branch", "feature/readme");
    const long fork = github_->add_pull("From a fork", "cocode/1-claude", "someone/Hello-World");
    const auto config = config::parse_config(read_text(dir_ / "repo/.cocode/config.json"),
                                             dir_ / "repo/.cocode/config.json", dir_ / "repo")
                            .value_or_throw();
    github::HttpOptions options;
    options.base = github::parse_base_url(github_->base_url(), "test").value_or_throw();
    options.ca_bundle = loopback_tls().files.certificate;
    options.cache_dir = dir_ / "cache";
    auto http = github::HttpClient::create(options, github::token_auth(kTestToken, "GITHUB_TOKEN"))
                    .value_or_throw();
    github::GitHub api(*http, {"Codertocat", "Hello-World"});

    enum class Then { round, answered, refused, nothing };
    struct Row {
        std::string event;  // comment, review_comment, review
        std::string state;  // a review's: CHANGES_REQUESTED, COMMENTED, APPROVED
        std::string actor;
        std::string body;
        long pull;
        Then then;
        std::string words;  // a round's instruction
    };
    const std::vector<Row> rows = {
        {"comment", "", "writer", "/cocode use the new spelling", pair, Then::round,
         "use the new spelling"},
        {"comment", "", "reader", "/cocode use the new spelling", pair, Then::answered, ""},
        {"comment", "", "helper[bot]", "/cocode", pair, Then::round, ""},
        {"comment", "", "deploy[bot]", "/cocode", pair, Then::refused, ""},
        {"comment", "", "writer", "/cocode approve-merge 0123456789abcdef", pair, Then::nothing,
         ""},
        {"comment", "", "reader", "/cocode approve-merge 0123456789abcdef", pair, Then::nothing,
         ""},
        {"comment", "", "writer", "Looks fine to me.", pair, Then::nothing, ""},
        {"comment", "", "writer", "/cocode again", other, Then::refused, ""},
        {"comment", "", "writer", "/cocode again", fork, Then::refused, ""},
        {"review_comment", "", "writer", "/cocode rename it", pair, Then::round, "rename it"},
        {"review_comment", "", "reader", "/cocode rename it", pair, Then::answered, ""},
        {"review_comment", "", "writer", "a typo here", pair, Then::nothing, ""},
        {"review", "CHANGES_REQUESTED", "writer", "Two things.", pair, Then::round, ""},
        {"review", "CHANGES_REQUESTED", "reader", "Two things.", pair, Then::refused, ""},
        {"review", "COMMENTED", "writer", "/cocode also the docs", pair, Then::round,
         "also the docs"},
        {"review", "COMMENTED", "writer", "/cocode approve-merge 0123456789abcdef", pair,
         Then::nothing, ""},
        {"review", "APPROVED", "writer", "Good.", pair, Then::nothing, ""},
    };
    const std::vector<std::string> entries = {"webhook", "continue --event", "watch poll"};
    for (const auto& row : rows) {
        const bool bot = row.actor.find("[bot]") != std::string::npos;
        const std::string type = bot ? "Bot" : "User";
        // The thing said, on the loopback GitHub, and the event GitHub would send for it.
        json payload;
        std::string event_name;
        scale::Request request;
        const auto head = row.pull == fork ? std::string("someone/Hello-World")
                                           : std::string("Codertocat/Hello-World");
        if (row.event == "comment") {
            event_name = "issue_comment";
            payload = example_payload("issue_comment", "created");
            payload["issue"]["number"] = row.pull;
            payload["issue"]["pull_request"] = {{"url", "https://api.github.com/pulls/1"}};
            payload["comment"]["id"] = github_->add_comment(row.pull, row.body, row.actor);
            payload["comment"]["body"] = row.body;
            payload["comment"]["user"] = {{"login", row.actor}, {"type", type}};
            request = {scale::Request::Kind::command, payload["comment"]["id"].get<long long>()};
        } else {
            const bool review = row.event == "review";
            const long long review_id = github_->add_review(
                row.pull, row.actor, review ? row.state : "COMMENTED", review ? row.body : "");
            event_name = review ? "pull_request_review" : "pull_request_review_comment";
            payload = example_payload(event_name, review ? "submitted" : "created");
            json& said = payload[review ? "review" : "comment"];
            said["id"] = review
                             ? review_id
                             : github_->add_review_comment(row.pull, review_id, row.actor,
                                                           "README.md", 1, "@@ -1 +1 @@", row.body);
            said["body"] = row.body;
            said["user"] = {{"login", row.actor}, {"type", type}};
            if (review) {
                std::string state = row.state;
                std::transform(state.begin(), state.end(), state.begin(), ::tolower);
                said["state"] = state;
            }
            payload["pull_request"]["number"] = row.pull;
            payload["pull_request"]["head"]["ref"] =
                row.pull == other ? "feature/readme" : "cocode/1-claude";
            payload["pull_request"]["head"]["repo"]["full_name"] = head;
            request = {review ? scale::Request::Kind::review : scale::Request::Kind::review_comment,
                       said["id"].get<long long>()};
        }
        const std::size_t answers_before = replies_on(row.pull);
        for (const auto& entry : entries) {
            SCOPED_TRACE(entry + ": " + row.event + " " + row.state + " by " + row.actor + " on #" +
                         std::to_string(row.pull) + ": " + row.body);
            bool round = false;
            std::string words;
            if (entry == "continue --event") {
                // The tool decides, says what it decided, and (for a round) goes on to the
                // pair's runs, which this repository does not have.
                const Shell said = with_event("continue --json", payload, event_name);
                round = said.err.find("): a round, for ") != std::string::npos;
                if (!round) {
                    EXPECT_EQ(said.exit_code, 0) << said.err;
                }
                if (round) words = row.words;  // what the round is given: asserted below
            } else {
                std::optional<scale::EventRequest> asked;
                if (entry == "webhook") {
                    asked = scale::read_event(event_name, payload, config.trigger).value_or_throw();
                } else {
                    github::PullRequest pull;
                    pull.number = row.pull;
                    pull.head_ref = row.pull == other ? "feature/readme" : "cocode/1-claude";
                    pull.head_repository = head;
                    const bool changes = row.state == "CHANGES_REQUESTED";
                    asked = scale::polled_request(pull, request, row.actor, bot, row.body, changes,
                                                  config.trigger);
                }
                if (asked) {
                    const auto decision = scale::decide(*asked, config, api).value_or_throw();
                    round = decision.run && decision.round;
                    words = decision.instruction;
                    if (round) {
                        EXPECT_EQ(decision.pull, row.pull);
                        EXPECT_EQ(decision.issue, 1);
                        EXPECT_EQ(decision.agents, std::vector<std::string>{"claude"});
                    }
                }
            }
            EXPECT_EQ(round, row.then == Then::round);
            EXPECT_EQ(words, row.then == Then::round ? row.words : "");
        }
        // However many ways it came, a person's refused command is answered once; nothing
        // else is answered.
        EXPECT_EQ(replies_on(row.pull) - answers_before, row.then == Then::answered ? 1u : 0u)
            << row.event << " by " << row.actor << ": " << row.body;
    }
}

TEST_F(Trigger, TheTriggerLabelDispatchesTheIssueToEveryAgent) {
    Shell labelled = plan(example_payload("issues", "labeled"), "issues");  // label "bug"
    ASSERT_EQ(labelled.exit_code, 0) << labelled.err;
    EXPECT_EQ(labelled.out,
              R"({"include":[{"agent":"claude","issue":1},{"agent":"codex","issue":1}]})"
              "\n");
    json other = example_payload("issues", "labeled");
    other["label"]["name"] = "question";
    Shell ignored = plan(other, "issues");
    EXPECT_EQ(ignored.exit_code, 0) << ignored.err;
    EXPECT_EQ(ignored.out, "{\"include\":[]}\n");
    EXPECT_NE(ignored.err.find("nothing to do: label 'question' is not 'bug'"), std::string::npos)
        << ignored.err;
    Shell opened = plan(example_payload("issues", "opened"), "issues");
    EXPECT_EQ(opened.out, "{\"include\":[]}\n");
}

TEST_F(Trigger, WriteMaintainAndAdminMayCommandAndGetEyes) {
    github_->set_permission("writer", "write", "write");
    github_->set_permission("maintainer", "write", "maintain");
    github_->set_permission("owner", "admin", "admin");
    Shell writer = plan(comment("/cocode codex\nplease", "writer"), "issue_comment");
    ASSERT_EQ(writer.exit_code, 0) << writer.err;
    EXPECT_EQ(writer.out, R"({"include":[{"agent":"codex","issue":1}]})"
                          "\n");
    EXPECT_NE(writer.err.find("issue #1: /cocode from writer"), std::string::npos) << writer.err;
    Shell maintainer = plan(comment("/cocode", "maintainer"), "issue_comment");
    EXPECT_EQ(maintainer.out,
              R"({"include":[{"agent":"claude","issue":1},{"agent":"codex","issue":1}]})"
              "\n");
    Shell owner = plan(comment("  \n/cocode claude", "owner"), "issue_comment");
    EXPECT_EQ(owner.out, R"({"include":[{"agent":"claude","issue":1}]})"
                         "\n");
    int eyes = 0;
    for (const auto& r : github_->reactions()) eyes += r["content"] == "eyes";
    EXPECT_EQ(eyes, 3);
    EXPECT_TRUE(replies().empty());
}

TEST_F(Trigger, ReadAndStrangersAreRefusedWithOneReplyEvenWhenReplayed) {
    github_->set_permission("reader", "read", "triage");
    json payload = comment("/cocode", "reader");
    for (int i = 0; i < 2; ++i) {  // GitHub redelivers; the workflow is re-run
        Shell refused = plan(payload, "issue_comment");
        EXPECT_EQ(refused.exit_code, 0) << refused.err;
        EXPECT_EQ(refused.out, "{\"include\":[]}\n");
        EXPECT_NE(refused.err.find("refused: reader has triage permission; write, maintain or "
                                   "admin is needed"),
                  std::string::npos)
            << refused.err;
    }
    ASSERT_EQ(replies().size(), 1u);
    EXPECT_NE(replies()[0]["body"].get<std::string>().find("@reader thanks"), std::string::npos);
    Shell stranger = plan(comment("/cocode", "passer-by"), "issue_comment");  // 404: none
    EXPECT_EQ(stranger.out, "{\"include\":[]}\n");
    EXPECT_NE(stranger.err.find("refused: passer-by has none permission"), std::string::npos)
        << stranger.err;
    EXPECT_EQ(replies().size(), 2u);
    EXPECT_TRUE(github_->reactions().empty());
}

TEST_F(Trigger, BotsAreRefusedSilentlyUnlessListed) {
    github_->set_permission("ci-bot[bot]", "write", "write");  // even with write
    Shell bot = plan(comment("/cocode", "ci-bot[bot]", "Bot"), "issue_comment");
    EXPECT_EQ(bot.exit_code, 0) << bot.err;
    EXPECT_EQ(bot.out, "{\"include\":[]}\n");
    EXPECT_NE(bot.err.find("refused: ci-bot[bot] is a bot not listed in trigger.allowed_bots"),
              std::string::npos)
        << bot.err;
    EXPECT_TRUE(replies().empty());
    Shell listed = plan(comment("/cocode claude", "helper[bot]", "Bot"), "issue_comment");
    EXPECT_EQ(listed.out, R"({"include":[{"agent":"claude","issue":1}]})"
                          "\n");
}

TEST_F(Trigger, WhatIsNotACommandAsksForNothing) {
    github_->set_permission("writer", "write", "write");
    // An unknown agent: one reply naming the agents there are; a name that is not one is not
    // echoed into the reply.
    Shell unknown = plan(comment("/cocode gpt `@everyone`", "writer"), "issue_comment");
    EXPECT_EQ(unknown.out, "{\"include\":[]}\n");
    ASSERT_EQ(replies().size(), 1u);
    const std::string reply = replies()[0]["body"];
    EXPECT_NE(reply.find("there is no agent `gpt`"), std::string::npos) << reply;
    EXPECT_NE(reply.find("the agents are `claude`, `codex`."), std::string::npos) << reply;
    for (const auto& [body, action] : std::vector<std::pair<std::string, std::string>>{
             {"please /cocode", "created"}, {"/cocodex", "created"}, {"/cocode", "edited"}}) {
        json payload = comment(body, "writer");
        payload["action"] = action;
        Shell none = plan(payload, "issue_comment");
        EXPECT_EQ(none.exit_code, 0) << body;
        EXPECT_EQ(none.out, "{\"include\":[]}\n") << body;
    }
    json on_pr = comment("/cocode", "writer");
    on_pr["issue"]["pull_request"] = {{"url", "https://api.github.com/x"}};
    EXPECT_EQ(plan(on_pr, "issue_comment").out, "{\"include\":[]}\n");
    // Only the unknown agent's command was answered: nothing else was a command to refuse.
    EXPECT_EQ(replies().size(), 1u);

    Shell push = plan(example_payload("issues", "labeled"), "push");
    EXPECT_EQ(push.exit_code, 2);
    EXPECT_EQ(push.err,
              "cocode-dispatch: error: event 'push': cocode plans from 'issues' (labeled, "
              "opened), 'issue_comment' (created), 'pull_request_review' (submitted), "
              "'pull_request_review_comment' (created), 'check_suite' (completed) and "
              "'pull_request' (synchronize)\n");
    write_text(dir_ / "broken.json", "{\"action\": ");
    Shell broken = sh(quote(tool_path("cocode-dispatch").string()) + " plan --event ../broken.json",
                      dir_ / "repo");
    EXPECT_EQ(broken.exit_code, 2);
    EXPECT_EQ(
        broken.err,
        "cocode-dispatch: error: --event ../broken.json: not valid JSON (a webhook payload)\n");
}

// The action's `plan --event` on a local issue store (`--issues DIR`): no people to ask, so a
// label is the person's at the terminal and starts the runs; a comment command is refused.
TEST_F(Trigger, OnALocalStoreALabelStartsTheRunsAndACommandIsRefused) {
    fs::create_directories(dir_ / "issues");
    write_text(dir_ / "issues/1.json",
               json{{"number", 1}, {"title", "Helo"}, {"body", "It says Helo."}}.dump());
    auto plan_local = [&](const json& payload, const std::string& event_name) {
        write_text(dir_ / "event.json", payload.dump());
        return sh("GITHUB_EVENT_NAME=" + event_name + " " +
                      quote(tool_path("cocode-dispatch").string()) +
                      " plan --json --issues ../issues --event ../event.json",
                  dir_ / "repo");
    };
    json labelled = example_payload("issues", "labeled");
    labelled["issue"]["number"] = 1;
    labelled["label"]["name"] = "bug";
    labelled["sender"]["login"] = "reader";  // nobody's permission is asked of a folder
    Shell planned = plan_local(labelled, "issues");
    EXPECT_EQ(planned.exit_code, 0) << planned.err;
    EXPECT_EQ(planned.out,
              R"({"include":[{"agent":"claude","issue":1},{"agent":"codex","issue":1}]})"
              "\n");
    EXPECT_NE(planned.err.find("issue #1 labelled 'bug'"), std::string::npos) << planned.err;
    Shell commanded = plan_local(comment("/cocode", "writer"), "issue_comment");
    EXPECT_EQ(commanded.exit_code, 2);
    EXPECT_NE(commanded.err.find("the local issue store has no permissions to ask"),
              std::string::npos)
        << commanded.err;
}

// Who may start cocode is one decision (scale::decide) for every way of asking: the table of
// actor kind × permission × trigger, through the action's `plan --event`. A label counts only
// from someone who may command; a refused label is answered once on the issue and taken off.
TEST_F(Trigger, WhoMayStartCocodeIsOneDecisionForLabelsCommandsAndPlans) {
    struct Actor {
        std::string login, type, permission, role;
        bool runs;
    };
    const std::vector<Actor> actors = {
        {"owner", "User", "admin", "admin", true},
        {"maintainer", "User", "write", "maintain", true},
        {"writer", "User", "write", "write", true},
        {"triager", "User", "read", "triage", false},
        {"reader", "User", "read", "read", false},
        {"passer-by", "User", "", "", false},              // no permission at all: 404
        {"helper[bot]", "Bot", "", "", true},              // listed in trigger.allowed_bots
        {"labeler[bot]", "Bot", "read", "triage", false},  // the bot that labelled in the attack
        {"deploy[bot]", "Bot", "write", "write", false},   // a bot needs listing, even with write
    };
    for (const auto& a : actors)
        if (!a.permission.empty()) github_->set_permission(a.login, a.permission, a.role);
    const std::string all =
        R"({"include":[{"agent":"claude","issue":1},{"agent":"codex","issue":1}]})";
    const std::string planned =
        R"({"include":[{"agent":"claude","issue":1,"plan":true},{"agent":"codex","issue":1,"plan":true}]})";
    for (const auto& a : actors)
        for (const std::string trigger : {"label", "command", "plan", "body"}) {
            SCOPED_TRACE(a.login + " × " + trigger);
            github_->set_label(1, "bug", false, "owner");
            json payload;
            std::string event = "issue_comment";
            if (trigger == "label") {
                github_->set_label(1, "bug", true, a.login);
                payload = example_payload("issues", "labeled");
                payload["sender"]["login"] = a.login;
                payload["sender"]["type"] = a.type;
                event = "issues";
            } else if (trigger == "body") {  // `/cocode` in a new issue's body
                payload = example_payload("issues", "opened");
                payload["issue"]["number"] = 1;
                payload["issue"]["body"] = "/cocode\nThe README says Helo.";
                payload["issue"]["user"]["login"] = a.login;
                payload["issue"]["user"]["type"] = a.type;
                event = "issues";
            } else {
                payload = comment(trigger == "plan" ? "/cocode plan" : "/cocode", a.login, a.type);
            }
            const std::size_t refusals = replies().size();
            Shell planned_runs = plan(payload, event);
            ASSERT_EQ(planned_runs.exit_code, 0) << planned_runs.err;
            const std::string expected = !a.runs             ? "{\"include\":[]}"
                                         : trigger == "plan" ? planned
                                                             : all;
            EXPECT_EQ(planned_runs.out, expected + "\n") << planned_runs.err;
            const auto labels = github_->labels_of(1);
            const bool labelled = std::find(labels.begin(), labels.end(), "bug") != labels.end();
            if (trigger == "label") {
                EXPECT_EQ(labelled, a.runs) << "a refused label is taken off";
                std::string answer;
                for (const auto& c : replies())
                    if (c["body"].get<std::string>().find("refused/label-1") != std::string::npos)
                        answer = c["body"];
                if (!a.runs) {
                    EXPECT_NE(answer.find("@" + a.login + " the `bug` label starts coding agents"),
                              std::string::npos)
                        << answer;
                }
            } else if (trigger == "body") {
                // One answer on the issue for its own command (a person's; a bot's gets none).
                std::string answer;
                for (const auto& c : replies())
                    if (c["body"].get<std::string>().find("refused/issue-body") !=
                        std::string::npos)
                        answer = c["body"];
                EXPECT_EQ(answer.find("@" + a.login + " thanks") != std::string::npos,
                          !a.runs && a.type == "User")
                    << answer;
            } else {
                // A person's refused command is answered once; a bot's never (no bot loops).
                EXPECT_EQ(replies().size(), refusals + (!a.runs && a.type == "User" ? 1 : 0));
            }
        }
    // However many labels were refused, the issue holds one answer about them.
    int label_answers = 0;
    for (const auto& c : replies())
        label_answers += c["body"].get<std::string>().find("refused/label-1") != std::string::npos;
    EXPECT_EQ(label_answers, 1);
}

// On a pull request cocode opened, `continue --event` (the action's review workflow) decides on
// a round as serve does: the pair from the branch; a review asking for changes or a command from
// someone who may command; 👀 where GitHub has reactions; everything else starts nothing. This
// repository has no runs: an accepted round ends in "no run matches", after the decision.
class TriggerRounds : public Trigger {
  protected:
    Shell round(const json& payload, const std::string& event_name) {
        return with_event("continue", payload, event_name);
    }
    json review(long pull, const std::string& login, const std::string& state,
                const std::string& body = "", const std::string& head = "cocode/1-claude") {
        json payload = example_payload("pull_request_review", "submitted");
        payload["review"]["id"] = github_->add_review(pull, login, "COMMENTED", body);
        payload["review"]["state"] = state;
        payload["review"]["body"] = body;
        payload["review"]["user"]["login"] = login;
        payload["review"]["user"]["type"] = "User";
        payload["pull_request"]["number"] = pull;
        payload["pull_request"]["head"]["ref"] = head;
        payload["pull_request"]["head"]["repo"]["full_name"] = "Codertocat/Hello-World";
        return payload;
    }
    json review_comment(long pull, const std::string& login, const std::string& body) {
        json payload = example_payload("pull_request_review_comment", "created");
        const long long review = github_->add_review(pull, login, "COMMENTED", "");
        payload["comment"]["id"] =
            github_->add_review_comment(pull, review, login, "README", 1, "@@ -1 +1 @@", body);
        payload["comment"]["body"] = body;
        payload["comment"]["user"]["login"] = login;
        payload["comment"]["user"]["type"] = "User";
        payload["pull_request"]["number"] = pull;
        payload["pull_request"]["head"]["ref"] = "cocode/1-claude";
        payload["pull_request"]["head"]["repo"]["full_name"] = "Codertocat/Hello-World";
        return payload;
    }
    std::vector<json> replies_on(long pull) const {
        std::vector<json> out;
        for (const auto& c : github_->comments_of(pull))
            if (c["body"].get<std::string>().find("<!-- cocode:refused/") != std::string::npos)
                out.push_back(c);
        return out;
    }
    static constexpr char kNoRun[] = "no run matches '1'";
};

TEST_F(TriggerRounds, AWritersReviewOrCommandAsksForARoundOfThePairWhoseBranchItIs) {
    github_->set_permission("writer", "write", "write");
    const long pull = github_->add_pull("Fix #1", "cocode/1-claude");

    Shell changes =
        round(review(pull, "writer", "changes_requested", "Not yet."), "pull_request_review");
    EXPECT_EQ(changes.exit_code, 2) << changes.err;
    EXPECT_NE(changes.err.find("pull request #" + std::to_string(pull) +
                               " (issue #1, agent claude): a round, for a review by writer"),
              std::string::npos)
        << changes.err;
    EXPECT_NE(changes.err.find(kNoRun), std::string::npos) << changes.err;

    // A command in a review comment: 👀 on it.
    Shell command = round(review_comment(pull, "writer", "/cocode keep the README short"),
                          "pull_request_review_comment");
    EXPECT_NE(command.err.find("a round, for a review comment by writer"), std::string::npos)
        << command.err;
    ASSERT_EQ(github_->reactions().size(), 1u);
    EXPECT_EQ(github_->reactions()[0]["content"], "eyes");
    // A comment on the pull request: its branch is asked of GitHub.
    json comment = this->comment("/cocode", "writer");
    comment["issue"]["number"] = pull;
    comment["issue"]["pull_request"] = {{"url", "https://api.github.com/x"}};
    Shell on_pr = round(comment, "issue_comment");
    EXPECT_NE(on_pr.err.find("(issue #1, agent claude): a round, for a command by writer"),
              std::string::npos)
        << on_pr.err;
    EXPECT_EQ(github_->reactions().size(), 2u);
    EXPECT_TRUE(replies_on(pull).empty());
}

TEST_F(TriggerRounds, ReadersBotsStrangersBranchesAndTalkStartNothing) {
    github_->set_permission("writer", "write", "write");
    github_->set_permission("reader", "read", "read");
    const long pull = github_->add_pull("Fix #1", "cocode/1-claude");
    auto nothing = [&](const Shell& shell, const std::string& why) {
        EXPECT_EQ(shell.exit_code, 0) << shell.err;
        EXPECT_NE(shell.err.find(why), std::string::npos) << shell.err;
        EXPECT_EQ(shell.err.find(kNoRun), std::string::npos) << shell.err;
    };
    // A reader's review asking for changes: not a command, not answered.
    nothing(round(review(pull, "reader", "changes_requested"), "pull_request_review"),
            "refused: reader has read permission");
    EXPECT_TRUE(replies_on(pull).empty());
    // A reader's command: one reply, however often it is delivered.
    const json command = review_comment(pull, "reader", "/cocode do it");
    for (int i = 0; i < 2; ++i)
        nothing(round(command, "pull_request_review_comment"), "refused: reader has read");
    EXPECT_EQ(replies_on(pull).size(), 1u);
    // A bot not listed; people talking to each other; a review that approves.
    json bot = review_comment(pull, "ci-bot[bot]", "/cocode");
    bot["comment"]["user"]["type"] = "Bot";
    nothing(round(bot, "pull_request_review_comment"), "is a bot not listed");
    nothing(round(review_comment(pull, "writer", "I think we should wait."),
                  "pull_request_review_comment"),
            "neither requests changes nor says /cocode");
    nothing(round(review(pull, "writer", "approved", "LGTM"), "pull_request_review"),
            "neither requests changes nor says /cocode");
    // Not a pair's branch; a fork's branch named like one; an agent not configured.
    nothing(
        round(review(pull, "writer", "changes_requested", "", "feature/x"), "pull_request_review"),
        "is not on a branch of cocode's (feature/x)");
    json fork = review(pull, "writer", "changes_requested");
    fork["pull_request"]["head"]["repo"]["full_name"] = "someone/Hello-World";
    nothing(round(fork, "pull_request_review"), "is from another repository (someone/Hello-World)");
    nothing(round(review(pull, "writer", "changes_requested", "", "cocode/1-gpt"),
                  "pull_request_review"),
            "is not on a branch of cocode's");
    // A failed check suite, with review.fix_checks off (the default).
    json suite = example_payload("check_suite", "completed");
    suite["check_suite"]["conclusion"] = "failure";
    suite["check_suite"]["pull_requests"] = {
        {{"number", pull}, {"head", {{"ref", "cocode/1-claude"}, {"sha", std::string(40, 'a')}}}}};
    nothing(round(suite, "check_suite"), "and review.fix_checks is off");
    // An issue's label is plan's, not a round.
    nothing(round(example_payload("issues", "labeled"), "issues"),
            "the event asks for runs on an issue (plan --event), not a round");
    EXPECT_TRUE(github_->reactions().empty());
    EXPECT_EQ(replies_on(pull).size(), 1u);
}

}  // namespace
}  // namespace cocode::test
