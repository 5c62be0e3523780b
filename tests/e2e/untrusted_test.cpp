// Untrusted stays untrusted (docs/security.md): what an agent of the same user can reach of
// cocode's secrets, tried as a hostile agent would, with the real tools as processes and GitHub
// on loopback TLS.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fake_github.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Looks for the token (from the file $NEEDLE names, in base64, so that the suite's own token
// scan does not find it there and no process of the search holds it) everywhere a process of
// the same user can read: every such process's environment and command line, the run folders
// (the repository) and its HOME. Prints how many places held it.
const char kSearch[] = R"SH(#!/bin/sh
TOKEN_TO_FIND=$(base64 -d < "$NEEDLE")
found=0
me=$(id -u)
for p in /proc/[0-9]*; do
  # The same user's processes (by their real uid, which status shows whatever they are): the
  # other tests running beside this one are not its business.
  [ "$(awk '/^Uid:/ {print $2}' "$p/status" 2>/dev/null)" = "$me" ] || continue
  for f in "$p/environ" "$p/cmdline"; do
    if tr '\0' '\n' < "$f" 2>/dev/null | grep -qF "$TOKEN_TO_FIND"; then
      found=$((found + 1)); echo "in $f" >&2
    fi
  done
done
for d in "$@"; do
  n=$(grep -rlF "$TOKEN_TO_FIND" "$d" 2>/dev/null | wc -l); found=$((found + n))
done
echo "found $found"
)SH";

// Without the sandbox, as an unprivileged user (the tests run as root: setpriv drops to
// nobody), an agent that searches every readable /proc/*/environ and cmdline, the run folders
// and its HOME finds no GitHub token — while the token still publishes the verdict.
TEST(Untrusted, AnAgentOfTheSameUserFindsNoTokenWhileTheTokenPublishes) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
    TempDir dir;
    FakeGitHub github(loopback_options());
    github.add_issue(1, "Fix it", "Please.", {"cocode"});
    const fs::path repo = dir / "repo", home = dir / "home";
    make_repo(repo);
    fs::create_directories(home);
    fs::create_directories(repo / ".cocode");
    write_text(repo / ".cocode/search.sh", kSearch);
    fs::permissions(repo / ".cocode/search.sh", fs::perms::owner_all, fs::perm_options::add);
    const std::string marker_commit =
        "git commit -q --allow-empty -m searched -m \"$COCODE_READY_MARKER\"";
    write_text(repo / ".cocode/spy.sh",
               "#!/bin/sh\n" + quote((repo / ".cocode/search.sh").string()) + " " +
                   quote(repo.string()) + " " + quote(home.string()) + "\n" + marker_commit + "\n");
    fs::permissions(repo / ".cocode/spy.sh", fs::perms::owner_all, fs::perm_options::add);
    write_text(repo / ".cocode/config.json",
               json{{"sandbox", "none"},
                    {"agents",
                     {{"spy",
                       {{"command", (repo / ".cocode/spy.sh").string()},
                        {"env", {{"NEEDLE", (dir / "needle").string()}}}}}}}}
                   .dump());
    sh_ok("git add -A && git commit -q -m spy", repo);
    sh_ok("printf %s " + std::string(kTestToken) + " | base64 > needle", dir.path());
    // The loopback GitHub's CA, readable by the user.
    fs::copy_file(loopback_tls().files.certificate, dir / "ca.pem");
    sh_ok("chown -R 65534:65534 " + quote(dir.path().string()) + " && chmod 755 " +
              quote(dir.path().string()),
          dir.path());
    // The token reaches the tools through the environment, as a user's shell gives it: never
    // on a command line (the test's own shell would show it to everyone).
    ::setenv("GITHUB_TOKEN", kTestToken, 1);
    const std::string as_user =
        "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=" + quote(home.string()) +
        " SSL_CERT_FILE=" + quote((dir / "ca.pem").string()) +
        " GITHUB_API_URL=" + github.base_url() + " NEEDLE=" + quote((dir / "needle").string()) +
        " ";

    // The search is not blind: a process holding the token in its environment is found.
    Shell control =
        sh(as_user + "sh -c 'sleep 30 & pid=$!; TOKEN_TO_FIND=" + std::string(kTestToken) + " " +
               quote((repo / ".cocode/search.sh").string()) + "; kill $pid'",
           repo);
    EXPECT_NE(control.out, "found 0\n") << control.out << control.err;

    Shell run = sh(as_user + quote(tool_path("cocode-dispatch").string()) +
                       " run 1 --repo octo-org/demo" + " --publish",
                   repo);
    ::unsetenv("GITHUB_TOKEN");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    fs::path folder;
    for (const auto& entry : fs::directory_iterator(repo / ".cocode/runs"))
        if (entry.is_directory()) folder = entry.path();
    EXPECT_EQ(read_text(folder / "agent-stdout.txt"), "found 0\n")
        << read_text(folder / "agent-stderr.txt");
    // And the token did its work: the verdict is on the issue.
    bool published = false;
    for (const auto& c : github.comments_of(1))
        published = published ||
                    c["body"].get<std::string>().rfind("<!-- cocode:check/issue-1/spy -->", 0) == 0;
    EXPECT_TRUE(published);
}

}  // namespace
}  // namespace cocode::test
