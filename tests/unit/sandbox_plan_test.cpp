// The sandbox as data (proc/sandbox.h): which plans are refused, and the command line a plan
// becomes — what is read-only, what comes back under a folder of the child's own, what it
// writes, in which order — as tables, without starting anything.
#include <gtest/gtest.h>

#include <algorithm>

#include "proc/sandbox.h"
#include "test_support.h"

namespace cocode {
namespace {

namespace fs = std::filesystem;

TEST(SandboxPlan, APlanThatCannotBeMadeAsWrittenIsRefusedNeverMadeWeaker) {
    SandboxPlan good;
    good.writable = {"/r/wt", "/r/.cocode/runs/1"};
    good.read_only = {"/r/.cocode/runs/1/egress.jsonl"};
    good.hidden = {"/home/u/.ssh"};
    good.protected_paths = {"/home/u/.cache/cocode/environments", "/r/.cocode/seals"};
    good.home = "/r/.cocode/sandboxes/1-a/home";
    good.tmp = "/r/.cocode/sandboxes/1-a/tmp";
    EXPECT_EQ(plan_refused(good), "");
    struct Case {
        const char* why;
        std::function<void(SandboxPlan&)> change;
        const char* refused;
    };
    const Case cases[] = {
        {"a relative writable path", [](SandboxPlan& p) { p.writable.push_back("wt"); },
         "a writable path is not absolute: wt"},
        {"a read-only path deeper in a writable folder (its parent could be moved away)",
         [](SandboxPlan& p) { p.read_only = {"/r/.cocode/runs/1/sub/egress.jsonl"}; },
         "a read-only path is not directly inside a writable folder"},
        {"a read-only path outside every writable folder",
         [](SandboxPlan& p) { p.read_only = {"/etc/passwd"}; },
         "a read-only path is not directly inside a writable folder"},
        {"a hidden path inside a writable folder",
         [](SandboxPlan& p) { p.hidden.push_back("/r/wt/.env"); },
         "a hidden path lies inside a writable folder: /r/wt/.env"},
        {"the store, missing, inside a writable folder (it could be made there)",
         [](SandboxPlan& p) {
             p.protected_paths.push_back("/r/.cocode/sandboxes/1-a/home/.cache/store");
         },
         "a protected path lies inside a writable folder"},
        {"other runs' folders hidden inside a writable folder",
         [](SandboxPlan& p) { p.apart.push_back("/r/wt/.cocode/runs"); },
         "a hidden path lies inside a writable folder: /r/wt/.cocode/runs"},
        {"the seals inside its HOME", [](SandboxPlan& p) { p.home = "/r/.cocode"; },
         "a protected path lies inside a writable folder: /r/.cocode/seals"},
    };
    for (const auto& c : cases) {
        SandboxPlan plan = good;
        c.change(plan);
        EXPECT_EQ(plan_refused(plan).rfind(c.refused, 0), 0u)
            << c.why << ": " << plan_refused(plan);
    }
}

// path_within answers by names alone, as the paths' lexically normal forms would: the same as
// lexically_relative for every pair of these (`.`, `..`, doubled and trailing slashes, a name
// that only starts like the folder's, relative paths).
TEST(SandboxPlan, WhatLiesWithinAFolderIsDecidedByNamesAsTheirNormalFormsRead) {
    const char* const paths[] = {"/",     "/a",  "/a/",     "/a/b",  "/a/./b", "/a/../b",
                                 "/a//b", "/ab", "/a/b/..", "/a/.c", "/.c/d",  "/a/b/.",
                                 "a",     "a/b", "./a",     "..",    "/a/..",  "/r/.cocode/runs",
                                 "/r/wt"};
    for (const char* path : paths)
        for (const char* folder : paths) {
            const fs::path rel = fs::path(path).lexically_normal().lexically_relative(
                fs::path(folder).lexically_normal());
            const bool expected = !rel.empty() && *rel.begin() != "..";
            EXPECT_EQ(path_within(path, folder), expected) << path << " in " << folder;
        }
    EXPECT_TRUE(path_within("/r/.cocode/runs/1", "/r/.cocode/runs"));
    EXPECT_FALSE(path_within("/r/.cocode/runs-old", "/r/.cocode/runs"));
}

// The position of `word` followed by `path` in `argv` (after `after`), or npos.
std::size_t where(const std::vector<std::string>& argv, const std::string& word,
                  const std::string& path, std::size_t after = std::string::npos) {
    for (std::size_t i = after == std::string::npos ? 0 : after + 1; i + 1 < argv.size(); ++i)
        if (argv[i] == word && argv[i + 1] == path) return i;
    return std::string::npos;
}

// A repository on the host's /dev/shm (a tmpfs some runners keep their work on) lies under the
// sandbox's own /dev: it comes back, read-only, and its worktree writable, after /dev is made.
TEST(SandboxPlan, ARepositoryUnderDevShmComesBackOverTheSandboxesOwnDev) {
    if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm here";
    test::TempDir dir;
    const fs::path shm = fs::path("/dev/shm") / dir.path().filename();
    const fs::path repo = shm / "repo", wt = repo / ".cocode/worktrees/1-a";
    fs::create_directories(wt);
    SandboxPlan plan;
    plan.visible = {repo};
    plan.writable = {wt};
    const auto argv = sandboxed_argv("cocode-sandbox", plan, {"agent"});
    const std::size_t dev = where(argv, "--dev", "/dev");
    const std::size_t back = where(argv, "--ro-bind", repo.string());
    const std::size_t write = where(argv, "--bind", wt.string());
    std::error_code ec;
    fs::remove_all(shm, ec);
    ASSERT_NE(dev, std::string::npos);
    ASSERT_NE(back, std::string::npos) << "the repository stays out of sight under /dev";
    ASSERT_NE(write, std::string::npos);
    EXPECT_LT(dev, back);
    EXPECT_LT(back, write);
}

// What a plan reads inside a folder apart is bound if it is there when the child starts: a plan
// round's own worktree is made after its command line. A device it names (GIT_CONFIG_GLOBAL
// naming /dev/null) is the sandbox's own: one bound back from the host comes read-only and
// `nodev`, and git could not open /dev/null to write.
TEST(SandboxPlan, WhatItReadsApartComesBackOnceMadeAndTheDevicesAreItsOwn) {
    test::TempDir dir;
    const fs::path repo = dir / "repo", worktrees = repo / ".cocode/worktrees",
                   wt = worktrees / "1-a";
    fs::create_directories(worktrees);
    SandboxPlan plan;
    plan.visible = {repo, wt, "/dev/null"};
    plan.apart = {worktrees};
    ASSERT_EQ(plan_refused(plan), "");
    const auto argv = sandboxed_argv("cocode-sandbox", plan, {"agent"});
    const std::size_t apart = where(argv, "--tmpfs", worktrees.string());
    const std::size_t own = where(argv, "--ro-bind-try", wt.string());
    ASSERT_NE(apart, std::string::npos);
    ASSERT_NE(own, std::string::npos) << "its worktree, missing yet, would stay covered";
    EXPECT_LT(apart, own);
    EXPECT_EQ(argv[own + 2], wt.string());
    EXPECT_EQ(where(argv, "--ro-bind", "/dev/null"), std::string::npos)
        << "the host's /dev/null over the sandbox's own";
}

// A replay hides its main repository first; cocode's programs come back read-only, and when
// they lie in a folder around that repository (a build tree holding both, under /tmp, which
// the child's own /tmp covers), the repository is hidden again inside it, and of it only
// what the plan reads (the replay's own repository) comes back.
TEST(SandboxPlan, WhatIsHiddenFirstStaysHiddenInsideAFolderThatComesBackAroundIt) {
    test::TempDir dir;  // under /tmp: a folder of the child's own /tmp covers it
    const fs::path build = dir / "build", main_repo = build / "scratch/repo",
                   replay = main_repo / ".git/cocode/replay/r1", own = dir / "own";
    fs::create_directories(replay);
    fs::create_directories(own / "tmp");
    SandboxPlan plan;
    plan.tmp = own / "tmp";
    plan.hidden_first = {main_repo};
    plan.visible = {build, replay};
    ASSERT_EQ(plan_refused(plan), "");
    const auto argv = sandboxed_argv("cocode-sandbox", plan, {"agent"});
    const std::size_t around = where(argv, "--ro-bind", build.string());
    const std::size_t again = where(argv, "--tmpfs", main_repo.string(), around);
    const std::size_t its_own = where(argv, "--ro-bind", replay.string(), around);
    ASSERT_NE(around, std::string::npos) << "cocode's programs come back under its own /tmp";
    ASSERT_NE(again, std::string::npos) << "the main repository shows again inside them";
    ASSERT_NE(its_own, std::string::npos) << "the replay's repository stays covered";
    EXPECT_LT(again, its_own);
}

TEST(SandboxPlan, TheCommandLineDeniesByDefaultAndBindsEachFolderOnce) {
    test::TempDir dir;  // under /tmp: a folder of the child's own /tmp covers it
    const fs::path repo = dir / "repo", wt = repo / ".cocode/worktrees/1-a",
                   run = repo / ".cocode/runs/1", home = dir / "home", own = repo / ".cocode/sb";
    for (const auto& folder : {wt, run, home / ".ssh", own / "home", own / "tmp", repo / ".git"})
        fs::create_directories(folder);
    test::write_text(run / "egress.jsonl", "");
    test::write_text(run / "prompt.md", "");
    SandboxPlan plan;
    plan.hidden_first = {home};
    plan.visible = {repo, repo / ".git", repo, run / "prompt.md", home / "tools"};
    plan.writable = {wt, run};
    plan.read_only = {run / "egress.jsonl"};
    plan.hidden = {home / ".ssh", "/nowhere/.netrc"};
    // Other runs' folders: the runs folder out of sight again, but for its own run (and the
    // runs folder itself, named by a variable, does not come back whole).
    plan.apart = {repo / ".cocode/runs"};
    plan.visible.push_back(repo / ".cocode/runs");
    plan.home = own / "home";
    plan.tmp = own / "tmp";
    plan.own_network = true;
    ASSERT_EQ(plan_refused(plan), "");
    const auto argv = sandboxed_argv("/usr/bin/bwrap", plan, {"agent", "--flag"});
    const auto count = [&](const std::string& word, const fs::path& path) {
        std::size_t n = 0;
        for (std::size_t i = 0; i + 1 < argv.size(); ++i)
            n += argv[i] == word && argv[i + 1] == path.string();
        return n;
    };
    // The host read-only, devices, processes, IPC and network of its own, no capability.
    for (const char* word :
         {"--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent"})
        EXPECT_NE(std::find(argv.begin(), argv.end(), word), argv.end()) << word;
    EXPECT_NE(where(argv, "--ro-bind", "/"), std::string::npos);
    EXPECT_NE(where(argv, "--cap-drop", "ALL"), std::string::npos);
    EXPECT_NE(where(argv, "--dev", "/dev"), std::string::npos);
    // Its own /tmp over the host's first; then HOME covered (over its /tmp too, where it lies
    // there); what it must read back, read-only, once (not what lies in another that comes
    // back, nor in a writable folder); then what it writes; the record read-only again; the
    // secret hidden where HOME shows; last, HOME's cover made read-only.
    const std::size_t cover = where(argv, "--tmpfs", home.string());
    const std::size_t tmp = where(argv, "--bind", own.string() + "/tmp");
    const std::size_t back = where(argv, "--ro-bind", repo.string());
    const std::size_t write = where(argv, "--bind", wt.string());
    const std::size_t record = where(argv, "--ro-bind", (run / "egress.jsonl").string());
    ASSERT_NE(cover, std::string::npos);
    ASSERT_NE(tmp, std::string::npos);
    ASSERT_NE(back, std::string::npos);
    ASSERT_NE(write, std::string::npos);
    ASSERT_NE(record, std::string::npos);
    EXPECT_LT(tmp, cover);
    EXPECT_LT(cover, back);
    const std::size_t cover_sealed = where(argv, "--remount-ro", home.string());
    ASSERT_NE(cover_sealed, std::string::npos) << "a write there would only seem to land";
    EXPECT_GT(cover_sealed, record);
    const std::size_t apart = where(argv, "--tmpfs", (repo / ".cocode/runs").string());
    ASSERT_NE(apart, std::string::npos);
    EXPECT_LT(back, apart);
    EXPECT_LT(apart, write);
    EXPECT_EQ(count("--ro-bind", repo / ".cocode/runs"), 0u) << "the runs folder stays hidden";
    const std::size_t sealed = where(argv, "--remount-ro", (repo / ".cocode/runs").string());
    ASSERT_NE(sealed, std::string::npos) << "its empty folder is read-only";
    EXPECT_GT(sealed, where(argv, "--bind", run.string())) << "after its own run comes back";
    EXPECT_LT(back, write);
    EXPECT_LT(write, record);
    EXPECT_EQ(argv[tmp + 2], "/tmp");
    EXPECT_EQ(count("--ro-bind", repo), 1u) << "the repository comes back once";
    EXPECT_EQ(count("--ro-bind", repo / ".git"), 0u) << "inside the repository: bound with it";
    EXPECT_EQ(count("--ro-bind", run / "prompt.md"), 0u) << "inside a writable folder";
    EXPECT_EQ(count("--ro-bind", home / "tools"), 0u) << "nothing there: stays out of sight";
    EXPECT_EQ(count("--tmpfs", home / ".ssh"), 0u) << "HOME is out of sight already";
    EXPECT_EQ(count("--bind", own / "home"), 1u);
    EXPECT_EQ(count("--bind", run), 1u);
    // The command comes last, whole.
    ASSERT_GE(argv.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
              (std::vector<std::string>{"--", "agent", "--flag"}));
}

TEST(SandboxPlan, InsideItHomeIsItsOwnTmpDirIsTmpAndPyenvStillFindsItsVersions) {
    SandboxPlan plan;
    plan.home = "/r/.cocode/sandboxes/1-a/home";
    plan.tmp = "/r/.cocode/sandboxes/1-a/tmp";
    const auto env = sandbox_environment(
        {"HOME=/home/u", "TMPDIR=/var/tmp/u", "PATH=/home/u/.pyenv/shims:/usr/bin"}, plan, "");
    auto value = [&](const std::string& name) {
        for (const auto& e : env)
            if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
        return std::string("(unset)");
    };
    EXPECT_EQ(value("HOME"), "/r/.cocode/sandboxes/1-a/home");
    EXPECT_EQ(value("TMPDIR"), "/tmp");
    EXPECT_EQ(value("PYENV_ROOT"), "/home/u/.pyenv");
    EXPECT_EQ(value("PATH"), "/home/u/.pyenv/shims:/usr/bin");
}

}  // namespace
}  // namespace cocode
