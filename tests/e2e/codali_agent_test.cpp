// The codali agent as a user runs it: `cocode-dispatch run` starts it in the sandbox; a
// scripted chat-completions API on loopback TLS plays the model, which searches the index,
// opens what it found (asking in JSON the second time), edits, says DONE with a file outside
// the allowed paths, hears the critic's FAIL, removes it, says DONE again and passes: the
// commit carries the marker, the hook records READY, and cocode-check PASSes the run. Then
// the history past 90 % of a small context window — by the token counts the server reports,
// not the agent's first estimate — is summarised by the summary model, and the session goes on.
#include "dispatch_fixture.h"
#include "fake_chat.h"

namespace cocode::test {
namespace {

constexpr char kKey[] = "sk-codali-test-key-9d41b2";

class CodaliAgent : public DispatchRun {
  protected:
    void SetUp() override {
        DispatchRun::SetUp();
        tls_ = make_self_signed_certificate(dir_.path());
        fs::create_directories(repo_ / "lib");
        write_text(repo_ / "lib/math.sh", "add() {\n  echo $(($1 - $2))\n}\n");
        write_text(repo_ / "test.sh", ". ./lib/math.sh\ntest \"$(add 2 3)\" = 5\n");
        sh_ok("git add -A && git commit -q -m 'a bug and its test'", repo_);
    }

    std::string env() const {
        return "SSL_CERT_FILE=" + quote(tls_.certificate.string()) + " CODALI_KEY=" + kKey + " ";
    }

    json codali_agent(const FakeChat& chat, json extra = json::object()) {
        json agent = {{"type", "codali"},
                      {"provider", "openai-compatible"},
                      {"base_url", chat.base_url()},
                      {"model", "scripted"},
                      {"key_env", "CODALI_KEY"}};
        agent.update(extra);
        return agent;
    }

    // The message the agent sent last in a request: its answer to the model's previous turn.
    static std::string last_message(const ChatRequest& request) {
        return request.messages.back().value("content", "");
    }

    CertificateFiles tls_;
};

TEST_F(CodaliAgent, SearchOpenEditCriticFailFixPassAndTheCheckPasses) {
    FakeChat chat({{
                       // 1: search the index.
                       "Let me find the function.\n"
                       "AGENT_REQUEST v1\n"
                       "role: architect\n"
                       "request_id: r1\n"
                       "needs:\n"
                       "  - type: docdex.search\n"
                       "    query: add\n"
                       "    limit: 3\n"
                       "  - type: docdex.web\n"
                       "    query: shell arithmetic\n"
                       "context:\n"
                       "  summary: Find where add is defined\n",
                       // 2: open the hit, as JSON.
                       "{\"envelope\": \"AGENT_REQUEST v1\", \"role\": \"builder\", "
                       "\"request_id\": \"r2\", \"needs\": [{\"type\": \"docdex.open\", "
                       "\"doc_id\": \"lib/math.sh:1\", \"window\": 5}]}\n",
                       // 3: fix it, leave a note where no file may change, and hand in.
                       "[EDIT_FILE path=\"lib/math.sh\" start_line=\"2\" end_line=\"2\"]\n"
                       "  echo $(($1 + $2))\n"
                       "[/EDIT_FILE]\n"
                       "[CREATE_FILE path=\"notes.md\"]\nadd subtracted.\n[/CREATE_FILE]\n"
                       "[DONE]\nadd() adds.\n[/DONE]\n",
                       // 4: the critic said no: remove the note, hand in again.
                       "[DELETE_FILE path=\"notes.md\"]\n"
                       "[DONE]\nadd() adds its two arguments.\n\nThe subtraction was a typo.\n"
                       "[/DONE]\n",
                   },
                   kKey,
                   tls_,
                   0});
    configure({{"agents", {{"cd", codali_agent(chat)}}},
               {"check", {{"allowed_paths", {"lib/**"}}, {"verify", {"sh test.sh"}}}}});
    Shell run = dispatch("run 1", env());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

    const auto& r = only_run();
    EXPECT_EQ(r.status, run::RunStatus::completed);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(event_types(r),
              (std::vector<std::string>{"RUN_START", "READY", "RUN_STOP", "CHECK"}));
    EXPECT_EQ(json::parse(read_text(r.folder / "check.json"))["verdict"], "PASS");
    EXPECT_EQ(r.ready_commit, sh_ok("git rev-parse cocode/1-cd", repo_).substr(0, 40));
    const std::string message = sh_ok("git log -1 --format=%B cocode/1-cd", repo_);
    EXPECT_EQ(message.rfind("add() adds its two arguments.\n", 0), 0u) << message;
    EXPECT_NE(message.find("the critic passing at round 2"), std::string::npos) << message;
    EXPECT_NE(message.find("cocode ready for check"), std::string::npos);
    EXPECT_EQ(sh_ok("git show cocode/1-cd:lib/math.sh", repo_),
              "add() {\n  echo $(($1 + $2))\n}\n");
    EXPECT_EQ(sh_ok("git ls-tree -r --name-only cocode/1-cd", repo_).find("notes.md"),
              std::string::npos);
    EXPECT_EQ(sh_ok("git rev-list --count main..cocode/1-cd", repo_), "1\n");

    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 4u);
    for (const auto& q : requests) {
        EXPECT_EQ(q.key, kKey);
        EXPECT_EQ(q.model, "scripted");
        EXPECT_EQ(q.messages[0]["role"], "system");
        EXPECT_NE(q.messages[0]["content"].get<std::string>().find("AGENT_REQUEST v1"),
                  std::string::npos);
    }
    // The whole conversation goes with every call.
    EXPECT_EQ(requests[0].messages.size(), 2u);
    EXPECT_EQ(requests[3].messages.size(), 8u);
    const std::string task = requests[0].messages[1]["content"];
    EXPECT_NE(task.find("# Issue #1: Issue 1"), std::string::npos) << task;
    EXPECT_NE(task.find("## The repository\n"), std::string::npos) << task;
    EXPECT_NE(task.find("lib/ (1 file)\n  math.sh\n"), std::string::npos) << task;

