// The built-in agents as a user runs them: `cocode-dispatch run` starts a textproto agent that
// talks to a scripted chat-completions API over loopback TLS, works in its worktree (create,
// read, run the tests, fix), says DONE, and its commit with the marker is READY and PASSes the
// check; the same through files a person pastes into the run's inbox; the turn limit; the
// runner contract's REST backends; a missing key. The model's key is never in the run folder,
// the worktree, or a command's environment.
#include <sys/stat.h>

#include "dispatch_fixture.h"
#include "fake_chat.h"
#include "net/proxy.h"

namespace cocode::test {
namespace {

constexpr char kKey[] = "sk-cocode-test-key-5f2a9c71e4b8";

class BuiltinAgent : public DispatchRun {
  protected:
    void SetUp() override {
        DispatchRun::SetUp();
        tls_ = make_self_signed_certificate(dir_.path());
        // The project: a test that add.sh does not pass yet.
        write_text(repo_ / "test.sh", "test \"$(sh add.sh 2 3)\" = 5\n");
        sh_ok("git add test.sh && git commit -q -m 'the test'", repo_);
    }

    // The environment a user runs cocode-dispatch in: the key, and the loopback CA trusted.
    std::string env() const {
        return "SSL_CERT_FILE=" + quote(tls_.certificate.string()) + " CHAT_KEY=" + kKey + " ";
    }

    json textproto_agent(const FakeChat& chat, json extra = json::object()) {
        json agent = {{"type", "textproto"},
                      {"provider", "openai-compatible"},
                      {"base_url", chat.base_url()},
                      {"model", "scripted"},
                      {"key_env", "CHAT_KEY"}};
        agent.update(extra);
        return agent;
    }

    CertificateFiles tls_;
};

TEST_F(BuiltinAgent, AChatModelWorksTheIssueToAPassingCommit) {
    FakeChat chat({{
                       // Turn 1: read the test, write a wrong add.sh, run the test, look at
                       // the environment commands get.
                       "I'll read the test first.\n"
                       "[READ_FILE path=\"test.sh\"]\n"
                       "[CREATE_FILE path=\"add.sh\"]\necho $(($1 - $2))\n[/CREATE_FILE]\n"
                       "[RUN_COMMAND]\nsh test.sh && echo passed\n[/RUN_COMMAND]\n"
                       "[RUN_COMMAND]\nprintenv CHAT_KEY; echo key-status-$?\n[/RUN_COMMAND]\n",
                       // Turn 2: fix it and run the test again.
                       "The test failed; fixing the operator.\n"
                       "[EDIT_FILE path=\"add.sh\" start_line=\"1\" end_line=\"1\"]\n"
                       "echo $(($1 + $2))\n[/EDIT_FILE]\n"
                       "[RUN_COMMAND]\nsh test.sh && echo passed\n[/RUN_COMMAND]\n",
                       // Turn 3: done.
                       "[DONE]\nadd.sh adds its two arguments.\n[/DONE]\n",
                   },
                   kKey,
                   tls_,
                   0});
    configure(
        {{"agents", {{"tp", textproto_agent(chat)}}}, {"check", {{"verify", {"sh test.sh"}}}}});
    Shell run = dispatch("run 1", env());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

    const auto& r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::completed);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(event_types(r),
              (std::vector<std::string>{"RUN_START", "READY", "RUN_STOP", "CHECK"}));
    EXPECT_EQ(json::parse(read_text(r.folder / "check.json"))["verdict"], "PASS");
    EXPECT_EQ(r.ready_commit, sh_ok("git rev-parse cocode/1-tp", repo_).substr(0, 40));
    const std::string message = sh_ok("git log -1 --format=%B cocode/1-tp", repo_);
    EXPECT_EQ(message.rfind("add.sh adds its two arguments.\n", 0), 0u) << message;
    EXPECT_NE(message.find("cocode ready for check"), std::string::npos);
    EXPECT_EQ(sh_ok("git show cocode/1-tp:add.sh", repo_), "echo $(($1 + $2))\n");

