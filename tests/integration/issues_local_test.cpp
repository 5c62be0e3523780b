// The local issue store: GitHub's shapes on disk, one comment per marker, under a lock.
#include <gtest/gtest.h>

#include <thread>

#include "github/types.h"
#include "issues/local_source.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;

class LocalStore : public ::testing::Test {
  protected:
    void SetUp() override {
        fs::create_directories(dir / "issues");
        write_text(dir / "issues/12.json",
                   R"({"number": 12, "title": "Fix it", "labels": [{"name": "bug"}]})");
        source = issues::open_local_source(dir / "issues").value_or_throw();
    }
    TempDir dir;
    std::unique_ptr<issues::IssueSource> source;
};

TEST_F(LocalStore, UpsertKeepsOneCommentPerMarkerInGitHubsShape) {
    const std::string marker = github::comment_marker("issue-12/claude");
    auto first = source->upsert_comment(12, marker, "verdict: FAIL");
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto second = source->upsert_comment(12, marker, "verdict: PASS");
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(first->id, second->id);
    ASSERT_TRUE(source->upsert_comment(12, github::comment_marker("issue-12/codex"), "x").ok());

    auto on_disk = nlohmann::json::parse(read_text(dir / "issues/12.comments.json"));
    ASSERT_EQ(on_disk.size(), 2u);
    EXPECT_EQ(on_disk[0]["body"], marker + "\nverdict: PASS");
    EXPECT_TRUE(on_disk[0]["user"]["login"].is_string());
    EXPECT_TRUE(on_disk[0]["created_at"].is_string());
    auto comments = source->comments(12);
    ASSERT_TRUE(comments.ok());
    EXPECT_EQ(comments->size(), 2u);
}

TEST_F(LocalStore, ConcurrentUpsertsLoseNothing) {
    std::vector<std::thread> writers;
    for (int i = 0; i < 8; ++i) {
        writers.emplace_back([this, i] {
            auto own = issues::open_local_source(dir / "issues").value_or_throw();
            for (int round = 0; round < 5; ++round) {
                auto done =
                    own->upsert_comment(12, github::comment_marker("agent-" + std::to_string(i)),
                                        "round " + std::to_string(round));
                ASSERT_TRUE(done.ok()) << done.error().message;
            }
        });
    }
    for (auto& w : writers) w.join();
    auto comments = source->comments(12).value_or_throw();
    ASSERT_EQ(comments.size(), 8u);
    for (const auto& c : comments) EXPECT_NE(c.body.find("round 4"), std::string::npos);
}

TEST_F(LocalStore, AMalformedCommentsFileIsAnErrorAndStaysAsItWas) {
    write_text(dir / "issues/12.comments.json", R"({"not": "an array"})");
    auto done = source->upsert_comment(12, github::comment_marker("k"), "body");
    ASSERT_FALSE(done.ok());
    EXPECT_EQ(done.error().code, ExitCode::usage);
    EXPECT_NE(done.error().message.find("12.comments.json: expected an array of comments"),
              std::string::npos);
    EXPECT_EQ(read_text(dir / "issues/12.comments.json"), R"({"not": "an array"})");
}

TEST_F(LocalStore, LabelsAreAddedAndRemovedInPlace) {
    auto labels = source->add_labels(12, {"cocode:running", "bug"});
    ASSERT_TRUE(labels.ok()) << labels.error().message;
    EXPECT_EQ(labels.value(), (std::vector<std::string>{"bug", "cocode:running"}));
    ASSERT_TRUE(source->remove_label(12, "bug").ok());
    auto issue = source->get(12).value_or_throw();
    EXPECT_EQ(issue.labels, (std::vector<std::string>{"cocode:running"}));
    EXPECT_FALSE(source->upsert_comment(99, "<!-- m -->", "x").ok());
    EXPECT_FALSE(fs::exists(dir / "issues/99.comments.json"));
}

}  // namespace
}  // namespace cocode::test
