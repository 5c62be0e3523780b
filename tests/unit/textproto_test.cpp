// The CodingAgent text protocol: the inbox parser by the seed's seven rules, the escape for a
// body line equal to its own closing tag, the outbox's sections, sessions, the workspace
// listing's summary, and the executor against real files and real processes: the path
// sandbox, edits, a command that never ends, output caps, the environment commands get.
#include "protocol/textproto.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "proc/process_tree.h"
#include "protocol/executor.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using namespace cocode::protocol;

TEST(TextProto, ParsesEveryCommandInOrderAndIgnoresTheTextAround) {
    const auto commands = parse_inbox(R"(I will create the file first.
[CREATE_FILE path="src/a.py"]
def f():
    return 1
[/CREATE_FILE]
Then edit it:
  [EDIT_FILE path="src/a.py" start_line="2" end_line="2"]
    return 2
  [/EDIT_FILE]
[DELETE_FILE path="old.txt"]
[READ_FILE path='src/a.py']
[RUN_COMMAND]
python3 -c 'print(1)'
[/RUN_COMMAND]
[MESSAGE]
hello
[/MESSAGE]
[DONE]
Made f return 2.
[/DONE]
)");
    ASSERT_EQ(commands.size(), 7u);
    EXPECT_EQ(commands[0].kind, CommandKind::create_file);
    EXPECT_EQ(commands[0].path, "src/a.py");
    EXPECT_EQ(commands[0].body, "def f():\n    return 1\n");  // indentation kept
    EXPECT_EQ(commands[0].line, 2u);
    EXPECT_EQ(commands[1].kind, CommandKind::edit_file);
    EXPECT_EQ(commands[1].start_line, 2);
    EXPECT_EQ(commands[1].end_line, 2);
    EXPECT_EQ(commands[1].body, "    return 2\n");
    EXPECT_EQ(commands[2].kind, CommandKind::delete_file);
    EXPECT_EQ(commands[2].path, "old.txt");
    EXPECT_EQ(commands[3].kind, CommandKind::read_file);
    EXPECT_EQ(commands[3].path, "src/a.py");
    EXPECT_EQ(commands[4].kind, CommandKind::run_command);
    EXPECT_EQ(commands[4].body, "python3 -c 'print(1)'");
    EXPECT_EQ(commands[5].kind, CommandKind::message);
    EXPECT_EQ(commands[6].kind, CommandKind::done);
    EXPECT_EQ(commands[6].body, "Made f return 2.\n");
}

TEST(TextProto, ABodyLineEqualToItsClosingTagIsWrittenWithABackslash) {
    const auto commands = parse_inbox(
        "[CREATE_FILE path=\"docs/protocol.md\"]\n"
        "Close a block with:\n"
        "\\[/CREATE_FILE]\n"
        "  \\\\[/CREATE_FILE]\n"
        "\\[/EDIT_FILE]\n"
        "[/CREATE_FILE]\n");
    ASSERT_EQ(commands.size(), 1u);
    EXPECT_EQ(commands[0].kind, CommandKind::create_file);
    // One backslash goes; a closing tag of another command is not an escape.
    EXPECT_EQ(commands[0].body,
              "Close a block with:\n[/CREATE_FILE]\n  \\[/CREATE_FILE]\n\\[/EDIT_FILE]\n");
}

