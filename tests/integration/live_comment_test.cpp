// The live comment with writers racing on one issue, as the action's runners do, against the
// loopback GitHub whose lists of comments lag behind writes (as GitHub's replicas can).
#include <gtest/gtest.h>

#include <barrier>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "check/progress.h"
#include "github_fixture.h"
#include "issues/github_source.h"

namespace cocode::test {
namespace {

using check::ProgressRow;
using nlohmann::json;

ProgressRow row(const std::string& agent, const std::string& state, long seconds) {
    ProgressRow r;
    r.agent = agent;
    r.state = state;
    r.seconds = seconds;
    return r;
}

class LiveCommentRace : public GitHubTest {
  protected:
    const std::string marker = github::comment_marker(check::progress_key(1));

    std::vector<json> marked() const {
        std::vector<json> out;
        for (const auto& c : server.comments_of(1))
            if (c["body"].get<std::string>().find(marker) != std::string::npos) out.push_back(c);
        return out;
    }
    std::vector<ProgressRow> rows_now() const {
        const auto comments = marked();
        return comments.empty() ? std::vector<ProgressRow>{}
                                : check::rows_in(comments.front()["body"].get<std::string>());
    }
    static std::string state_of(const std::vector<ProgressRow>& rows, const std::string& agent) {
        for (const auto& r : rows)
            if (r.agent == agent) return r.state;
        return "";
    }
};

// Three writers, one agent each, start together (none sees another's comment in a list yet),
// move on together and finish together. One comment is left, and it holds every writer's final
// row: a writer reads the comment by its id, not through the lagging list, keeps every row it
// has seen at its furthest, and at its end reads again until its own rows are there.
TEST_F(LiveCommentRace, ThreeWritersRacingLeaveOneCommentWithEveryFinalRow) {
    server.add_issue(1, "raced", "", {"cocode"});
    server.lag_comment_lists(3);
    const std::vector<std::string> agents = {"claude", "codex", "gemini"};
    const std::vector<std::string> finals = {"PASS", "FAIL", "PASS"};
    check::ProgressPace pace;
    pace.interval = pace.min_gap = std::chrono::milliseconds(0);
    pace.ledger.clear();  // as many edits as the race asks for
    std::barrier together(static_cast<std::ptrdiff_t>(agents.size()));
    std::vector<std::string> failures(agents.size());
    std::vector<std::string> told;
    std::mutex told_mutex;
    std::vector<std::thread> writers;
    for (std::size_t i = 0; i < agents.size(); ++i)
        writers.emplace_back([&, i] {
            auto source = issues::github_source(client(), repo());
            check::LiveComment live(*source, 1, pace, [&](const std::string& text) {
                std::lock_guard<std::mutex> lock(told_mutex);
                told.push_back(text);
            });
            together.arrive_and_wait();
            live.set({row(agents[i], "running", 1)}, true);
            // Each writer, handing in its row at every tick as the supervisor does, waits to
            // see it in the comment (a writer that lost a race puts it back at its next edit);
            // then all move on.
            long tick = 1;
            EXPECT_TRUE(wait_until([&] {
                live.set({row(agents[i], "running", ++tick)}, false);
                return state_of(rows_now(), agents[i]) == "running";
            })) << agents[i];
            together.arrive_and_wait();
            live.set({row(agents[i], "READY", 2)}, true);
            together.arrive_and_wait();
            auto done = live.finish({row(agents[i], finals[i], 3)});
            if (!done) failures[i] = done.error().message;
        });
    for (auto& w : writers) w.join();
    for (std::size_t i = 0; i < agents.size(); ++i) EXPECT_EQ(failures[i], "") << agents[i];
    EXPECT_TRUE(told.empty()) << told.front();

    ASSERT_EQ(marked().size(), 1u) << "duplicates made in the race are removed";
    const auto rows = rows_now();
    ASSERT_EQ(rows.size(), agents.size());
    for (std::size_t i = 0; i < agents.size(); ++i)
        EXPECT_EQ(state_of(rows, agents[i]), finals[i]) << agents[i] << "'s final row was lost";
    EXPECT_NE(marked().front()["body"].get<std::string>().find("· done"), std::string::npos);

    // After the first look, the comment is read by its id: lists of the issue's comments stay
    // few (the first edit of each writer, and the looks of the one call that makes it).
    int lists = 0, reads = 0;
    for (const auto& r : server.requests()) {
        lists += r.method == "GET" && r.path.find("/issues/1/comments") != std::string::npos;
        reads += r.method == "GET" && r.path.find("/issues/comments/") != std::string::npos;
    }
    EXPECT_GE(reads, 3 * 2) << "each writer reads the comment by id at its edits";
    EXPECT_LE(lists, 3 * 12) << "lists: " << lists;
}

// A writer keeps every other row at the furthest state it has seen: a writer that read the
// comment before another's verdict landed does not take the verdict back at its next edit
// once it has seen it, even when the comment shows an older state again.
TEST_F(LiveCommentRace, AWriterNeverTakesBackAVerdictItHasSeen) {
    server.add_issue(1, "raced", "", {"cocode"});
    check::ProgressPace pace;
    pace.interval = pace.min_gap = std::chrono::milliseconds(0);
    pace.ledger.clear();
    auto source = issues::github_source(client(), repo());
    {
        check::LiveComment other(*source, 1, pace, [](const std::string&) {});
        ASSERT_TRUE(other.finish({row("codex", "PASS", 9)}).ok());
    }
    check::LiveComment live(*source, 1, pace, [](const std::string&) {});
    live.set({row("claude", "running", 1)}, true);
    ASSERT_TRUE(wait_until([&] { return state_of(rows_now(), "claude") == "running"; }));
    // A late writer, which read the comment before codex's verdict, writes its old copy.
    const auto comment = marked().front();
    std::string stale =
        marker + "\n" +
        check::render_progress(1, {row("claude", "running", 1), row("codex", "running", 5)});
    auto http = client();
    github::GitHub api(*http, repo());
    ASSERT_TRUE(api.update_comment(comment["id"].get<long long>(), stale).ok());
    ASSERT_TRUE(live.finish({row("claude", "FAIL", 4)}).ok());
    const auto rows = rows_now();
    EXPECT_EQ(state_of(rows, "codex"), "PASS");
    EXPECT_EQ(state_of(rows, "claude"), "FAIL");
}

// Two writers of one comment, each with news at every tick: the comment is edited at most every
// `interval` whoever writes (a writer that finds it edited sooner leaves its change to its next
// look), a final row excepted; no two edits of one writer are closer than `min_gap`, its last
// one too; and every row ends in the comment.
TEST_F(LiveCommentRace, TheCommentKeepsItsPaceWhateverTheNumberOfWriters) {
    server.add_issue(1, "paced", "", {"cocode"});
    check::ProgressPace pace;
    pace.interval = std::chrono::milliseconds(1'200);
    pace.min_gap = std::chrono::milliseconds(300);
    pace.ledger.clear();
    const std::vector<std::string> agents = {"claude", "codex"};
    std::vector<std::thread> writers;
    for (std::size_t i = 0; i < agents.size(); ++i)
        writers.emplace_back([&, i] {
            auto source = issues::github_source(client(), repo());
            check::LiveComment live(*source, 1, pace, [](const std::string&) {});
            live.set({row(agents[i], "running", 0)}, true);
            // News at every tick, until this writer has seen its row edited in three times.
            long tick = 0;
            long shown = -1;
            int seen = 0;
            ASSERT_TRUE(wait_until([&] {
                live.set({row(agents[i], "running", ++tick)}, true);
                for (const auto& r : rows_now())
                    if (r.agent == agents[i] && r.seconds != shown) {
                        shown = r.seconds;
                        ++seen;
                    }
                return seen >= 3;
            })) << agents[i];
            ASSERT_TRUE(live.finish({row(agents[i], "PASS", tick + 1)}).ok());
        });
    for (auto& w : writers) w.join();

    const auto rows = rows_now();
    EXPECT_EQ(state_of(rows, "claude"), "PASS");
    EXPECT_EQ(state_of(rows, "codex"), "PASS");
    // Writes of the comment (the first is its making; a duplicate made in the same race is
    // removed), in the order GitHub took them, with the rows each carried: edits that set a
    // row to PASS are final and not held.
    std::vector<std::pair<std::chrono::steady_clock::time_point, bool>> writes;
    std::vector<std::string> bodies;
    for (const auto& r : server.requests()) {
        const bool made =
            r.method == "POST" && r.path.find("/issues/1/comments") != std::string::npos;
        if (!(r.method == "PATCH" && r.path.find("/issues/comments/") != std::string::npos) &&
            !(made && writes.empty()))
            continue;
        const auto body = json::parse(r.body)["body"].get<std::string>();
        writes.emplace_back(r.at, body.find("\"PASS\"") != std::string::npos);
        bodies.push_back(r.method + " " + body.substr(body.rfind("cocode:progress")));
    }
    ASSERT_GE(writes.size(), 4u);
    std::string all;
    for (std::size_t k = 0; k < writes.size(); ++k)
        all += std::to_string((writes[k].first - writes[0].first) / std::chrono::milliseconds(1)) +
               " ms: " + bodies[k] + "\n";
    // GitHub has no compare-and-swap: two writers that read the comment at the same moment
    // both write. Each waits its own slightly different time after the last edit it saw, so
    // that happens seldom; the comment's edits, not counting final rows, stay at about one an
    // interval (unpaced, each writer would edit every 300 ms: 6 a second between them).
    int paced = 0;
    for (std::size_t k = 1; k < writes.size(); ++k) paced += !writes[k].second;
    const auto span = writes.back().first - writes.front().first;
    EXPECT_LE(paced, 2 + span / pace.interval) << all;
    EXPECT_GE(paced, 2) << "the writers kept on editing while they ran";
}

// Every writer of the machine's user draws from one ledger: once `per_minute` is spent, a
// change that is not final waits; a final row is counted and never held.
TEST(ContentLedger, HoldsWritesPastTheCeilingButNeverAFinalRow) {
    const auto ledger = std::filesystem::path(std::getenv("XDG_STATE_HOME")) / "ledger-test";
    const std::int64_t t0 = 1'800'000'000'000;
    for (int k = 0; k < 3; ++k) {
        auto taken = check::take_content_write(ledger, t0 + k, 3, 10, false);
        ASSERT_TRUE(taken.ok()) << taken.error().message;
        EXPECT_TRUE(*taken) << k;
    }
    EXPECT_FALSE(*check::take_content_write(ledger, t0 + 10, 3, 10, false)) << "a fourth a minute";
    EXPECT_TRUE(*check::take_content_write(ledger, t0 + 11, 3, 10, true)) << "a final row";
    // A minute on, the minute's writes are spent no longer; the hour's are (5 of 5 kept).
    EXPECT_TRUE(*check::take_content_write(ledger, t0 + 61'000, 3, 5, false));
    EXPECT_FALSE(*check::take_content_write(ledger, t0 + 62'000, 3, 5, false)) << "the hour's";
    EXPECT_TRUE(*check::take_content_write(ledger, t0 + 3'700'000, 3, 5, false)) << "an hour on";
}

}  // namespace
}  // namespace cocode::test