    // 1: the search's answer, the defining file first; the web need refused with a warning.
    const std::string first = last_message(requests[1]);
    EXPECT_EQ(
        first.rfind("CODALI_RESPONSE v1\nrequest_id: r1\nresults:\n- type: docdex.search\n"
                    "  query: add\n  hits:\n  - doc_id: lib/math.sh:1\n    path: lib/math.sh\n"
                    "    line: 1\n",
                    0),
        0u)
        << first;
    EXPECT_NE(first.find("    defines: add\n"), std::string::npos);
    EXPECT_NE(first.find("meta:\n  repo_root: .\n  warnings:\n  - 'unsupported: docdex.web'\n"
                         "  elapsed_ms: "),
              std::string::npos)
        << first;
    // 2: asked in JSON, answered in JSON.
    const json second = json::parse(last_message(requests[2]));
    EXPECT_EQ(second["envelope"], "CODALI_RESPONSE v1");
    EXPECT_EQ(second["request_id"], "r2");
    EXPECT_EQ(second["results"][0]["content"], "add() {\n  echo $(($1 - $2))\n}\n");
    // 3: the edits' results and the critic's FAIL, with what to fix.
    const std::string third = last_message(requests[3]);
    EXPECT_NE(third.find("[OK] EDIT_FILE: Edited 'lib/math.sh'"), std::string::npos) << third;
    EXPECT_NE(third.find("[OK] CREATE_FILE: Created 'notes.md'"), std::string::npos);
    EXPECT_NE(third.find("CODALI_RESPONSE v1\nrequest_id: critic-1\nresults:\n"
                         "- type: critic.result\n  status: FAIL\n  reasons:\n"
                         "  - 'scope: outside the allowed paths: notes.md'\n"),
              std::string::npos)
        << third;
    EXPECT_NE(third.find("  touched_files:\n  - lib/math.sh\n  - notes.md\n"
                         "  plan_targets:\n  - lib/math.sh\n  - notes.md\n"),
              std::string::npos)
        << third;
    EXPECT_NE(third.find("  - critic_failed\n"), std::string::npos);

    // What the run folder keeps: the conversation, the index, each critic round's logs.
    const json session = json::parse(read_text(r.folder / "codali/session.json"));
    EXPECT_EQ(session["isComplete"], true);
    EXPECT_EQ(session["turns"], 4);
    EXPECT_EQ(session["criticRounds"], 1);
    EXPECT_EQ(session["messages"].size(), 9u);
    EXPECT_TRUE(fs::exists(r.folder / "index/xapian"));
    EXPECT_TRUE(fs::exists(r.folder / "critic/round-2/verify-1.log"));
    EXPECT_EQ(read_lines(r.folder / "usage.jsonl").size(), 4u);
    EXPECT_EQ(read_text(r.folder / "output.md"),
              "add() adds its two arguments.\n\nThe subtraction was a typo.\n");
    const std::string out = read_text(r.folder / "agent-stdout.txt");
    EXPECT_NE(out.find("[FAILED] critic round 1: scope: outside the allowed paths: notes.md"),
              std::string::npos)
        << out;
    EXPECT_FALSE(found_below(r.folder, kKey));
    EXPECT_FALSE(found_below(r.worktree, kKey));
    EXPECT_TRUE(nothing_left(r));
}

TEST_F(CodaliAgent, TheCriticsLastRoundEndsTheSessionWithTheWorkKeptButNotReady) {
    FakeChat chat({{"[CREATE_FILE path=\"notes.md\"]\nx\n[/CREATE_FILE]\n[DONE]\nnotes\n[/DONE]\n"},
                   kKey,
                   tls_,
                   0});
    configure({{"agents", {{"cd", codali_agent(chat, {{"critic_rounds", 1}})}}},
               {"check", {{"allowed_paths", {"lib/**"}}}}});
    Shell run = dispatch("run 1", env());
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    const auto& r = only_run();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.error_summary.find("the critic failed 1 times (critic_rounds): scope: outside the "
                                   "allowed paths: notes.md"),
              std::string::npos)
        << r.error_summary;
    // Kept on the branch, without the marker: no READY, and the check says why.
    EXPECT_EQ(sh_ok("git show cocode/1-cd:notes.md", repo_), "x\n");
    EXPECT_EQ(event_types(r), (std::vector<std::string>{"RUN_START", "RUN_CRASH", "CHECK"}));
    EXPECT_EQ(json::parse(read_text(r.folder / "check.json"))["verdict"], "FAIL");
    EXPECT_EQ(chat.requests().size(), 1u);
}

