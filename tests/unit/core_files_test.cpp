#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "test_support.h"

namespace cocode {
namespace fs = std::filesystem;
using test::TempDir;

TEST(AtomicWrite, ReplacesContentWithModeAndLeavesNoTemporaryFile) {
    TempDir dir;
    fs::path file = dir / "state.json";
    test::write_text(file, "old");
    ASSERT_TRUE(write_file_atomic(file, "new content", 0600));
    EXPECT_EQ(test::read_text(file), "new content");
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(AtomicWrite, AFailedReplaceNamesThePathAndLeavesNoTemporaryFile) {
    TempDir dir;
    fs::path target = dir / "run-info.yaml";
    fs::create_directory(target);  // rename onto a folder fails, even for root
    test::write_text(target / "keep", "x");
    auto r = write_file_atomic(target, "status: completed\n");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find(target.string()), std::string::npos) << r.error().message;
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
    EXPECT_EQ(test::read_text(target / "keep"), "x");
}

TEST(AppendLineLocked, ManyProcessesAppendWholeLines) {
    TempDir dir;
    fs::path file = dir / "events.jsonl";
    constexpr int kProcs = 16, kLines = 200;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcs; ++p) {
        pid_t pid = ::fork();
        if (pid == 0) {
            for (int i = 0; i < kLines; ++i) {
                nlohmann::json line{{"proc", p}, {"i", i}, {"pad", std::string(512, 'x')}};
                if (!append_line_locked(file, line.dump())) ::_exit(1);
            }
            ::_exit(0);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    auto lines = test::read_lines(file);
    ASSERT_EQ(lines.size(), static_cast<std::size_t>(kProcs * kLines));
    for (const auto& line : lines) EXPECT_TRUE(nlohmann::json::accept(line)) << line.substr(0, 80);
}

TEST(AppendLineLocked, RepairsATornLastLineBeforeAppending) {
    TempDir dir;
    fs::path file = dir / "events.jsonl";
    test::write_text(file, "{\"type\":\"RUN_START\"}\n{\"type\":\"RU");  // a writer died mid-line
    ASSERT_TRUE(append_line_locked(file, R"({"type":"READY"})"));
    auto lines = test::read_lines(file);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[2], R"({"type":"READY"})");
}

TEST(UpdateFileLocked, SeesMissingFileThenCurrentContent) {
    TempDir dir;
    fs::path file = dir / "counter";
    auto bump = [](const std::optional<std::string>& cur) -> Result<std::string> {
        return std::to_string(cur ? std::stoi(*cur) + 1 : 1);
    };
    std::vector<pid_t> children;
    for (int p = 0; p < 8; ++p) {
        pid_t pid = ::fork();
        if (pid == 0) {
            for (int i = 0; i < 25; ++i)
                if (!update_file_locked(file, bump)) ::_exit(1);
            ::_exit(0);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
    EXPECT_EQ(test::read_text(file), "200");  // no lost update
}

TEST(ReadFile, RefusesFilesOverTheLimitInsteadOfTruncating) {
    TempDir dir;
    test::write_text(dir / "big", std::string(2000, 'a'));
    auto r = read_file(dir / "big", 1000);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("larger than 1000"), std::string::npos);
}

TEST(ErrorCodes, MatchTheAgentProtocol) {
    EXPECT_EQ(static_cast<int>(ExitCode::general), 1);
    EXPECT_EQ(static_cast<int>(ExitCode::usage), 2);
    EXPECT_EQ(static_cast<int>(ExitCode::missing_dependency), 3);
    EXPECT_EQ(static_cast<int>(ExitCode::timeout), 124);
    EXPECT_EQ(static_cast<int>(ExitCode::interrupted), 130);
    EXPECT_EQ(exit_code_name(ExitCode::timeout), "timeout");
}

}  // namespace cocode
