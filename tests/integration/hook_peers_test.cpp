// cocode-hook beside the hook managers people already use: husky (core.hooksPath), lefthook
// and pre-commit, each installed for real. Both hooks run; uninstall restores theirs exactly.
#include <sys/stat.h>

#include <map>

#include "hook_fixture.h"

namespace cocode::test {
namespace fs = std::filesystem;

// Every file of a hooks folder: bytes, mode, symlink target.
std::map<std::string, std::string> snapshot(const fs::path& hooks) {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::directory_iterator(hooks)) {
        struct stat st {};
        ::lstat(entry.path().c_str(), &st);
        std::string value = std::to_string(st.st_mode) + ":";
        value +=
            entry.is_symlink() ? fs::read_symlink(entry.path()).string() : read_text(entry.path());
        files[entry.path().filename().string()] = value;
    }
    return files;
}

class HookPeers : public HookRepo {
  protected:
    std::string peer(const std::string& tool) {
        return quote((fs::path(COCODE_PEERS_DIR) / "node_modules/.bin" / tool).string());
    }
    std::string uninstall() {
        return sh_ok(quote(hook_tool().string()) + " uninstall --repo " + quote(repo.string()),
                     repo);
    }
    // With the peer's hook in .git/hooks: install ours, commit in a run and outside one (the
    // peer's hook appends to peer.log each time), uninstall, and find .git/hooks as it was.
    void expect_both_run_then_exact_uninstall(const std::string& peer_name,
                                              const std::string& env) {
        auto before = snapshot(repo / ".git/hooks");
        install();
        RunWorktree run = add_run(peer_name);
        sh_ok(env + "git commit -q --allow-empty -m 'cocode ready for check'", run.worktree);
        EXPECT_EQ(events(run).size(), 1u);
        sh_ok(env + "git commit -q --allow-empty -m 'user commit'", repo);
        EXPECT_EQ(read_lines(repo / ".git/peer.log").size(), 2u)
            << peer_name << " must run in both";
        uninstall();
        EXPECT_EQ(snapshot(repo / ".git/hooks"), before);
    }
};

TEST_F(HookPeers, Husky) {
    sh_ok(peer("husky"), repo);
    ASSERT_EQ(sh_ok("git config core.hooksPath", repo), ".husky/_\n");
    write_text(repo / ".husky/post-commit",
               "echo husky-user-hook >> \"$(git rev-parse --git-common-dir)/peer.log\"\n");
    auto before = snapshot(repo / ".husky/_");

    std::string out = install();
    EXPECT_NE(out.find(".husky/_"), std::string::npos) << out;
    EXPECT_NE(out.find("chains post-commit.cocode-chained"), std::string::npos) << out;
    // Nothing of ours shows up for git: husky's folder ignores everything in it.
    EXPECT_EQ(sh_ok("git status --porcelain -uall", repo), "?? .husky/post-commit\n");

    sh_ok("git commit -q --allow-empty -m 'user commit'", repo);
    EXPECT_EQ(read_lines(repo / ".git/peer.log").size(), 1u) << "husky's user hook must still run";

    // In a linked worktree, husky's relative hooksPath names the worktree's own folder: cocode
    // installs there too (with an ignore file), and the run is recorded.
    RunWorktree run = add_run("husky");
    sh_ok(quote(hook_tool().string()) + " install --repo " + quote(run.worktree.string()),
          run.worktree);
    EXPECT_EQ(sh_ok("git status --porcelain -uall", run.worktree), "");
    sh_ok("git commit -q --allow-empty -m 'cocode ready for check'", run.worktree);
    EXPECT_EQ(events(run).size(), 1u);
    sh_ok(quote(hook_tool().string()) + " uninstall --repo " + quote(run.worktree.string()),
          run.worktree);
    EXPECT_FALSE(fs::exists(run.worktree / ".husky/_"));

    uninstall();
    EXPECT_EQ(snapshot(repo / ".husky/_"), before);
    sh_ok("git commit -q --allow-empty -m 'after uninstall'", repo);
    EXPECT_EQ(read_lines(repo / ".git/peer.log").size(), 2u);
}

TEST_F(HookPeers, Lefthook) {
    write_text(repo / "lefthook.yml",
               "post-commit:\n  commands:\n    note:\n      run: echo lefthook >> \"$(git "
               "rev-parse --git-common-dir)/peer.log\"\n");
    sh_ok("git add lefthook.yml && git commit -q -m 'lefthook config' && " + peer("lefthook") +
              " install",
          repo);
    ASSERT_TRUE(fs::exists(repo / ".git/hooks/post-commit"));
    // lefthook's hook looks for its binary on PATH or in the project's node_modules.
    expect_both_run_then_exact_uninstall("lefthook", "LEFTHOOK_BIN=" + peer("lefthook") + " ");
}

TEST_F(HookPeers, PreCommit) {
    write_text(
        repo / ".pre-commit-config.yaml",
        "repos:\n- repo: local\n  hooks:\n  - id: note\n    name: note\n    language: system\n"
        "    entry: sh -c 'echo pre-commit >> \"$(git rev-parse --git-common-dir)/peer.log\"'\n"
        "    always_run: true\n    pass_filenames: false\n    stages: [post-commit]\n");
    const std::string env = "PRE_COMMIT_HOME=" + quote((dir / "pre-commit-home").string()) + " ";
    sh_ok("git add .pre-commit-config.yaml && git commit -q -m 'pre-commit config' && " + env +
              "pre-commit install --hook-type post-commit",
          repo);
    expect_both_run_then_exact_uninstall("pre-commit", env);
}

}  // namespace cocode::test