TEST_F(CodaliAgent, HistoryPastNinetyPercentOfTheWindowIsSummarisedAndTheSessionGoesOn) {
    // A large file read at turn 1 fills the window. The server counts a token per character,
    // four times the agent's first estimate: only the reported usage shows the window is full.
    std::string filler;
    for (int i = 0; filler.size() < 6000; ++i) filler += "filler line " + std::to_string(i) + "\n";
    write_text(repo_ / "big.txt", filler);
    sh_ok("git add big.txt && git commit -q -m filler", repo_);
    FakeChat::Options options{{
                                  "AGENT_REQUEST v1\nrole: librarian\nrequest_id: r1\nneeds:\n"
                                  "  - type: file.read\n    path: big.txt\n",
                                  "AGENT_REQUEST v1\nrole: librarian\nrequest_id: r2\nneeds:\n"
                                  "  - type: docdex.symbols\n    file: lib/math.sh\n",
                                  "AGENT_REQUEST v1\nrole: librarian\nrequest_id: r3\nneeds:\n"
                                  "  - type: file.list\n    root: lib\n",
                                  // The summary model's answer.
                                  "SUMMARY: big.txt is filler; add() in lib/math.sh subtracts.",
                                  "[EDIT_FILE path=\"lib/math.sh\" start_line=\"2\" "
                                  "end_line=\"2\"]\n  echo $(($1 + $2))\n[/EDIT_FILE]\n"
                                  "[DONE]\nFixed add.\n[/DONE]\n",
                              },
                              kKey,
                              tls_,
                              0};
    options.tokens_per_char = 1.0;
    FakeChat chat(options);
    configure({{"agents",
                {{"cd", codali_agent(chat, {{"context_window", 12000},
                                            {"summary_model", "scripted-mini"}})}}},
               {"check", {{"verify", {"sh test.sh"}}}}});
    Shell run = dispatch("run 1", env());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto& r = only_run();
    EXPECT_EQ(json::parse(read_text(r.folder / "check.json"))["verdict"], "PASS");

    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 5u);
    // The fourth call is the summary: by the summary model, holding the turns it replaces.
    EXPECT_EQ(requests[3].model, "scripted-mini");
    EXPECT_NE(last_message(requests[3]).find("filler line 10\n"), std::string::npos);
    // The fifth goes on from the summary and the last two exchanges, without the file.
    const auto& fifth = requests[4];
    EXPECT_EQ(fifth.model, "scripted");
    ASSERT_EQ(fifth.messages.size(), 6u);
    const std::string task = fifth.messages[1]["content"];
    EXPECT_NE(task.find("## Summary of the session so far\n\nSUMMARY: big.txt is filler"),
              std::string::npos)
        << task;
    EXPECT_EQ(json(fifth.messages).dump().find("filler line 10"), std::string::npos);
    EXPECT_NE(fifth.messages[2]["content"].get<std::string>().find("request_id: r2"),
              std::string::npos);
    EXPECT_EQ(read_text(r.folder / "codali/summary-1.md"),
              "SUMMARY: big.txt is filler; add() in lib/math.sh subtracts.\n");
    const json session = json::parse(read_text(r.folder / "codali/session.json"));
    EXPECT_EQ(session["summaries"], 1);
    EXPECT_GT(session["tokensPerChar"].get<double>(), 0.9);
}

