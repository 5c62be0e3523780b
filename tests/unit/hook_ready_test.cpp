#include <nlohmann/json.hpp>

#include "core/flat_yaml.h"
#include "hook/ready.h"
#include "hook/run_locator.h"
#include "test_support.h"

namespace cocode::hook {
namespace fs = std::filesystem;

TEST(ReadyMarker, SeedExamplesInTheMessageCount) {
    // ../shared/seeds/cocode-agent-protocol.md, "Valid Examples": subject, body, with other text.
    EXPECT_TRUE(message_has_marker("cocode ready for check\n", kDefaultReadyMarker));
    EXPECT_TRUE(message_has_marker("Fix issue\n\ncocode ready for check\n", kDefaultReadyMarker));
    EXPECT_TRUE(
        message_has_marker("feat: add feature - cocode ready for check\n", kDefaultReadyMarker));
    // Case-sensitive, whole marker, never an empty one.
    EXPECT_FALSE(message_has_marker("Cocode Ready For Check\n", kDefaultReadyMarker));
    EXPECT_FALSE(message_has_marker("cocode ready for chec\n", kDefaultReadyMarker));
    EXPECT_FALSE(message_has_marker("anything", ""));
}

class RecordReady : public ::testing::Test {
  protected:
    void SetUp() override {
        folder = dir / "runs/r1";
        fs::create_directories(folder);
        FlatYaml info;
        info.set("run_id", "20261122-100405123-77-1");
        info.set("base_commit", "b000000000000000000000000000000000000000");
        test::write_text(folder / kRunInfoFile, info.render());
    }
    Result<ReadyResult> record(const std::string& commit, const std::string& message,
                               std::optional<std::string> env_marker = std::nullopt) {
        return record_ready(folder, commit, message, env_marker, std::chrono::system_clock::now());
    }
    test::TempDir dir;
    fs::path folder;
    const std::string c1 = "c100000000000000000000000000000000000000";
};

TEST_F(RecordReady, AppendsOneReadyEventAndRecordsTheCommit) {
    auto r = record(c1, "done\n\ncocode ready for check\n");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->outcome, ReadyOutcome::recorded);
    auto lines = test::read_lines(folder / kEventsFile);
    ASSERT_EQ(lines.size(), 1u);
    auto event = nlohmann::json::parse(lines[0]);
    EXPECT_EQ(event["type"], "READY");
    EXPECT_EQ(event["run_id"], "20261122-100405123-77-1");
    EXPECT_EQ(event["commit"], c1);
    EXPECT_TRUE(event["time"].get<std::string>().ends_with("Z"));
    auto info = FlatYaml::parse(test::read_text(folder / kRunInfoFile), "run-info");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->get("ready_commit"), c1);

    // The hook running twice for one commit records it once.
    auto again = record(c1, "done\n\ncocode ready for check\n");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->outcome, ReadyOutcome::already_recorded);
    EXPECT_EQ(test::read_lines(folder / kEventsFile).size(), 1u);
}

TEST_F(RecordReady, NoMarkerOrTheBaseCommitRecordsNothing) {
    auto plain = record(c1, "Add comment\n");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->outcome, ReadyOutcome::no_marker);
    auto base = record("b000000000000000000000000000000000000000", "cocode ready for check\n");
    ASSERT_TRUE(base);
    EXPECT_EQ(base->outcome, ReadyOutcome::base_commit);
    EXPECT_FALSE(fs::exists(folder / kEventsFile));
}

TEST_F(RecordReady, MarkerComesFromEnvironmentThenRunInfoThenDefault) {
    FlatYaml info = FlatYaml::parse(test::read_text(folder / kRunInfoFile), "x").value();
    info.set("ready_marker", "[agent done]");
    test::write_text(folder / kRunInfoFile, info.render());

    EXPECT_EQ(record(c1, "cocode ready for check")->outcome, ReadyOutcome::no_marker);
    auto from_env = record(c1, "ok [agent done]", std::string("SHIP IT"));
    EXPECT_EQ(from_env->outcome, ReadyOutcome::no_marker);
    EXPECT_EQ(from_env->marker, "SHIP IT");
    EXPECT_EQ(record(c1, "SHIP IT", std::string("SHIP IT"))->outcome, ReadyOutcome::recorded);
    auto configured = record("c200000000000000000000000000000000000000", "ok [agent done]");
    EXPECT_EQ(configured->outcome, ReadyOutcome::recorded);
    EXPECT_EQ(configured->marker, "[agent done]");
}

TEST_F(RecordReady, AlsoAppendsToTheMessageBusNamedInRunInfo) {
    FlatYaml info = FlatYaml::parse(test::read_text(folder / kRunInfoFile), "x").value();
    info.set("message_bus", (dir / "runs/events.jsonl").string());
    test::write_text(folder / kRunInfoFile, info.render());
    ASSERT_TRUE(record(c1, "cocode ready for check"));
    EXPECT_EQ(test::read_lines(dir / "runs/events.jsonl").size(), 1u);
    EXPECT_EQ(test::read_lines(folder / kEventsFile).size(), 1u);
}

TEST_F(RecordReady, BrokenRunInfoIsAnErrorThatNamesTheFileAndWritesNothing) {
    test::write_text(folder / kRunInfoFile, "run_id: x\n  : : broken\n");
    auto r = record(c1, "cocode ready for check");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("run-info.yaml:2"), std::string::npos) << r.error().message;
    EXPECT_FALSE(fs::exists(folder / kEventsFile));
}

TEST(RunLocator, EnvironmentFirstThenThePointerFile) {
    test::TempDir dir;
    fs::create_directories(dir / "run");
    fs::create_directories(dir / "gitdir");
    git::GitDirs dirs{dir / "gitdir", dir / "gitdir"};

    auto none = locate_run(nullptr, dirs);
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());

    ASSERT_TRUE(write_run_pointer(dirs.git_dir, dir / "run"));
    auto pointed = locate_run(nullptr, dirs);
    ASSERT_TRUE(pointed && pointed->has_value());
    EXPECT_EQ((*pointed)->run_folder, dir / "run");

    fs::create_directories(dir / "other");
    auto env = locate_run((dir / "other").c_str(), dirs);
    ASSERT_TRUE(env && env->has_value());
    EXPECT_EQ((*env)->run_folder, dir / "other");
}

TEST(RunLocator, CorruptPointersAndVanishedFoldersAreClearErrors) {
    test::TempDir dir;
    git::GitDirs dirs{dir.path(), dir.path()};
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "empty"},
        {"relative/path\n", "not absolute"},
        {std::string("/tmp/a\0b\n", 9), "NUL"},
        {"/a\n/b\n", "more than one line"},
        {(dir / "gone").string() + "\n", "is gone"},
    };
    for (const auto& [content, why] : cases) {
        test::write_text(dir / "cocode-run", content);
        auto r = locate_run(nullptr, dirs);
        ASSERT_FALSE(r) << content;
        EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find("cocode-run"), std::string::npos) << r.error().message;
    }
    auto relative_env = locate_run("runs/x", dirs);
    ASSERT_FALSE(relative_env);
    EXPECT_NE(relative_env.error().message.find("JRUN_RUN_FOLDER"), std::string::npos);
}

}  // namespace cocode::hook