TEST(TextProto, MalformedBlocksAreResultsTheModelCanCorrect) {
    const auto commands = parse_inbox(R"([CREATE_FILE]
x
[/CREATE_FILE]
[EDIT_FILE path="a" start_line="two" end_line="3"]
y
[/EDIT_FILE]
[EDIT_FILE path="a" start_line="1"]
[/EDIT_FILE]
[RUN_COMMAND]
[/RUN_COMMAND]
[READ_FILE path="a"
[UNKNOWN_THING path="x"]
[CREATE_FILE path="never-closed.txt"]
text
)");
    ASSERT_EQ(commands.size(), 6u);
    for (const auto& c : commands) EXPECT_EQ(c.kind, CommandKind::error) << c.name;
    EXPECT_NE(commands[0].error.find("missing required attribute path"), std::string::npos);
    EXPECT_NE(commands[1].error.find("start_line must be a line number (got 'two')"),
              std::string::npos);
    EXPECT_NE(commands[2].error.find("end_line is missing"), std::string::npos);
    EXPECT_NE(commands[3].error.find("no command"), std::string::npos);
    EXPECT_NE(commands[4].error.find("has no closing ']'"), std::string::npos);
    EXPECT_EQ(commands[5].name, "CREATE_FILE");
    EXPECT_NE(commands[5].error.find("never closed: expected a line [/CREATE_FILE]"),
              std::string::npos);
    // As the next outbox shows them.
    Outcome outcome{false, "EDIT_FILE", "Parse error: " + commands[1].error, ""};
    EXPECT_EQ(
        format_outcome(outcome).rfind("[FAILED] EDIT_FILE: Parse error: EDIT_FILE on line 4", 0),
        0u);
}

TEST(TextProto, TheOutboxHasTheSeedsFourSectionsAndTheProtocolNeverChanges) {
    Session s;
    s.session_id = "a1b2c3d4";
    s.task = "Fix the parser.";
    const auto no_size = [](const std::string&) { return std::optional<std::uint64_t>(); };
    const std::string first = render_outbox(s, render_listing({}, 10, no_size), {});
    EXPECT_EQ(
        first.rfind("=== HEADER ===\nSession: a1b2c3d4\nSequence: 1\nTask: Fix the parser.\n", 0),
        0u);
    EXPECT_NE(first.find("=== PROTOCOL ===\n" + std::string(protocol_text())), std::string::npos);
    EXPECT_NE(first.find("=== CONTEXT ===\n## Workspace Files\n(empty workspace)\n"),
              std::string::npos);
    EXPECT_EQ(first.find("## Previous Command Results"), std::string::npos);
    EXPECT_NE(first.find("=== PROMPT ===\nFix the parser.\n"), std::string::npos);

    s.sequence_number = 2;
    s.last_results = {{true, "RUN_COMMAND", "Ran 'make' (exit code 0)", "built\nok"},
                      {false, "EDIT_FILE", "File 'x' not found", ""}};
    const std::string second =
        render_outbox(s,
                      render_listing({"src/a.cc", "gone.cc"}, 10,
                                     [](const std::string& p) {
                                         return p == "gone.cc" ? std::optional<std::uint64_t>()
                                                               : std::optional<std::uint64_t>(245);
                                     }),
                      {{"src/a.cc", "int a;\n", ""}});
    EXPECT_NE(second.find("  src/a.cc (245 bytes)\n"), std::string::npos);
    EXPECT_EQ(second.find("gone.cc"), std::string::npos);  // listed by git, deleted since
    EXPECT_NE(second.find("## Previous Command Results\n[OK] RUN_COMMAND: Ran 'make' (exit code "
                          "0)\n  Output: built\n  ok\n[FAILED] EDIT_FILE: File 'x' not found\n"),
              std::string::npos);
    EXPECT_NE(
        second.find("## Requested File Contents\n--- src/a.cc ---\nint a;\n--- end src/a.cc ---\n"),
        std::string::npos);
    EXPECT_NE(second.find("=== PROMPT ===\n" + std::string(kContinuationPrompt)),
              std::string::npos);
    EXPECT_NE(second.find("Task: Fix the parser."), std::string::npos);  // self-contained
    EXPECT_EQ(outbox_name("a1b2c3d4", 7), "a1b2c3d4_seq0007.txt");
}

TEST(TextProto, ABigWorkspaceIsSummarisedByFolder) {
    std::vector<std::string> files;
    for (int i = 0; i < 20000; ++i)
        files.push_back("pkg" + std::to_string(i % 50) + "/sub" + std::to_string(i % 7) + "/f" +
                        std::to_string(i) + ".c");
    files.push_back("README.md");
    std::size_t sized = 0;
    const std::string listing = render_listing(files, 400, [&](const std::string&) {
        ++sized;
        return std::optional<std::uint64_t>(5);
    });
    const auto lines = std::count(listing.begin(), listing.end(), '\n');
    EXPECT_LE(lines, 402);
    EXPECT_NE(listing.find("20001 files: more than 400 to list, so folders 2 deep"),
              std::string::npos);
    // 50 × 7 folders two deep fit in 400 lines, and they are what is shown.
    EXPECT_NE(listing.find("  pkg0/sub0/ (58 files)\n"), std::string::npos)
        << listing.substr(0, 500);
    EXPECT_NE(listing.find("  README.md (5 bytes)\n"), std::string::npos);
    EXPECT_EQ(listing.find(".c ("), std::string::npos);
    EXPECT_EQ(sized, 1u);  // only the file shown was looked at
}

TEST(TextProto, SessionsRoundTripInTheSeedsNames) {
    Session s;
    s.session_id = new_session_id();
    EXPECT_EQ(s.session_id.size(), 8u);
    s.task = "t";
    s.sequence_number = 3;
    s.last_results = {{true, "DONE", "Task marked complete", ""}};
    s.read_file_requests = {"src/a.cc"};
    s.processed_inbox = {"x.txt"};
    s.tokens_used = 42;
    const auto j = session_json(s);
    for (const char* key : {"sessionId", "task", "sequenceNumber", "isComplete", "createdAt",
                            "updatedAt", "lastResults", "readFileRequests"})
        EXPECT_TRUE(j.contains(key)) << key;
    auto back = parse_session(j.dump(), "s.json");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->sequence_number, 3);
    EXPECT_EQ(back->read_file_requests, s.read_file_requests);
    EXPECT_EQ(back->processed_inbox, s.processed_inbox);
    EXPECT_EQ(back->tokens_used, 42u);
    auto bad = parse_session(R"({"sessionId": "../x", "task": "", "sequenceNumber": 1,
                                 "isComplete": false})",
                             "s.json");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("s.json: not a session file"), std::string::npos);
}