TEST_F(CodaliAgent, AMalformedRequestIsAnsweredSoTheModelCanCorrectIt) {
    FakeChat chat({{
                       "AGENT_REQUEST v1\nrole: manager\nrequest_id: bad-1\nneeds:\n"
                       "  - type: file.read\n    path: test.sh\n",
                       "Nothing I can parse here.",
                       "[EDIT_FILE path=\"lib/math.sh\" start_line=\"2\" end_line=\"2\"]\n"
                       "  echo $(($1 + $2))\n[/EDIT_FILE]\n[DONE]\nFixed.\n[/DONE]\n",
                   },
                   kKey,
                   tls_,
                   0});
    configure({{"agents", {{"cd", codali_agent(chat)}}}, {"check", {{"verify", {"sh test.sh"}}}}});
    Shell run = dispatch("run 1", env());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_EQ(last_message(requests[1]),
              "CODALI_RESPONSE v1\nrequest_id: bad-1\nresults: []\nmeta:\n  repo_root: .\n"
              "  warnings:\n  - 'malformed_request: AGENT_REQUEST: role: expected one of "
              "librarian, architect, builder, critic, interpreter'\n\n");
    EXPECT_NE(last_message(requests[2]).find("held no AGENT_REQUEST v1 and no command"),
              std::string::npos);
}

TEST_F(CodaliAgent, WithoutCtagsSearchStillWorksAndEveryResponseSaysWhatIsMissing) {
    FakeChat chat({{
                       "AGENT_REQUEST v1\nrole: builder\nrequest_id: r1\nneeds:\n"
                       "  - type: docdex.search\n    query: subtract\n"
                       "  - type: docdex.symbols\n    file: lib/math.sh\n",
                       "[EDIT_FILE path=\"lib/math.sh\" start_line=\"3\" end_line=\"3\"]\n"
                       "  echo $(($1 + $2))\n[/EDIT_FILE]\n[DONE]\nFixed.\n[/DONE]\n",
                   },
                   kKey,
                   tls_,
                   0});
    write_text(repo_ / "lib/math.sh", "# subtract? no: add\nadd() {\n  echo $(($1 - $2))\n}\n");
    sh_ok("git commit -qam 'a comment'", repo_);
    configure({{"agents", {{"cd", codali_agent(chat, {{"env", {"PATH"}}})}}},
               {"check", {{"verify", {"sh test.sh"}}}}});
    const fs::path bin = dir_.path() / "bin-without-ctags";
    fs::create_directories(bin);
    for (const char* tool : {"git", "bwrap", "sh", "timeout", "env", "cat", "test"})
        if (auto found = sh("command -v " + std::string(tool), repo_);
            found.exit_code == 0 && found.out[0] == '/')
            fs::create_symlink(found.out.substr(0, found.out.find('\n')), bin / tool);
    Shell run = dispatch("run 1", env() + "PATH=" + quote(bin.string()) + " ");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 2u);
    const std::string answer = last_message(requests[1]);
    EXPECT_NE(answer.find("    path: lib/math.sh\n"), std::string::npos) << answer;
    EXPECT_NE(answer.find("- type: docdex.symbols\n  file: lib/math.sh\n  symbols: []\n"),
              std::string::npos)
        << answer;
    EXPECT_NE(answer.find("  - 'ctags_unavailable: "), std::string::npos) << answer;
    EXPECT_EQ(json::parse(read_text(only_run().folder / "check.json"))["verdict"], "PASS");
}

TEST_F(CodaliAgent, DoctorNamesTheIndexAndWhatIsMissingForIt) {
    FakeChat chat({{}, kKey, tls_, 0});
    configure({{"agents", {{"cd", codali_agent(chat)}}}});
    Shell doctor = dispatch("doctor", env());
    EXPECT_NE(doctor.out.find("agent cd index"), std::string::npos) << doctor.out;
    EXPECT_NE(doctor.out.find("(search); Universal Ctags "), std::string::npos) << doctor.out;
    EXPECT_NE(doctor.out.find("built-in codali (Codali envelopes, critic in the loop), "
                              "openai-compatible model scripted at " +
                              chat.base_url()),
              std::string::npos)
        << doctor.out;
    // Without ctags on PATH, search still works and the doctor says what does not.
    const fs::path bin = dir_.path() / "bin-without-ctags";
    fs::create_directories(bin);
    for (const char* tool : {"git", "bwrap", "sh", "timeout"})
        if (auto found = sh("command -v " + std::string(tool), repo_); found.exit_code == 0)
            fs::create_symlink(found.out.substr(0, found.out.find('\n')), bin / tool);
    Shell bare = dispatch("doctor", env() + "PATH=" + quote(bin.string()) + " ");
    EXPECT_NE(bare.out.find("no Universal Ctags: docdex.symbols and docdex.impact answer with a "
                            "warning"),
              std::string::npos)
        << bare.out << bare.err;
}

}  // namespace
}  // namespace cocode::test
