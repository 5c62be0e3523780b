#include "git/git_files.h"

#include "git/line_history.h"
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

// The pre-push gate's walk: exact when it answers, silent (nullopt) when only git can answer.
TEST(GitFiles, LooseWalkFindsTheMarkerOnlyAmongCommitsTheRemoteLacks) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    sh_ok(
        "git init -q --bare ../origin.git && git remote add origin ../origin.git && "
        "git commit -q --allow-empty -m 'old work, cocode ready for check' && "
        "git push -q origin HEAD:main && git checkout -q -b plain && "
        "git commit -q --allow-empty -m one && git commit -q --allow-empty -m two",
        dir / "repo");
    const fs::path common = dir / "repo/.git";
    auto rev = [&](const std::string& what) {
        std::string id = sh_ok("git rev-parse " + what, dir / "repo");
        id.pop_back();
        return id;
    };
    const std::string marker = "cocode ready for check";

    auto tips = remote_tips(common, "origin");
    ASSERT_TRUE(tips);
    EXPECT_EQ(*tips, std::vector<std::string>{rev("origin/main")});
    EXPECT_EQ(remote_tips(common, "elsewhere"), std::vector<std::string>{});

    auto commit = read_loose_commit(common, rev("HEAD"));
    ASSERT_TRUE(commit && *commit);
    EXPECT_EQ((*commit)->parents, std::vector<std::string>{rev("HEAD~1")});
    EXPECT_EQ((*commit)->message, "two\n");

    // The marked commit is the remote's: a new branch or an update sends none.
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), *tips, marker), std::optional<bool>(false));
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), {rev("HEAD~1")}, marker),
              std::optional<bool>(false));
    // With nothing on the remote, it is sent.
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), {}, marker), std::optional<bool>(true));
    // Past the limit the walk does not guess.
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), {}, "no such words", 2), std::nullopt);

    sh_ok("git commit -q --allow-empty -m 'three: cocode ready for check'", dir / "repo");
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), *tips, marker), std::optional<bool>(true));

    // Grafted history, or objects in a pack: git's question.
    sh_ok("touch .git/shallow", dir / "repo");
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), *tips, "none"), std::nullopt);
    sh_ok("rm .git/shallow && git gc -q --prune=now", dir / "repo");
    EXPECT_EQ(loose_walk_finds(common, rev("HEAD"), *tips, "none"), std::nullopt);
    auto packed_tips = remote_tips(common, "origin");  // now from packed-refs
    ASSERT_TRUE(packed_tips);
    EXPECT_EQ(*packed_tips, std::vector<std::string>{rev("origin/main")});
}

// Which commit of a round changed a thread's line, the line followed as earlier commits move
// it: hunks of `git log -U0` as a table.
TEST(LineHistory, TheFirstCommitWhoseHunkCoversTheLineFollowingItDown) {
    const std::string a = "commit " + std::string(40, 'a') + "\n";
    const std::string b = "commit " + std::string(40, 'b') + "\n";
    struct Case {
        std::string log;
        int line;
        std::optional<std::string> changed_by;
    };
    const std::optional<std::string> by_a = std::string(40, 'a'), by_b = std::string(40, 'b');
    const std::vector<Case> cases = {
        {"", 5, std::nullopt},
        {a + "@@ -5 +5 @@\n-x\n+y\n", 5, by_a},                    // the line itself
        {a + "@@ -3,4 +3,1 @@\n", 5, by_a},                        // inside a removed block
        {a + "@@ -1,2 +1,2 @@\n", 5, std::nullopt},                // above it, same length
        {a + "@@ -9 +9 @@\n", 5, std::nullopt},                    // below it
        {a + "@@ -5,0 +6,2 @@\n", 5, std::nullopt},                // lines added after it
        {a + "@@ -4,0 +5,2 @@\n" + b + "@@ -7 +7 @@\n", 5, by_b},  // moved down by 2, then changed
        {a + "@@ -1,3 +0,0 @@\n" + b + "@@ -2 +2 @@\n", 5, by_b},  // moved up by 3, then changed
        {a + "@@ -1,3 +0,0 @@\n" + b + "@@ -5 +5 @@\n", 5, std::nullopt},  // moved; b is elsewhere
        {a + "@@ -1,10 +0,0 @@\n", 5, by_a},                               // the file deleted
    };
    for (const auto& c : cases)
        EXPECT_EQ(first_change_of_line(c.log, c.line), c.changed_by) << c.log;
}

}  // namespace cocode::git
