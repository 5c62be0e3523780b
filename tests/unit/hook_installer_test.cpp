#include <sys/stat.h>

#include "hook/hook_files.h"
#include "hook/installer.h"
#include "test_support.h"

namespace cocode::hook {
namespace fs = std::filesystem;
using test::sh_ok;

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st.st_mode;
}

class Installer : public ::testing::Test {
  protected:
    void SetUp() override { test::make_repo(repo); }
    HooksLocation where() { return locate_hooks(repo).value(); }
    InstallOptions options() { return {test::hook_shim(), test::hook_tool(), false}; }
    test::TempDir dir;
    fs::path repo = dir / "repo";
};

TEST_F(Installer, FindsTheHooksFolderGitUses) {
    EXPECT_EQ(where().hooks_dir, repo / ".git/hooks");
    sh_ok("git worktree add -q -b w ../wt", repo);
    EXPECT_EQ(locate_hooks(dir / "wt")->hooks_dir, repo / ".git/hooks");  // shared by worktrees
    EXPECT_TRUE(where().shared_by_worktrees);  // no hooksPath: one folder for all
    sh_ok("git config core.hooksPath .husky/_", repo);
    auto husky = locate_hooks(dir / "wt").value();  // relative to the worktree git runs it in
    EXPECT_EQ(husky.hooks_dir, dir / "wt/.husky/_");
    EXPECT_EQ(husky.hooks_path_config, ".husky/_");
    EXPECT_FALSE(where().shared_by_worktrees);  // relative: one per worktree
    sh_ok("git config core.hooksPath " + (dir / "hooks").string(), repo);
    EXPECT_TRUE(where().shared_by_worktrees);
    sh_ok("git config extensions.worktreeConfig true", repo);
    EXPECT_FALSE(where().shared_by_worktrees);  // config.worktree may set its own
    auto not_repo = locate_hooks(dir.path());
    ASSERT_FALSE(not_repo);
    EXPECT_EQ(not_repo.error().code, ExitCode::usage);
}

TEST_F(Installer, FreshInstallThenTwiceChangesNothing) {
    auto first = install_hook(where(), "post-commit", options());
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(first->outcome, InstallOutcome::installed);
    EXPECT_FALSE(first->chained);
    fs::path hook = repo / ".git/hooks/post-commit";
    EXPECT_EQ(test::read_text(hook), test::read_text(test::hook_shim()));
    EXPECT_EQ(mode_of(hook) & 0777, 0755u);
    EXPECT_EQ(test::read_text(repo / ".git/hooks" / hook_files::kToolFile),
              test::hook_tool().string() + "\n");

    auto before = fs::last_write_time(hook);
    auto second = install_hook(where(), "post-commit", options());
    ASSERT_TRUE(second);
    EXPECT_EQ(second->outcome, InstallOutcome::unchanged);
    EXPECT_EQ(fs::last_write_time(hook), before);
    EXPECT_EQ(hooks_status(where(), test::hook_shim()).hooks[0].state, HookState::installed);
}

TEST_F(Installer, ChainsTheExistingHookAndUninstallRestoresItByteForByte) {
    fs::path hook = repo / ".git/hooks/post-commit";
    const std::string original = "#!/bin/sh\n# user's hook\necho user\n";
    test::write_text(hook, original);
    ::chmod(hook.c_str(), 0750);

    auto r = install_hook(where(), "post-commit", options());
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->chained);
    EXPECT_EQ(test::read_text(*r->chained), original);
    auto status = hooks_status(where(), test::hook_shim());
    EXPECT_EQ(status.hooks[0].state, HookState::installed);
    EXPECT_EQ(status.hooks[0].chained, repo / ".git/hooks/post-commit.cocode-chained");
    EXPECT_TRUE(status.tool_exists);

    auto u = uninstall_hook(where(), "post-commit");
    ASSERT_TRUE(u);
    EXPECT_EQ(*u, UninstallOutcome::restored);
    EXPECT_EQ(test::read_text(hook), original);
    EXPECT_EQ(mode_of(hook) & 07777, 0750u);
    EXPECT_FALSE(fs::exists(repo / ".git/hooks/post-commit.cocode-chained"));
    EXPECT_FALSE(fs::exists(repo / ".git/hooks" / hook_files::kToolFile));
}

TEST_F(Installer, ASymlinkedHookIsKeptAsASymlink) {
    fs::path hook = repo / ".git/hooks/post-commit";
    fs::create_symlink("../../scripts/hook.sh", hook);
    ASSERT_TRUE(install_hook(where(), "post-commit", options()));
    ASSERT_TRUE(uninstall_hook(where(), "post-commit"));
    ASSERT_TRUE(fs::is_symlink(hook));
    EXPECT_EQ(fs::read_symlink(hook), "../../scripts/hook.sh");
}

TEST_F(Installer, AHookRewrittenOverOursIsChainedAgainOnlyWhenItIsTheSame) {
    fs::path hook = repo / ".git/hooks/post-commit";
    test::write_text(hook, "#!/bin/sh\necho managed\n");
    ::chmod(hook.c_str(), 0755);
    ASSERT_TRUE(install_hook(where(), "post-commit", options()));
    // A hook manager regenerates its file over ours, identical to what we chained.
    fs::remove(hook);
    test::write_text(hook, "#!/bin/sh\necho managed\n");
    ::chmod(hook.c_str(), 0755);
    EXPECT_EQ(hooks_status(where(), test::hook_shim()).hooks[0].state, HookState::foreign);
    auto again = install_hook(where(), "post-commit", options());
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->outcome, InstallOutcome::installed);

    // Now a different one: we refuse rather than pick which to lose.
    fs::remove(hook);
    test::write_text(hook, "#!/bin/sh\necho different\n");
    auto refused = install_hook(where(), "post-commit", options());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("differ"), std::string::npos);
    // And uninstall says where the chained copy is instead of deleting anything.
    auto u = uninstall_hook(where(), "post-commit");
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message.find("post-commit.cocode-chained"), std::string::npos);
    EXPECT_EQ(test::read_text(hook), "#!/bin/sh\necho different\n");
}

TEST_F(Installer, RefusesAHooksFolderGitWouldCommit) {
    sh_ok("mkdir -p .githooks && git config core.hooksPath .githooks", repo);
    auto r = install_hook(where(), "post-commit", options());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::usage);
    EXPECT_NE(r.error().message.find("--allow-tracked"), std::string::npos);
    EXPECT_FALSE(fs::exists(repo / ".githooks/post-commit"));
    // Ignored, as husky does for .husky/_: fine.
    test::write_text(repo / ".githooks/.gitignore", "*\n");
    EXPECT_TRUE(install_hook(where(), "post-commit", options()));
}

TEST_F(Installer, RejectsUnknownHooksAndAMissingShim) {
    auto bad = install_hook(where(), "pre-rebase", options());
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ExitCode::usage);
    auto missing = install_hook(where(), "post-commit", {dir / "nope", test::hook_tool(), false});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ExitCode::missing_dependency);
    EXPECT_FALSE(fs::exists(repo / ".git/hooks/post-commit"));
}

}  // namespace cocode::hook
