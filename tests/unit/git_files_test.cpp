#include "git/git_files.h"

#include "test_support.h"

namespace cocode::git {
namespace fs = std::filesystem;
using test::sh_ok;

TEST(GitFiles, LocatesMainAndLinkedWorktreeFolders) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    sh_ok("git worktree add -q -b feature ../wt", dir / "repo");

    auto main_dirs = locate_git_dirs(dir / "repo", nullptr);
    ASSERT_TRUE(main_dirs);
    EXPECT_EQ(fs::canonical(main_dirs->git_dir), dir / "repo/.git");
    EXPECT_EQ(fs::canonical(main_dirs->common_dir), dir / "repo/.git");

    auto wt = locate_git_dirs(dir / "wt", nullptr);
    ASSERT_TRUE(wt);
    EXPECT_EQ(fs::canonical(wt->git_dir), dir / "repo/.git/worktrees/wt");
    EXPECT_EQ(fs::canonical(wt->common_dir), dir / "repo/.git");

    auto from_env = locate_git_dirs(dir / "elsewhere", (dir / "repo/.git/worktrees/wt").c_str());
    ASSERT_TRUE(from_env);
    EXPECT_EQ(fs::canonical(from_env->common_dir), dir / "repo/.git");

    EXPECT_FALSE(locate_git_dirs(dir.path(), nullptr));
}

TEST(GitFiles, ReadsHeadThroughLooseAndPackedRefsAndTheLooseMessage) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    sh_ok("git commit -q --allow-empty -m 'subject line' -m 'body with cocode ready for check'",
          dir / "repo");
    std::string expected = sh_ok("git rev-parse HEAD", dir / "repo");
    expected.pop_back();

    auto dirs = locate_git_dirs(dir / "repo", nullptr);
    ASSERT_TRUE(dirs);
    auto id = read_head_id(*dirs);
    ASSERT_TRUE(id) << id.error().message;
    EXPECT_EQ(*id, expected);
    auto message = read_loose_commit_message(dirs->common_dir, *id);
    ASSERT_TRUE(message) << message.error().message;
    ASSERT_TRUE(message->has_value());
    EXPECT_EQ(**message, "subject line\n\nbody with cocode ready for check\n");

    sh_ok("git pack-refs --all && git gc -q --prune=now", dir / "repo");
    ASSERT_FALSE(fs::exists(dir / "repo/.git/refs/heads/main"));
    auto packed = read_head_id(*dirs);
    ASSERT_TRUE(packed) << packed.error().message;
    EXPECT_EQ(*packed, expected);
    // Packed objects are the git CLI's job: reported as "not loose", not as an error.
    auto gone = read_loose_commit_message(dirs->common_dir, *packed);
    ASSERT_TRUE(gone);
    EXPECT_FALSE(gone->has_value());
}

TEST(GitFiles, ReadsADetachedHeadInALinkedWorktree) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    sh_ok(
        "git worktree add -q --detach ../wt && cd ../wt && git commit -q --allow-empty -m detached",
        dir / "repo");
    std::string expected = sh_ok("git rev-parse HEAD", dir / "wt");
    expected.pop_back();
    auto dirs = locate_git_dirs(dir / "wt", nullptr);
    ASSERT_TRUE(dirs);
    auto id = read_head_id(*dirs);
    ASSERT_TRUE(id) << id.error().message;
    EXPECT_EQ(*id, expected);
}

TEST(GitFiles, CommitMessageSkipsMultiLineHeaders) {
    std::string raw =
        "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
        "author a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n"
        "\nthe message\n\nbody\n";
    EXPECT_EQ(commit_message_of(raw), "the message\n\nbody\n");
}

}  // namespace cocode::git
