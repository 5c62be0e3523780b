// The check's pure rules: path globs as .gitignore reads them, where a run's issue lives, and
// the order in which candidates are ranked.
#include <gtest/gtest.h>

#include <sstream>

#include "check/actions.h"
#include "check/report.h"
#include "check/run_check.h"
#include "core/glob.h"
#include "test_support.h"

namespace cocode::check {
namespace {

TEST(Glob, MatchesAsGitignoreDoes) {
    struct Case {
        const char* glob;
        const char* path;
        bool match;
    };
    for (const Case& c : std::vector<Case>{
             {"src/", "src/a/b.c", true},            // a folder covers what is in it
             {"src", "src/a.c", true},               // so does its bare name
             {"src", "lib/src/a.c", true},           // at any depth, without a '/'
             {"/src", "lib/src/a.c", false},         // unless anchored
             {"*.lock", "deep/down/x.lock", true},   //
             {"*.lock", "x.locks", false},           //
             {"src/*.c", "src/a.c", true},           //
             {"src/*.c", "src/sub/a.c", false},      // '*' stays in its segment
             {"src/**/*.c", "src/a.c", true},        // '**/' may be no folder at all
             {"src/**/*.c", "src/x/y/a.c", true},    //
             {"**/test_*.py", "a/test_x.py", true},  //
             {"a/**/b", "a/x/y/b", true},            //
             {"a/**/b", "a/xb", false},              // whole segments only
             {"?.md", "a.md", true},                 //
             {"?.md", "ab.md", false},               //
             {"[a-c].txt", "b.txt", true},           //
             {"[!a-c].txt", "b.txt", false},         //
             {".github/**", ".github/workflows/ci.yml", true},
             {".github/**", "github/x", false},
             {"src/a\\*.c", "src/a*.c", true},  // an escaped '*' is a '*'
             {"src/a\\*.c", "src/ab.c", false},
             {"[ab", "x/[ab", true},  // no ']': a literal '['
             {"*/*", "a/b/c", true},  // its parent folder a/b matches
         })
        EXPECT_EQ(glob_match(c.glob, c.path), c.match) << c.glob << " ~ " << c.path;
}

// Found by fuzzing: a backtracking matcher took exponential time on globs with many stars
// (`*[!?-c]*?*…`, `*a*a*a…`); a scope check on a deep path never ended. Matching is linear in
// the glob times the path now; this finishes at once or hits the test's timeout.
TEST(Glob, ManyStarsDoNotTakeExponentialTime) {
    std::string glob, path(4000, 'a');
    for (int i = 0; i < 60; ++i) glob += "*a";
    glob += "*b";
    EXPECT_FALSE(glob_match(glob, path));
    EXPECT_TRUE(glob_match(glob.substr(0, glob.size() - 1), path));
    std::string deep;
    for (int i = 0; i < 500; ++i) deep += "d/";
    EXPECT_FALSE(glob_match("**/**/**/**/**/x*y*z*w", deep + "xyzv"));
}

TEST(SourceOf, ReadsWhereARunsIssueLives) {
    auto local = source_of("file:///srv/project/.cocode/issues/7.json");
    EXPECT_EQ(local.issues_dir, std::filesystem::path("/srv/project/.cocode/issues"));
    EXPECT_FALSE(local.repo);

    auto dotcom = source_of("https://github.com/octo-org/demo/issues/7");
    EXPECT_EQ(dotcom.repo, "octo-org/demo");
    EXPECT_FALSE(dotcom.api_url);  // the default API

    auto enterprise = source_of("https://ghe.example/team/app/issues/3");
    EXPECT_EQ(enterprise.repo, "team/app");
    EXPECT_EQ(enterprise.api_url, "https://ghe.example/api/v3");

    auto nothing = source_of("");
    EXPECT_FALSE(nothing.repo || nothing.issues_dir);
}

Verdict candidate(std::string agent, bool pass, int outside, int lines, double seconds) {
    Verdict v;
    v.agent = std::move(agent);
    v.pass = pass;
    v.insertions = lines;
    v.run_seconds = seconds;
    CheckItem scope;
    scope.id = "scope";
    scope.files.assign(static_cast<std::size_t>(outside), "x");
    v.checks.push_back(scope);
    return v;
}

TEST(Rank, PassThenScopeThenDiffThenTime) {
    auto ranked = rank({candidate("fail-small", false, 0, 1, 1), candidate("slow", true, 0, 10, 90),
                        candidate("outside", true, 1, 1, 1), candidate("big", true, 0, 50, 1),
                        candidate("fast", true, 0, 10, 30)});
    std::vector<std::string> order;
    for (const auto& v : ranked) order.push_back(v.agent);
    EXPECT_EQ(order, (std::vector<std::string>{"fast", "slow", "big", "outside", "fail-small"}));
}

// A multi-line step output is delimited by a random word that the value does not contain: a
// value that holds a known delimiter (an issue title, say) cannot end it early and set other
// outputs.
TEST(ActionsOutputs, AMultiLineValueCannotForgeAnotherOutput) {
    test::TempDir dir;
    const std::string file = (dir / "out").string();
    ::setenv("GITHUB_OUTPUT", file.c_str(), 1);
    const std::string value = "line\nEOF\nverdict=PASS\nghadelimiter_\nend";
    ASSERT_TRUE(append_actions_output("report", value).ok());
    ASSERT_TRUE(append_actions_output("report", value).ok());
    ASSERT_TRUE(append_actions_output("verdict", "FAIL").ok());
    ::unsetenv("GITHUB_OUTPUT");
    const std::string text = test::read_text(file);
    // Parsed as the runner parses it: NAME<<DELIM, lines, DELIM.
    std::istringstream in(text);
    std::string line;
    std::vector<std::pair<std::string, std::string>> outputs;
    std::vector<std::string> delimiters;
    while (std::getline(in, line)) {
        const auto heredoc = line.find("<<");
        if (heredoc != std::string::npos) {
            const std::string delimiter = line.substr(heredoc + 2);
            delimiters.push_back(delimiter);
            std::string collected, next;
            while (std::getline(in, next) && next != delimiter)
                collected += (collected.empty() ? "" : "\n") + next;
            outputs.emplace_back(line.substr(0, heredoc), collected);
        } else {
            outputs.emplace_back(line.substr(0, line.find('=')), line.substr(line.find('=') + 1));
        }
    }
    ASSERT_EQ(outputs.size(), 3u) << text;
    EXPECT_EQ(outputs[0], std::make_pair(std::string("report"), value));
    EXPECT_EQ(outputs[1], std::make_pair(std::string("report"), value));
    EXPECT_EQ(outputs[2], std::make_pair(std::string("verdict"), std::string("FAIL")));
    ASSERT_EQ(delimiters.size(), 2u);
    EXPECT_NE(delimiters[0], delimiters[1]);
    EXPECT_GE(delimiters[0].size(), 40u);
}

// A verdict travels in its comment as data: nothing in it can end the HTML comment early, and
// it reads back as the same verdict; the oldest comment of an agent is the one read.
TEST(VerdictRecord, RoundTripsThroughAnHtmlCommentWhateverItHolds) {
    Verdict v;
    v.pass = false;
    v.issue = 4;
    v.agent = "claude";
    v.insertions = 3;
    v.run_seconds = 12.5;
    v.files.push_back({});
    v.files[0].path = "a--b-->c.txt";
    CheckItem item;
    item.id = "verify";
    item.name = "tests";
    item.outcome = Outcome::fail;
    item.reason = "expected --> got <!-- x --> and ---";
    v.checks.push_back(item);
    const std::string record = verdict_record(v);
    ASSERT_EQ(record.rfind("<!-- cocode:verdict ", 0), 0u);
    // The only "--" left is the comment's own end.
    EXPECT_EQ(record.find("--", 4), record.size() - 3) << record;
    github::Comment mine, forged;
    mine.body = "<!-- cocode:check/issue-4/claude -->\n### FAIL\n" + record + "\n";
    v.pass = true;
    forged.body = "<!-- cocode:check/issue-4/claude -->\n" + verdict_record(v);
    auto read = verdicts_from_comments({mine, forged}, 4);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_FALSE(read[0].pass);
    EXPECT_EQ(read[0].agent, "claude");
    EXPECT_EQ(read[0].files.at(0).path, "a--b-->c.txt");
    EXPECT_EQ(read[0].checks.at(0).reason, "expected --> got <!-- x --> and ---");
    EXPECT_EQ(read[0].run_seconds, 12.5);
    // Another issue's, or another agent's record under this marker, is not read.
    EXPECT_TRUE(verdicts_from_comments({mine}, 5).empty());
    github::Comment misfiled;
    misfiled.body = "<!-- cocode:check/issue-4/codex -->\n" + record;
    EXPECT_TRUE(verdicts_from_comments({misfiled}, 4).empty());
}

}  // namespace
}  // namespace cocode::check
