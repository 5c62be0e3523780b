// The replay set's decisions as tables (replay/task.h): which change may be a task, what its
// message says it closes or merged, how its verify commands' runs split, and git's log read.
#include <gtest/gtest.h>

#include "replay/run.h"
#include "replay/task.h"
#include "test_support.h"

namespace cocode::replay {
namespace {

git::FileChange change(const std::string& path, char status = 'M', int lines = 4,
                       bool binary = false) {
    git::FileChange f;
    f.path = path;
    f.status = status;
    f.insertions = lines;
    f.binary = binary;
    return f;
}

TEST(ReplayTask, WhichChangesMayBeTasks) {
    git::HistoryCommit one{"c", {"p"}, {}, "Fix the parser"};
    git::HistoryCommit merge{"m", {"p", "q"}, {}, "Merge branch 'side'"};
    git::HistoryCommit pull{"m", {"p", "q"}, {}, "Merge pull request #12 from o/fix\n\nFix"};
    git::HistoryCommit first{"f", {}, {}, "Initial"};
    const std::vector<git::FileChange> good = {change("src/parser.c"),
                                               change("tests/parser_test.c", 'A')};
    MineLimits limits;
    MineLimits only_lib = limits;
    only_lib.paths = {"lib/**"};
    struct Case {
        const char* name;
        git::HistoryCommit commit;
        std::vector<git::FileChange> files;
        MineLimits limits;
        std::string why;
    };
    for (const Case& c : std::vector<Case>{
             {"code and tests", one, good, limits, ""},
             {"a pull request's merge", pull, good, limits, ""},
             {"another merge", merge, good, limits, "a merge"},
             {"the first commit", first, good, limits, "the first commit: no base"},
             {"renames alone",
              one,
              {change("src/a.c", 'R', 0), change("tests/a_test.c", 'R', 0)},
              limits,
              "only renames"},
             {"binary alone", one, {change("logo.png", 'A', 0, true)}, limits, "only binary files"},
             {"too big",
              one,
              {change("src/a.c", 'M', 990), change("tests/a_test.c", 'M', 20)},
              limits,
              "1010 lines, over the limit of 1000"},
             {"no test", one, {change("src/a.c"), change("README.md")}, limits, "touches no test"},
             {"no code",
              one,
              {change("tests/a_test.c"), change("docs/a.md")},
              limits,
              "touches no code"},
             {"not the code asked for", one, good, only_lib, "touches no code of --paths"},
         }) {
        std::vector<std::string> tests;
        EXPECT_EQ(why_no_task(c.commit, c.files, c.limits, tests), c.why) << c.name;
        if (c.why.empty()) {
            EXPECT_EQ(tests, std::vector<std::string>{"tests/parser_test.c"}) << c.name;
        }
    }
}

TEST(ReplayTask, WhatAMessageSaysItClosesAndMerged) {
    EXPECT_EQ(closed_issue("Subtract\n\nFixes #3."), 3);
    EXPECT_EQ(closed_issue("closes: #12"), 12);
    EXPECT_EQ(closed_issue("Resolved #7 at last"), 7);
    EXPECT_EQ(closed_issue("Prefixes #3 are not a fix"), std::nullopt);
    EXPECT_EQ(closed_issue("See #3"), std::nullopt);
    EXPECT_EQ(merged_pull("Merge pull request #12 from o/fix"), 12);
    EXPECT_EQ(merged_pull("Fix the parser (#41)\n\n* a\n* b"), 41);
    EXPECT_EQ(merged_pull("Fix the parser\n\nsee (#41) in the body"), std::nullopt);
    const Statement s = statement_of_message("Fix the parser\n\nIt read 'a' as 'b'.\n\n");
    EXPECT_EQ(s.title, "Fix the parser");
    EXPECT_EQ(s.body, "It read 'a' as 'b'.");
    EXPECT_EQ(s.source, "commit message");
}

TEST(ReplayTask, VerifyRunsSplitIntoFailToPassPassToPassAndFlaky) {
    struct Case {
        const char* name;
        std::vector<CommandRuns> runs;
        std::vector<std::string> f2p, p2p, flaky;
        std::string why;
    };
    const std::vector<bool> pass(3, true), fail(3, false), flips = {true, false, true};
    for (const Case& c : std::vector<Case>{
             {"one fails then passes, one passes at both",
              {{"unit", fail, pass}, {"lint", pass, pass}},
              {"unit"},
              {"lint"},
              {},
              ""},
             {"a flaky command is left out",
              {{"unit", fail, pass}, {"e2e", flips, pass}},
              {"unit"},
              {},
              {"e2e"},
              ""},
             {"nothing fails at the base",
              {{"unit", pass, pass}},
              {},
              {"unit"},
              {},
              "its tests do not fail at its base"},
             {"the change fails its own tests",
              {{"unit", fail, pass}, {"lint", pass, fail}},
              {"unit"},
              {},
              {},
              "does not pass its own tests: lint fails at the change"},
             {"failing at the change every time, whatever the base did",
              {{"unit", flips, fail}},
              {},
              {},
              {},
              "does not pass its own tests: unit fails at the change"},
         }) {
        const TestSplit split = split_tests(c.runs);
        EXPECT_EQ(split.fail_to_pass, c.f2p) << c.name;
        EXPECT_EQ(split.pass_to_pass, c.p2p) << c.name;
        EXPECT_EQ(split.flaky, c.flaky) << c.name;
        EXPECT_EQ(split.why_not, c.why) << c.name;
    }
}

// What is run next, as the runs come in: everything while a command may go from failing to
// passing; once none can, only a command that failed at the change every time, there.
TEST(ReplayTask, RunsStopOnceTheAnswerIsKnown) {
    using V = std::vector<bool>;
    const V T = {true}, F = {false}, TT = {true, true}, FF = {false, false}, FFF(3, false);
    struct Case {
        const char* name;
        std::vector<CommandRuns> runs;
        V change, base;  // per command: run again there
    };
    for (const Case& c : std::vector<Case>{
             {"nothing run yet: everything",
              {{"a", {}, {}}, {"b", {}, {}}},
              {true, true},
              {true, true}},
             {"passed at the change, not yet run at the base", {{"a", {}, T}}, {true}, {true}},
             {"passes at both: no task, nothing more", {{"a", T, T}}, {false}, {false}},
             {"fails at the change: its change runs only", {{"a", {}, F}}, {true}, {false}},
             {"one may still be a task: the other runs at both too",
              {{"a", F, T}, {"b", T, T}},
              {true, true},
              {true, true}},
             {"failed at the change every time: done", {{"a", F, FFF}}, {false}, {false}},
             {"a task's runs all made", {{"a", FFF, V(3, true)}}, {false}, {false}},
             {"no task possible; the failing one goes on, the passing one stops",
              {{"a", TT, FF}, {"b", TT, TT}},
              {true, false},
              {false, false}},
         }) {
        const NextRuns next = runs_still_needed(c.runs, 3);
        EXPECT_EQ(next.at_change, c.change) << c.name;
        EXPECT_EQ(next.at_base, c.base) << c.name;
        EXPECT_EQ(next.any(), std::find(c.change.begin(), c.change.end(), true) != c.change.end() ||
                                  std::find(c.base.begin(), c.base.end(), true) != c.base.end())
            << c.name;
    }
}

TEST(ReplayTask, GitsLogIsReadWithEveryParent) {
    const std::string log = std::string("aaa\x1f") + "p1 p2\x1f" + "1700000000\x1f" +
                            "Merge\n\nbody\n\x1e\nbbb\x1f\x1f" + "1600000000\x1f" + "Root\x1e\n";
    const auto commits = git::parse_history(log);
    ASSERT_EQ(commits.size(), 2u);
    EXPECT_EQ(commits[0].parents, (std::vector<std::string>{"p1", "p2"}));
    EXPECT_EQ(commits[0].message, "Merge\n\nbody\n");
    EXPECT_TRUE(commits[1].parents.empty());
    EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(commits[1].time.time_since_epoch())
                  .count(),
              1600000000);
}

// What a replay hides: the main repository, and its git folder when it is elsewhere.
TEST(ReplayRun, WhatAReplayHidesAndHowItsRunsSayItEnded) {
    EXPECT_EQ(replay::hidden_from_replays("/src/app", "/src/app/.git"),
              (std::vector<std::string>{"/src/app"}));
    EXPECT_EQ(replay::hidden_from_replays("/src/app-wt", "/src/app/.git"),
              (std::vector<std::string>{"/src/app-wt", "/src/app/.git"}));
    // A missing dependency wins; else the first failure; else 0.
    EXPECT_EQ(replay::replay_exit_code({}), 0);
    EXPECT_EQ(replay::replay_exit_code({0, 0}), 0);
    EXPECT_EQ(replay::replay_exit_code({0, 1, 124}), 1);
    EXPECT_EQ(replay::replay_exit_code({124, 3, 1}), 3);
    EXPECT_EQ(replay::replay_exit_code({130, 0}), 130);
}

// The agent's program: an untracked script of the repository is copied in, as a file (no link
// followed); a tracked one is the task's; one outside the repository is left; a link refused.
TEST(ReplayRun, AnUntrackedScriptIsBroughtInAndNothingElseOfTheMainRepository) {
    test::TempDir dir;
    const auto main_root = dir.path() / "main", repo = dir.path() / "replay";
    std::filesystem::create_directories(main_root / ".cocode");
    std::filesystem::create_directories(repo / ".cocode");
    test::write_text(main_root / ".cocode/fix.sh", "#!/bin/sh\necho fixed\n");
    std::filesystem::permissions(main_root / ".cocode/fix.sh", std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add);
    const std::string fix = (main_root / ".cocode/fix.sh").string();
    ASSERT_TRUE(replay::bring_program(main_root, "mine", {fix, "--go"}, repo));
    EXPECT_EQ(test::read_text(repo / ".cocode/fix.sh"), "#!/bin/sh\necho fixed\n");
    EXPECT_NE(std::filesystem::status(repo / ".cocode/fix.sh").permissions() &
                  std::filesystem::perms::owner_exec,
              std::filesystem::perms::none);
    // Tracked (the task has it): left as the task has it.
    test::write_text(repo / ".cocode/fix.sh", "as the task had it\n");
    ASSERT_TRUE(replay::bring_program(main_root, "mine", {fix}, repo));
    EXPECT_EQ(test::read_text(repo / ".cocode/fix.sh"), "as the task had it\n");
    // Outside the repository, or a bare name on PATH: nothing to bring.
    EXPECT_TRUE(replay::bring_program(main_root, "cli", {"/usr/bin/env"}, repo));
    EXPECT_TRUE(replay::bring_program(main_root, "cli", {"claude"}, repo));
    // A link in the main repository is not followed: refused, a missing dependency.
    std::filesystem::create_symlink("/etc/passwd", main_root / ".cocode/link.sh");
    const auto linked =
        replay::bring_program(main_root, "mine", {(main_root / ".cocode/link.sh").string()}, repo);
    ASSERT_FALSE(linked);
    EXPECT_NE(linked.error().message.find("is not a regular file"), std::string::npos);
    EXPECT_FALSE(
        std::filesystem::exists(std::filesystem::symlink_status(repo / ".cocode/link.sh")));
    const auto missing =
        replay::bring_program(main_root, "mine", {(main_root / ".cocode/gone.sh").string()}, repo);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace cocode::replay