class Workspace : public ::testing::Test {
  protected:
    void SetUp() override {
        root_ = fs::canonical(dir_.path()) / "work";
        fs::create_directories(root_);
        sh_ok("git init -q && mkdir -p src && printf 'one\\ntwo\\nthree\\n' > src/a.txt", root_);
    }
    Executor executor(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        ExecutorOptions options;
        options.root = root_;
        options.command_timeout = timeout;
        options.environment = {"PATH=" + std::string(std::getenv("PATH")), "VISIBLE=yes"};
        return Executor(options);
    }
    Outcome run(const std::string& inbox,
                std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
        auto commands = parse_inbox(inbox);
        EXPECT_EQ(commands.size(), 1u) << inbox;
        return executor(timeout).execute_one(commands.at(0));
    }
    TempDir dir_;
    fs::path root_;
};

TEST_F(Workspace, EveryEscapeFromTheWorktreeIsRejected) {
    fs::create_directories(dir_ / "outside");
    write_text(dir_ / "outside/secret", "s");
    fs::create_directory_symlink(dir_ / "outside", root_ / "link-out");
    fs::create_symlink(dir_ / "outside/secret", root_ / "file-link-out");
    fs::create_symlink(dir_ / "nowhere", root_ / "dangling");
    fs::create_directory_symlink("src", root_ / "link-in");
    for (const char* path : {"/etc/passwd", "../outside/secret", "src/../../outside/secret",
                             "link-out/secret", "link-out/new.txt", "file-link-out", "dangling",
                             ".git/hooks/post-commit", "src/../.git/config", "./.GIT/HEAD"}) {
        for (const std::string& command :
             {"[CREATE_FILE path=\"" + std::string(path) + "\"]\nx\n[/CREATE_FILE]\n",
              "[READ_FILE path=\"" + std::string(path) + "\"]\n",
              "[DELETE_FILE path=\"" + std::string(path) + "\"]\n",
              "[EDIT_FILE path=\"" + std::string(path) +
                  "\" start_line=\"1\" end_line=\"1\"]\nx\n[/EDIT_FILE]\n"}) {
            Outcome outcome = run(command);
            EXPECT_FALSE(outcome.success) << command;
            EXPECT_EQ(outcome.summary.rfind("REJECTED: ", 0), 0u) << command << outcome.summary;
        }
    }
    EXPECT_EQ(read_text(dir_ / "outside/secret"), "s");
    EXPECT_FALSE(fs::exists(dir_ / "outside/new.txt"));
    EXPECT_FALSE(fs::exists(root_ / ".git/hooks/post-commit"));
    // A link that stays inside, and `..` that stays inside, are fine.
    EXPECT_TRUE(run("[READ_FILE path=\"link-in/a.txt\"]\n").success);
    EXPECT_TRUE(run("[CREATE_FILE path=\"src/../b.txt\"]\nb\n[/CREATE_FILE]\n").success);
    EXPECT_EQ(read_text(root_ / "b.txt"), "b\n");
}