    // Three self-contained outboxes, each with the results of the turn before.
    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        const std::string text = user_text(requests[i]);
        EXPECT_EQ(text.rfind("=== HEADER ===\nSession: ", 0), 0u);
        EXPECT_NE(text.find("Sequence: " + std::to_string(i + 1) + "\n"), std::string::npos);
        EXPECT_NE(text.find("Task: # Issue #1: Issue 1"), std::string::npos);
        EXPECT_NE(text.find("=== PROTOCOL ==="), std::string::npos);
        EXPECT_EQ(requests[i].key, kKey);
        EXPECT_EQ(requests[i].model, "scripted");
    }
    const std::string second = user_text(requests[1]);
    EXPECT_NE(second.find("[OK] READ_FILE"), std::string::npos) << second;
    EXPECT_NE(second.find("[OK] CREATE_FILE: Created 'add.sh'"), std::string::npos);
    EXPECT_NE(second.find("[FAILED] RUN_COMMAND: Ran 'sh test.sh && echo passed' (exit code 1)"),
              std::string::npos);
    EXPECT_NE(second.find("Output: key-status-1"), std::string::npos);  // no key for commands
    EXPECT_NE(second.find("--- test.sh ---\ntest \"$(sh add.sh 2 3)\" = 5\n--- end test.sh ---"),
              std::string::npos);
    EXPECT_NE(second.find("  add.sh (18 bytes)\n"), std::string::npos);
    const std::string third = user_text(requests[2]);
    EXPECT_NE(third.find("[OK] EDIT_FILE: Edited 'add.sh'"), std::string::npos) << third;
    EXPECT_NE(third.find("[OK] RUN_COMMAND: Ran 'sh test.sh && echo passed' (exit code 0)\n"
                         "  Output: passed\n"),
              std::string::npos);

    // The session on disk, in the seed's names and files.
    std::vector<fs::path> sessions, outboxes;
    for (const auto& e : fs::directory_iterator(r.folder / "sessions"))
        sessions.push_back(e.path());
    for (const auto& e : fs::directory_iterator(r.folder / "outbox")) outboxes.push_back(e.path());
    ASSERT_EQ(sessions.size(), 1u);
    const json session = json::parse(read_text(sessions[0]));
    EXPECT_EQ(session["isComplete"], true);
    EXPECT_EQ(session["sequenceNumber"], 4);
    const std::string id = session["sessionId"];
    std::sort(outboxes.begin(), outboxes.end());
    ASSERT_EQ(outboxes.size(), 3u);
    EXPECT_EQ(outboxes[0].filename(), id + "_seq0001.txt");
    EXPECT_EQ(read_text(outboxes[2]), user_text(requests[2]));
    EXPECT_EQ(read_lines(r.folder / "usage.jsonl").size(), 3u);
    EXPECT_EQ(read_text(r.folder / "output.md"), "add.sh adds its two arguments.\n");
    EXPECT_NE(read_text(r.folder / "run-info.yaml").find("cocode-dispatch agent --repo"),
              std::string::npos);
    // The key: nowhere on disk where the run left anything.
    EXPECT_FALSE(found_below(r.folder, kKey));
    EXPECT_FALSE(found_below(r.worktree, kKey));
    EXPECT_TRUE(nothing_left(r));
    // In the sandbox its network is its own: its model, through its proxy, and nothing else
    // (docs/security.md).
    if (run::read_run_info(r.folder)->get("network") == std::optional<std::string>("allowlist")) {
        const std::string base = chat.base_url();
        const int port = std::stoi(base.substr(base.rfind(':') + 1));
        const auto egress = net::read_egress(r.folder / "egress.jsonl");
        EXPECT_FALSE(egress.empty());
        for (const auto& e : egress)
            EXPECT_TRUE(e.allowed && e.host == "127.0.0.1" && e.port == port)
                << e.host << ":" << e.port << " by " << e.command;
    }
}

