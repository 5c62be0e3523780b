// The live comment (check/progress.h): when it may be edited, how rows from several writers
// merge, and that the rows it shows are the rows it keeps as data.
#include "check/progress.h"

#include <gtest/gtest.h>

namespace cocode::check {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Progress, EditsArePacedBelowGitHubsLimitsForContent) {
    const ProgressPace pace;  // 10 s, at least 3 s apart, every 2 min after 10 min
    struct Case {
        milliseconds since_start;
        std::optional<milliseconds> since_last;
        bool changed;
        bool due;
    };
    const Case cases[] = {
        {seconds(0), std::nullopt, false, true},  // the first edit: at once
        {seconds(5), seconds(2), true, false},    // a change, but 2 s after the last
        {seconds(5), seconds(3), true, true},     // a change, 3 s after
        {seconds(30), seconds(9), false, false},  // no change: every 10 s
        {seconds(30), seconds(10), false, true},
        {seconds(900), seconds(60), false, false},  // past 10 min: every 2 min
        {seconds(900), seconds(120), false, true},
        {seconds(900), seconds(4), true, false},  // a change: 10 s apart by now
        {seconds(900), seconds(10), true, true},
    };
    for (const auto& c : cases)
        EXPECT_EQ(progress_due(pace, c.since_start, c.since_last, c.changed), c.due)
            << c.since_start.count() << " ms in, " << (c.since_last ? c.since_last->count() : -1)
            << " ms after the last, changed " << c.changed;
    // An hour of a race with a change of state every 5 s, as the writer's clock sees it.
    int edits = 0;
    std::optional<milliseconds> last;
    for (milliseconds t{0}; t < seconds(3600); t += milliseconds(500)) {
        const bool changed = t.count() % 5000 == 0;
        if (progress_due(pace, t, last ? std::optional(t - *last) : std::nullopt, changed)) {
            ++edits;
            last = t;
        }
    }
    EXPECT_LE(edits, 500) << "GitHub allows 500 content edits an hour";
    EXPECT_GE(edits, 300) << "yet the comment keeps up";
}

ProgressRow row(const std::string& agent, const std::string& state) {
    ProgressRow r;
    r.agent = agent;
    r.state = state;
    return r;
}

TEST(Progress, EachWriterPutsItsOwnRowsInAndKeepsWhatItDoesNotKnow) {
    auto theirs = std::vector<ProgressRow>{row("codex", "running"), row("claude", "READY")};
    theirs[1].pr_url = "https://github.example/o/r/pull/7";
    auto all = merged(theirs, {row("claude", "PASS"), row("gemini", "queued")});
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].agent, "claude");  // in agent order
    EXPECT_EQ(all[0].state, "PASS");
    EXPECT_EQ(all[0].pr_url, "https://github.example/o/r/pull/7") << "kept: not this writer's";
    EXPECT_EQ(all[1].agent, "codex");
    EXPECT_EQ(all[1].state, "running");
    EXPECT_EQ(all[2].agent, "gemini");
    EXPECT_FALSE(all_settled(all));
    EXPECT_TRUE(all_settled({row("a", "PASS"), row("b", "FAIL"), row("c", "failed")}));
}

TEST(Progress, RowsOnlyMoveForward) {
    struct Case {
        std::string seen, there, kept;  // another writer's row: what this writer saw, what the
                                        // comment shows now, what this writer writes
    };
    const Case cases[] = {
        {"running", "PASS", "PASS"},      // the comment moved on: taken
        {"PASS", "running", "PASS"},      // a stale copy over a verdict: not taken back
        {"READY", "queued", "READY"},     //
        {"judging", "FAIL", "FAIL"},      //
        {"failed", "judging", "failed"},  // a run that ended unjudged stays ended
        {"PASS", "", "PASS"},             // a row another writer dropped is put back
        {"", "running", "running"},       // a row never seen is taken as it is
    };
    for (const auto& c : cases) {
        std::vector<ProgressRow> seen, there;
        if (!c.seen.empty()) seen.push_back(row("codex", c.seen));
        if (!c.there.empty()) there.push_back(row("codex", c.there));
        const auto kept = furthest(there, seen);
        ASSERT_EQ(kept.size(), 1u);
        EXPECT_EQ(kept[0].state, c.kept) << "seen " << c.seen << ", there " << c.there;
    }
    // Same state: the later time wins, then the comment's.
    ProgressRow early = row("codex", "running"), late = row("codex", "running");
    early.seconds = 10;
    late.seconds = 40;
    EXPECT_EQ(furthest({early}, {late})[0].seconds, 40);
    EXPECT_EQ(furthest({late}, {early})[0].seconds, 40);
}

TEST(Progress, TheCommentKeepsTheRowsItShowsAsData) {
    ProgressRow a = row("claude", "PASS");
    a.seconds = 362;
    a.commits = 2;
    a.tokens = 421'000;
    a.cost_usd = 1.84;
    a.pr_url = "https://github.example/o/r/pull/7";
    ProgressRow b = row("co|dex <b>", "running");  // text a table must not take as markup
    b.seconds = 12;
    const std::string body = render_progress(12, {a, b});
    EXPECT_NE(body.find("### cocode · 2 agents on #12 · running"), std::string::npos) << body;
    EXPECT_NE(body.find("| `claude` | ✅ PASS | 6m 2s | 2 | 421k | $1.84 |  |"), std::string::npos)
        << body;
    // The name as it is, in a code span whose `|` a table does not split on.
    EXPECT_NE(body.find("| `co\\|dex <b>` | ⏳ running | 12s | 0 | – | – |  |"), std::string::npos)
        << body;
    EXPECT_EQ(rows_in(body), (std::vector<ProgressRow>{a, b}));

    const std::string done = render_progress(12, {a, row("codex", "FAIL")});
    EXPECT_NE(done.find("· done"), std::string::npos);
    EXPECT_NE(done.find("Pull requests: `claude`: "
                        "[https://github.example/o/r/pull/7](https://github.example/o/r/pull/7)."),
              std::string::npos)
        << done;
    EXPECT_TRUE(rows_in("a comment of someone else's").empty());
}

// Why these agents (routing by evidence) is said under the title and kept as data, so that a
// writer that was not told keeps it.
TEST(Progress, TheRoutingNoteIsSaidAndKept) {
    ProgressRow row;
    row.agent = "claude";
    row.state = "running";
    const std::string note = "raced claude and codex: 71% ±9 and 66% ±11 on fix";
    const std::string body = render_progress(7, {row}, {}, 0, note);
    EXPECT_NE(body.find("Chosen by evidence: raced claude and codex"), std::string::npos) << body;
    EXPECT_EQ(note_in(body), note);
    EXPECT_EQ(note_in(render_progress(7, {row})), "");
}

}  // namespace
}  // namespace cocode::check
