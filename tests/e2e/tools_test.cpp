// The tools as a user runs them: exit codes, one-line errors, status output.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace cocode::test {
namespace fs = std::filesystem;

std::string tool(const std::string& name) { return quote(tool_path(name).string()); }

TEST(Tools, AnswerVersionAndHelp) {
    TempDir dir;
    for (const std::string name : {"cocode-hook", "cocode-dispatch", "cocode-check"}) {
        Shell version = sh(tool(name) + " --version", dir.path());
        EXPECT_EQ(version.exit_code, 0) << name;
        EXPECT_EQ(version.out.rfind(name + " " COCODE_VERSION, 0), 0u) << version.out;
        Shell help = sh(tool(name) + " --help", dir.path());
        EXPECT_EQ(help.exit_code, 0) << name;
        EXPECT_NE(help.out.find("Usage"), std::string::npos) << help.out;
    }
    EXPECT_NE(sh(tool("cocode-dispatch") + " --version", dir.path()).out.find("libgit2 1."),
              std::string::npos);
}

TEST(Tools, BadArgumentsExitTwoWithOneLine) {
    TempDir dir;
    Shell unknown = sh(tool("cocode-hook") + " install --bogus", dir.path());
    EXPECT_EQ(unknown.exit_code, 2);
    Shell bad_hook = sh(tool("cocode-hook") + " install --hook pre-rebase", dir.path());
    EXPECT_EQ(bad_hook.exit_code, 2);  // not a repository
    make_repo(dir / "repo");
    Shell bad_name = sh(tool("cocode-hook") + " install --hook pre-rebase", dir / "repo");
    EXPECT_EQ(bad_name.exit_code, 2);
    EXPECT_EQ(bad_name.err,
              "cocode-hook: error: --hook pre-rebase: expected post-commit or pre-push\n");
    Shell not_repo =
        sh(tool("cocode-hook") + " status --repo " + quote(dir.path().string()), dir.path());
    EXPECT_EQ(not_repo.exit_code, 2);
    EXPECT_EQ(std::count(not_repo.err.begin(), not_repo.err.end(), '\n'), 1) << not_repo.err;
    EXPECT_EQ(not_repo.err.rfind("cocode-hook: error: ", 0), 0u) << not_repo.err;
}

TEST(Tools, HookInstallStatusUninstallRoundTrip) {
    TempDir dir;
    make_repo(dir / "repo");
    const fs::path user_hook = dir / "repo/.git/hooks/post-commit";
    write_text(user_hook, "#!/bin/sh\nexit 0\n");
    fs::permissions(user_hook, fs::perms::owner_all);
    std::string installed =
        sh_ok(tool("cocode-hook") + " install --hook post-commit", dir / "repo");
    EXPECT_EQ(installed, "post-commit: installed in " + (dir / "repo/.git/hooks").string() +
                             " (chains post-commit.cocode-chained)\n");

    auto status =
        nlohmann::json::parse(sh_ok(tool("cocode-hook") + " status --json", dir / "repo"));
    EXPECT_EQ(status["hooks_dir"], (dir / "repo/.git/hooks").string());
    EXPECT_TRUE(status["core_hooks_path"].is_null());
    EXPECT_EQ(status["tool"], tool_path("cocode-hook").string());
    EXPECT_EQ(status["tool_exists"], true);
    EXPECT_EQ(status["hooks"][0]["name"], "post-commit");
    EXPECT_EQ(status["hooks"][0]["state"], "installed");
    EXPECT_EQ(status["hooks"][0]["chained"],
              (dir / "repo/.git/hooks/post-commit.cocode-chained").string());

    std::string again = sh_ok(tool("cocode-hook") + " install", dir / "repo");
    EXPECT_NE(again.find("already installed"), std::string::npos) << again;
    std::string human = sh_ok(tool("cocode-hook") + " status", dir / "repo");
    EXPECT_NE(human.find("post-commit   installed; chains post-commit.cocode-chained"),
              std::string::npos)
        << human;

    sh_ok(tool("cocode-hook") + " uninstall", dir / "repo");
    EXPECT_EQ(read_text(user_hook), "#!/bin/sh\nexit 0\n");
    auto after = nlohmann::json::parse(sh_ok(tool("cocode-hook") + " status --json", dir / "repo"));
    EXPECT_EQ(after["hooks"][0]["state"], "foreign");
    EXPECT_TRUE(after["tool"].is_null());
}

TEST(Tools, PostCommitOutsideARunIsSilent) {
    TempDir dir;
    make_repo(dir / "repo");
    Shell r = sh(tool("cocode-hook") + " post-commit", dir / "repo");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out + r.err, "");
}

}  // namespace cocode::test