TEST_F(BuiltinAgent, ACopyPasteSessionReadsTheInboxInWriteOrderEachFileOnce) {
    configure({{"agents", {{"paste", {{"type", "textproto"}, {"transport", "file"}}}}},
               {"check", {{"verify", {"test -f notes.txt"}}}}});
    Shell run = dispatch("run 1 --detach");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const run::RunRecord r = runs().front();
    fs::path first;
    ASSERT_TRUE(wait_until([&] {
        if (!fs::exists(r.folder / "outbox")) return false;
        // The outbox under its own name: written atomically, its temporary file is not it.
        for (const auto& e : fs::directory_iterator(r.folder / "outbox"))
            if (e.path().extension() == ".txt") first = e.path();
        return !first.empty();
    }));
    EXPECT_EQ(first.filename().string().substr(8), "_seq0001.txt");
    // `logs` shows the outbox to paste, and where the answer goes.
    ASSERT_TRUE(wait_until([&] {
        return dispatch("logs " + r.run_id).out.find("----8<----\n=== HEADER ===") !=
               std::string::npos;
    }));
    EXPECT_NE(dispatch("logs " + r.run_id).out.find((r.folder / "inbox").string()),
              std::string::npos);

    // Two answers land at once; the older by write time is read first.
    const fs::path staged = r.folder / "inbox.new";
    fs::create_directories(staged);
    write_text(staged / "zz-first.txt",
               "[CREATE_FILE path=\"notes.txt\"]\nnotes\n[/CREATE_FILE]\n[READ_FILE "
               "path=\"notes.txt\"]\n");
    write_text(staged / "aa-second.txt", "[DONE]\nWrote the notes.\n[/DONE]\n");
    sh_ok("touch -d '2 minutes ago' zz-first.txt && touch -d '1 minute ago' aa-second.txt", staged);
    sh_ok("mv -T inbox.new inbox", r.folder);  // the empty inbox replaced in one rename

    ASSERT_EQ(dispatch("status --watch").exit_code, 0);
    const auto& done = only_run();
    EXPECT_EQ(done.status, run::RunStatus::completed);
    EXPECT_EQ(done.exit_code, 0);
    json session;
    for (const auto& e : fs::directory_iterator(done.folder / "sessions"))
        session = json::parse(read_text(e.path()));
    EXPECT_EQ(session["processedInbox"], json({"zz-first.txt", "aa-second.txt"}));
    EXPECT_EQ(session["isComplete"], true);
    // The second outbox carried the first answer's results and the file it asked for.
    const std::string second = read_text(
        done.folder / "outbox" / (session["sessionId"].get<std::string>() + "_seq0002.txt"));
    EXPECT_NE(second.find("[OK] CREATE_FILE: Created 'notes.txt'"), std::string::npos) << second;
    EXPECT_NE(second.find("--- notes.txt ---\nnotes\n--- end notes.txt ---"), std::string::npos);
    EXPECT_EQ(sh_ok("git show cocode/1-paste:notes.txt", repo_), "notes\n");
    ASSERT_TRUE(wait_until([&] { return fs::exists(done.folder / "check.json"); }));
    EXPECT_EQ(json::parse(read_text(done.folder / "check.json"))["verdict"], "PASS");
}