TEST_F(Workspace, EditsReplaceInsertAndDeleteLinesAndSayWhenTheRangeIsWrong) {
    EXPECT_TRUE(run("[EDIT_FILE path=\"src/a.txt\" start_line=\"2\" end_line=\"2\"]\n2a\n2b\n"
                    "[/EDIT_FILE]\n")
                    .success);
    EXPECT_EQ(read_text(root_ / "src/a.txt"), "one\n2a\n2b\nthree\n");
    EXPECT_TRUE(run("[EDIT_FILE path=\"src/a.txt\" start_line=\"1\" end_line=\"0\"]\nzero\n"
                    "[/EDIT_FILE]\n")
                    .success);  // an insertion before line 1
    EXPECT_TRUE(run("[EDIT_FILE path=\"src/a.txt\" start_line=\"5\" end_line=\"5\"]\n"
                    "[/EDIT_FILE]\n")
                    .success);  // an empty body deletes
    EXPECT_EQ(read_text(root_ / "src/a.txt"), "zero\none\n2a\n2b\n");
    Outcome bad =
        run("[EDIT_FILE path=\"src/a.txt\" start_line=\"3\" end_line=\"9\"]\nx\n[/EDIT_FILE]\n");
    EXPECT_FALSE(bad.success);
    EXPECT_EQ(bad.summary, "Invalid line range 3-9: 'src/a.txt' has 4 lines");
    Outcome missing = run("[DELETE_FILE path=\"nope.txt\"]\n");
    EXPECT_EQ(format_outcome(missing), "[FAILED] DELETE_FILE: File 'nope.txt' not found\n");
}

TEST_F(Workspace, ACommandThatNeverEndsIsKilledOnTimeWithEverythingItStarted) {
    // A background child that leaves the group (setsid) and one that stays, both forever.
    Outcome outcome = run(
        "[RUN_COMMAND]\necho started; setsid sleep 1000 & sleep 1000 & echo $! > pid; sleep 1000\n"
        "[/RUN_COMMAND]\n",
        std::chrono::milliseconds(500));
    EXPECT_FALSE(outcome.success);
    EXPECT_NE(outcome.summary.find("timed out after"), std::string::npos) << outcome.summary;
    EXPECT_NE(outcome.output.find("started"), std::string::npos);
    const pid_t child = std::stoi(read_text(root_ / "pid"));
    EXPECT_TRUE(wait_until([&] { return !is_alive(stamp_of(child)); }));
    // Nothing with the command's sleep is left: no process anywhere runs `sleep 1000` with
    // our command tag (their environments carry it).
    auto left = sh("grep -l COCODE_COMMAND_ID=" + std::to_string(::getpid()) +
                       "- /proc/[0-9]*/environ 2>/dev/null | wc -l",
                   root_);
    EXPECT_EQ(left.out, "0\n");
}

TEST_F(Workspace, CommandsGetTheirEnvironmentAndACappedOutputWithTheEnd) {
    Outcome env = run("[RUN_COMMAND]\necho \"[$VISIBLE][$HOME]\"; pwd\n[/RUN_COMMAND]\n");
    EXPECT_TRUE(env.success);
    EXPECT_EQ(env.output, "[yes][]\n" + root_.string() + "\n");
    Outcome big = run("[RUN_COMMAND]\nseq 1 100000; echo the-end; exit 3\n[/RUN_COMMAND]\n");
    EXPECT_FALSE(big.success);
    EXPECT_NE(big.summary.find("(exit code 3)"), std::string::npos);
    EXPECT_LE(big.output.size(), 4100u);
    EXPECT_EQ(big.output.rfind("1\n2\n3\n", 0), 0u);
    EXPECT_NE(big.output.find("bytes cut"), std::string::npos);
    EXPECT_NE(big.output.find("100000\nthe-end\n"), std::string::npos);
}

TEST_F(Workspace, TheListingIsGitsViewAndRequestedFilesAreCapped) {
    write_text(root_ / ".gitignore", "build/\n");
    fs::create_directories(root_ / "build");
    write_text(root_ / "build/out.o", "x");
    auto names = list_workspace(root_);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{".gitignore", "src/a.txt"}));

    write_text(root_ / "bin.dat", std::string("a\0b", 3));
    write_text(root_ / "big.txt", std::string(3000000, 'x'));
    auto shown = executor().read_requested({"src/a.txt", "bin.dat", "big.txt", "../x"});
    ASSERT_EQ(shown.size(), 4u);
    EXPECT_EQ(*shown[0].content, "one\ntwo\nthree\n");
    EXPECT_FALSE(shown[1].content);
    EXPECT_NE(shown[1].note.find("binary"), std::string::npos);
    EXPECT_EQ(shown[2].content->size(), std::size_t{1} << 20);
    EXPECT_NE(shown[2].note.find("cut at"), std::string::npos);
    EXPECT_EQ(shown[3].note.rfind("REJECTED:", 0), 0u);
}

}  // namespace
}  // namespace cocode::test
