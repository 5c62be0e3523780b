// The live comment with writers racing on one issue, as the action's runners do, against the
// loopback GitHub whose lists of comments lag behind writes (as GitHub's replicas can).
#include <gtest/gtest.h>

#include <barrier>
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

}  // namespace
}  // namespace cocode::test