TEST_F(BuiltinAgent, ASessionThatNeverSaysDoneEndsAtItsTurnLimitAndARestartResumesIt) {
    FakeChat chat({{"Thinking.", "[MESSAGE]\nstill thinking\n[/MESSAGE]\n"}, kKey, tls_, 0});
    configure({{"agents", {{"tp", textproto_agent(chat, {{"max_turns", 2}, {"restarts", 1}})}}}});
    Shell run = dispatch("run 1 --no-check", env());
    EXPECT_EQ(run.exit_code, 1);
    const auto& r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::failed);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.restarts, 1);
    EXPECT_NE(r.error_summary.find("the turn limit of 2 was reached without DONE (max_turns)"),
              std::string::npos)
        << r.error_summary;
    EXPECT_NE(read_text(r.folder / "output.md").find("ended without DONE"), std::string::npos);
    // The restart resumed the session from its file: no turn was asked again.
    EXPECT_EQ(chat.requests().size(), 2u);
    EXPECT_NE(read_text(r.folder / "agent-stdout.txt").find("resuming session"), std::string::npos);
    EXPECT_TRUE(r.ready_commit.empty());
}

TEST_F(BuiltinAgent, ASessionEndsWhenItsTokenBudgetIsSpent) {
    FakeChat chat({{"Thinking."}, kKey, tls_, 0});
    configure({{"agents", {{"tp", textproto_agent(chat, {{"token_budget", 100}})}}}});
    EXPECT_EQ(dispatch("run 1 --no-check", env()).exit_code, 1);
    const auto& r = only_run();
    EXPECT_NE(r.error_summary.find("the token budget of 100 was spent without DONE"),
              std::string::npos)
        << r.error_summary;
    EXPECT_EQ(chat.requests().size(), 1u);  // the outbox alone is over 100 tokens
}

TEST_F(BuiltinAgent, TheRestBackendsSendThePromptOnceAndKeepTheAnswer) {
    FakeChat chat(
        {{"The issue asks for thing 1; it is a two-line change."}, "pplx-key-0000000000", tls_, 0});
    // Streamed: the answer reaches agent-stdout.txt piece by piece as the server sends it.
    configure({{"agents",
                {{"research",
                  {{"type", "perplexity"}, {"base_url", chat.base_url()}, {"stream", true}}}}}});
    Shell run = dispatch("run 1 --no-check", "SSL_CERT_FILE=" + quote(tls_.certificate.string()) +
                                                 " PERPLEXITY_API_KEY=pplx-key-0000000000 ");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto& r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::completed);
    ASSERT_EQ(chat.requests().size(), 1u);
    EXPECT_EQ(chat.requests()[0].model, "sonar");  // perplexity's default model
    EXPECT_TRUE(chat.requests()[0].stream);
    EXPECT_EQ(user_text(chat.requests()[0]), read_text(r.folder / "prompt.md"));
    EXPECT_EQ(read_text(r.folder / "output.md"),
              "The issue asks for thing 1; it is a two-line change.\n");
    EXPECT_NE(read_text(r.folder / "agent-stdout.txt")
                  .find("The issue asks for thing 1; it is a two-line change.\n"),
              std::string::npos);
    EXPECT_FALSE(found_below(r.folder, "pplx-key-0000000000"));

    // Without its key it does not start asking: the run exits 3, naming the variable.
    Shell again = dispatch("run 1 --no-check --resume", "SSL_CERT_FILE=/dev/null ");
    EXPECT_EQ(again.exit_code, 1) << again.out << again.err;  // a run failed
    auto all = runs();
    ASSERT_EQ(all.size(), 2u);
    const auto& missing = all[0].run_id > all[1].run_id ? all[0] : all[1];
    EXPECT_EQ(missing.exit_code, 3);
    EXPECT_NE(missing.error_summary.find("PERPLEXITY_API_KEY is not set"), std::string::npos)
        << missing.error_summary;
    EXPECT_EQ(chat.requests().size(), 1u);
    // doctor says so before a run does.
    Shell doctor = dispatch("doctor");
    EXPECT_NE(doctor.exit_code, 0);
    EXPECT_NE((doctor.out + doctor.err).find("PERPLEXITY_API_KEY is not set"), std::string::npos)
        << doctor.out << doctor.err;
}

}  // namespace
}  // namespace cocode::test
