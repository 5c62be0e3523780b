#include "git/repository.h"
#include "test_support.h"

namespace cocode::git {
namespace fs = std::filesystem;
using test::sh_ok;

std::string rev(const fs::path& repo, const std::string& what) {
    std::string out = sh_ok("git rev-parse " + what, repo);
    return out.substr(0, out.find('\n'));
}

TEST(Repository, OpensFromAnyFolderInsideAWorktree) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    fs::create_directories(dir / "repo/a/b");
    sh_ok("git worktree add -q -b side ../wt", dir / "repo");
    fs::create_directories(dir / "wt/deep/er");

    auto main = Repository::open(dir / "repo/a/b");
    ASSERT_TRUE(main) << main.error().message;
    EXPECT_EQ(main->work_dir(), dir / "repo");
    EXPECT_EQ(main->git_dir(), dir / "repo/.git");
    EXPECT_FALSE(main->is_linked_worktree());

    auto linked = Repository::open(dir / "wt/deep/er");
    ASSERT_TRUE(linked) << linked.error().message;
    EXPECT_TRUE(linked->is_linked_worktree());
    EXPECT_EQ(linked->git_dir(), dir / "repo/.git/worktrees/wt");
    EXPECT_EQ(linked->common_dir(), dir / "repo/.git");
    EXPECT_EQ(linked->work_dir(), dir / "wt");

    auto none = Repository::open(fs::path("/"));
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("not a git repository"), std::string::npos);
}

TEST(Repository, HeadAndTheCommitsSinceABase) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    std::string base = rev(dir / "repo", "HEAD");
    sh_ok(
        "git commit -q --allow-empty -m one && git commit -q --allow-empty -m 'two' -m 'cocode "
        "ready for check'",
        dir / "repo");
    auto repo = Repository::open(dir / "repo");
    ASSERT_TRUE(repo);
    auto head = repo->head();
    ASSERT_TRUE(head);
    EXPECT_EQ(head->id, rev(dir / "repo", "HEAD"));
    EXPECT_EQ(head->summary, "two");
    EXPECT_EQ(head->message, "two\n\ncocode ready for check\n");

    auto since = repo->commits_between(base, "HEAD");
    ASSERT_TRUE(since) << since.error().message;
    ASSERT_EQ(since->size(), 2u);
    EXPECT_EQ((*since)[0].summary, "two");
    EXPECT_EQ((*since)[1].summary, "one");
    auto empty = repo->commits_between("HEAD", "HEAD");
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->empty());
    EXPECT_FALSE(repo->commits_between("no-such-rev", "HEAD"));
}

TEST(Repository, CreatesListsRemovesAndPrunesWorktrees) {
    test::TempDir dir;
    test::make_repo(dir / "repo");
    std::string base = rev(dir / "repo", "HEAD");
    auto repo = Repository::open(dir / "repo");
    ASSERT_TRUE(repo);

    auto added = repo->add_worktree("7-claude", dir / "wts/7-claude", "cocode/7-claude", base);
    ASSERT_TRUE(added) << added.error().message;
    EXPECT_EQ(added->path, dir / "wts/7-claude");
    // The git CLI agrees: the branch is checked out there, at the base.
    EXPECT_EQ(rev(dir / "wts/7-claude", "--abbrev-ref HEAD"), "cocode/7-claude");
    EXPECT_EQ(rev(dir / "wts/7-claude", "HEAD"), base);
    EXPECT_TRUE(fs::exists(dir / "wts/7-claude/README.md"));

    // The same branch again is refused, and leaves nothing behind.
    auto again = repo->add_worktree("7-claude-b", dir / "wts/other", "cocode/7-claude", base);
    EXPECT_FALSE(again);
    EXPECT_FALSE(fs::exists(dir / "wts/other"));

    auto codex = repo->add_worktree("8-codex", dir / "wts/8-codex", "cocode/8-codex", base);
    ASSERT_TRUE(codex) << codex.error().message;
    auto list = repo->worktrees();
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 2u);

    // Uncommitted work is not thrown away without force.
    test::write_text(dir / "wts/7-claude/new.txt", "work");
    auto refused = repo->remove_worktree("7-claude", false, dir / "wts/7-claude");
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("uncommitted"), std::string::npos);
    // Its entry rewritten to name another folder (the worktree's to write): nothing removed.
    const fs::path elsewhere = dir / "elsewhere";
    fs::create_directories(elsewhere);
    test::write_text(elsewhere / "precious.txt", "mine");
    const fs::path entry = dir / "repo/.git/worktrees/7-claude/gitdir";
    test::write_text(entry, (elsewhere / ".git").string() + "\n");
    auto misled = repo->remove_worktree("7-claude", false, dir / "wts/7-claude");
    ASSERT_FALSE(misled);
    EXPECT_NE(misled.error().message.find("its entry names"), std::string::npos);
    ASSERT_TRUE(repo->remove_worktree("7-claude", true, dir / "wts/7-claude"));
    EXPECT_TRUE(fs::exists(elsewhere / "precious.txt")) << "what the entry named stays";
    EXPECT_FALSE(fs::exists(dir / "wts/7-claude")) << "what cocode made goes";
    EXPECT_FALSE(fs::exists(dir / "repo/.git/worktrees/7-claude"));

    // A worktree whose folder vanished is pruned; git's own list agrees.
    fs::remove_all(dir / "wts/8-codex");
    auto pruned = repo->prune_worktrees();
    ASSERT_TRUE(pruned) << pruned.error().message;
    EXPECT_EQ(*pruned, std::vector<std::string>{"8-codex"});
    std::string listed = sh_ok("git worktree list --porcelain", dir / "repo");
    EXPECT_EQ(listed.find("8-codex"), std::string::npos) << listed;
    EXPECT_EQ(listed.find("7-claude"), std::string::npos) << listed;
}

}  // namespace cocode::git
