// The tools as a user runs them: exit codes, one-line errors, status output.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_support.h"

namespace cocode::test {
namespace fs = std::filesystem;

std::string tool(const std::string& name) { return quote(tool_path(name).string()); }

TEST(Tools, AnswerVersionAndHelp) {
    TempDir dir;
    for (const std::string name : {"cocode-hook", "cocode-dispatch", "cocode-check"}) {
        Shell version = sh(tool(name) + " --version", dir.path());
        EXPECT_EQ(version.exit_code, 0) << name;
        EXPECT_EQ(version.out.rfind(name + " " COCODE_VERSION " (commit ", 0), 0u) << version.out;
        // The commit it was built from, when built from a git checkout: one of this
        // checkout's history (HEAD, or before it when built before the last commit).
        if (sh("git -C " + quote(COCODE_SOURCE_DIR) + " rev-parse HEAD", dir.path()).exit_code ==
            0) {
            const std::size_t at = version.out.find("(commit ");
            ASSERT_NE(at, std::string::npos) << version.out;
            std::string commit = version.out.substr(at + 8, 12);
            EXPECT_EQ(sh("git -C " + quote(COCODE_SOURCE_DIR) + " merge-base --is-ancestor " +
                             quote(commit) + " HEAD",
                         dir.path())
                          .exit_code,
                      0)
                << version.out;
        }
        Shell help = sh(tool(name) + " --help", dir.path());
        EXPECT_EQ(help.exit_code, 0) << name;
        EXPECT_NE(help.out.find("Usage"), std::string::npos) << help.out;
        // Every tool's help lists its exit codes.
        const bool lists_exit_codes = help.out.find("2 for bad arguments") != std::string::npos ||
                                      help.out.find("2 a mistake in") != std::string::npos;
        EXPECT_TRUE(lists_exit_codes) << help.out;
    }
    EXPECT_NE(sh(tool("cocode-dispatch") + " --version", dir.path()).out.find("libgit2 1."),
              std::string::npos);
}

// Every command's --help, byte for byte: what a user reads cannot change unnoticed. The commands
// are found from the help itself ("Subcommands:"), so a new one needs its golden file.
// UPDATE_GOLDEN=1 rewrites tests/golden/help/.
std::vector<std::string> subcommands_in(const std::string& help) {
    std::vector<std::string> names;
    const std::size_t at = help.find("\nSubcommands:\n");
    if (at == std::string::npos) return names;
    std::istringstream lines(help.substr(at + 14));
    std::string line;
    while (std::getline(lines, line) && line.rfind("  ", 0) == 0) {
        const std::size_t start = line.find_first_not_of(' ');
        names.push_back(line.substr(start, line.find(' ', start) - start));
    }
    return names;
}

TEST(Tools, EveryCommandsHelpMatchesItsGoldenFile) {
    TempDir dir;
    const fs::path golden_dir = fs::path(COCODE_SOURCE_DIR) / "tests/golden/help";
    std::set<std::string> expected;
    std::vector<std::vector<std::string>> pending = {
        {"cocode-hook"}, {"cocode-dispatch"}, {"cocode-check"}};
    while (!pending.empty()) {
        const std::vector<std::string> command = pending.back();
        pending.pop_back();
        std::string line = tool(command[0]), name = command[0];
        for (std::size_t i = 1; i < command.size(); ++i) {
            line += " " + command[i];
            name += "-" + command[i];
        }
        Shell help = sh(line + " --help", dir.path());
        EXPECT_EQ(help.exit_code, 0) << line;
        EXPECT_EQ(help.err, "") << line;
        const std::string file = name + ".txt";
        expected.insert(file);
        if (std::getenv("UPDATE_GOLDEN")) write_text(golden_dir / file, help.out);
        // Up to the blank lines that end it: CLI11 2.4 (Debian 13) ends a help without a footer
        // with one newline fewer than 2.1 (here) does.
        auto text = [](std::string t) {
            while (!t.empty() && t.back() == '\n') t.pop_back();
            return t;
        };
        EXPECT_EQ(text(help.out),
                  text(fs::exists(golden_dir / file) ? read_text(golden_dir / file) : ""))
            << "UPDATE_GOLDEN=1 rewrites " << (golden_dir / file);
        for (const auto& sub : subcommands_in(help.out)) {
            auto next = command;
            next.push_back(sub);
            pending.push_back(next);
        }
    }
    EXPECT_GE(expected.size(), 18u);
    // No golden file of a command that is gone.
    for (const auto& entry : fs::directory_iterator(golden_dir))
        EXPECT_TRUE(expected.count(entry.path().filename().string())) << entry.path();
}

// The man pages come from the tools' own help, every command's options included, with the
// examples and exit codes of docs/man/<tool>.h2m.
TEST(Tools, ManPagesAreMadeFromTheHelpWithExamplesAndExitCodes) {
    for (const std::string name : {"cocode-hook", "cocode-dispatch", "cocode-check"}) {
        const fs::path page = fs::path(COCODE_MAN_DIR) / (name + ".1");
        ASSERT_TRUE(fs::exists(page)) << page << " (help2man: ci/install-deps installs it)";
        const std::string text = read_text(page);
        EXPECT_NE(text.find(".TH " +
                            [&] {
                                std::string upper = name;
                                for (char& c : upper) c = static_cast<char>(std::toupper(c));
                                return upper;
                            }()),
                  std::string::npos)
            << text.substr(0, 300);
        for (const char* section : {".SH NAME", ".SH EXAMPLES", ".SH \"EXIT STATUS\""})
            EXPECT_NE(text.find(section), std::string::npos) << name << ": " << section;
    }
    // Every command's options are there: what `run --help` says, the page says.
    const std::string dispatch = read_text(fs::path(COCODE_MAN_DIR) / "cocode-dispatch.1");
    for (const char* option : {"concurrency", "resume", "no\\-check", "follow"})
        EXPECT_NE(dispatch.find(option), std::string::npos) << option;
    // Each command under a heading of its own, its description apart from its options (before,
    // help2man ran "… its own worktree Positionals:" and "Subcommands: issues" together).
    for (const char* heading :
         {".SS \"Command run:\"", ".SS \"Command issues list:\"", ".SS \"Command replay run:\""})
        EXPECT_NE(dispatch.find(heading), std::string::npos) << heading;
    EXPECT_EQ(dispatch.find("Positionals:"), std::string::npos);
}

// The exit codes of a run are said where a run is made (run, continue) and for the tool as a
// whole, not under every command (before, `status --help` ended with "0 done (every run
// completed)").
TEST(Tools, ExitCodesAreSaidOnlyWhereTheyMeanSomething) {
    TempDir dir;
    for (const char* command : {"run", "continue"}) {
        Shell help = sh(tool("cocode-dispatch") + " " + command + " --help", dir.path());
        EXPECT_NE(help.out.find("Exit codes: 0 every run completed"), std::string::npos) << command;
    }
    for (const char* command : {"status", "logs", "report", "gate", "clean", "issues list"}) {
        Shell help = sh(tool("cocode-dispatch") + " " + command + " --help", dir.path());
        EXPECT_EQ(help.out.find("Exit codes"), std::string::npos) << command;
    }
    EXPECT_NE(sh(tool("cocode-dispatch") + " --help", dir.path()).out.find("Exit codes: 0 done"),
              std::string::npos);
    // report and gate read GitHub alone: their GitHub options apart, and no --issues.
    for (const char* command : {"report", "gate"}) {
        Shell help = sh(tool("cocode-dispatch") + " " + command + " --help", dir.path());
        EXPECT_NE(help.out.find("\nGitHub:\n  --repo"), std::string::npos) << command;
        EXPECT_EQ(help.out.find("--issues"), std::string::npos) << command;
    }
}

// `cmake --install` lays out bin/, libexec/cocode/, share/: the installed tools find their
// helpers from where they are (the hook shim in libexec), `init` names the installed schema,
// and the man pages and documents are there.
TEST(Tools, InstalledToolsFindTheirHelpersWhereTheyAre) {
    TempDir dir;
    const fs::path prefix = dir / "prefix";
    Shell install =
        sh("cmake --install " + quote(COCODE_BUILD_DIR) + " --prefix " + quote(prefix.string()),
           dir.path());
    ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
    for (const char* file :
         {"bin/cocode-dispatch", "bin/cocode-check", "bin/cocode-hook",
          "libexec/cocode/cocode-hook-shim", "share/man/man1/cocode-dispatch.1.gz",
          "share/cocode/config.schema.json", "share/doc/cocode/README.md",
          "share/doc/cocode/docs/security.md", "share/bash-completion/completions/cocode-dispatch",
          "share/zsh/vendor-completions/_cocode-dispatch",
          "share/fish/vendor_completions.d/cocode-dispatch.fish"})
        EXPECT_TRUE(fs::exists(prefix / file)) << file;

    make_repo(dir / "repo");
    Shell init =
        sh("PATH=/usr/bin:/bin " + quote((prefix / "bin/cocode-dispatch").string()) + " init",
           dir / "repo");
    ASSERT_EQ(init.exit_code, 0) << init.err;
    auto config = nlohmann::json::parse(read_text(dir / "repo/.cocode/config.json"));
    EXPECT_EQ(config["$schema"], (prefix / "share/cocode/config.schema.json").string());
    // The hook it installed is the installed shim, recording the installed cocode-hook.
    EXPECT_EQ(read_text(dir / "repo/.git/hooks/post-commit"),
              read_text(prefix / "libexec/cocode/cocode-hook-shim"));
    EXPECT_EQ(read_text(dir / "repo/.git/hooks/cocode-hook.tool"),
              (prefix / "bin/cocode-hook").string() + "\n");
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

// What a person mistypes gets the line git or gh would give: what was wrong, what was
// expected, the command or flag that was meant. Exactly, and exit 2 for each.
TEST(Tools, MistakesOnTheCommandLineAreOneLineSayingWhatWasMeant) {
    TempDir dir;
    make_repo(dir / "repo");
    const std::string see_run = " (see `cocode-dispatch run --help`)\n";
    const std::string any_number = "expected an issue number (a whole number from 1 to 2147483647)";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"cocode-dispatch",
         "cocode-dispatch: error: `cocode-dispatch` needs a command: issues, run, continue, plan, "
         "watch, serve, ui, status, report, logs, stop, egress, gate, presets, init, env, "
         "replay, clean, doctor, completion (see `cocode-dispatch --help`)\n"},
        {"cocode-dispatch rnu 1",
         "cocode-dispatch: error: unknown command 'rnu' for `cocode-dispatch`; did you mean "
         "'run'? Commands: issues, run, continue, plan, watch, serve, ui, status, report, logs, "
         "stop, egress, gate, presets, init, env, replay, clean, doctor, completion.\n"},
        {"cocode-dispatch issues shwo 3",
         "cocode-dispatch: error: unknown command 'shwo' for `cocode-dispatch issues`; did you "
         "mean 'show'? Commands: list, show.\n"},
        {"cocode-dispatch run 0",
         "cocode-dispatch: error: issue: " + any_number + ", got '0'" + see_run},
        {"cocode-dispatch run 99999999999999999999",
         "cocode-dispatch: error: issue: " + any_number + ", got '99999999999999999999'" + see_run},
        {"cocode-dispatch run 1 --concurency 3",
         "cocode-dispatch: error: unknown option '--concurency' for `cocode-dispatch run`; did "
         "you mean '--concurrency'?" +
             see_run},
        // Its value taken for an issue, whose check fails: the option is the one named.
        {"cocode-dispatch run 2 --agnet good",
         "cocode-dispatch: error: unknown option '--agnet' for `cocode-dispatch run`; did you "
         "mean '--agent'?" +
             see_run},
        {"cocode-dispatch run 1 --concurrency 99",
         "cocode-dispatch: error: --concurrency: expected a whole number from 1 to 64, got '99'" +
             see_run},
        {"cocode-dispatch run 1 --concurrency",
         "cocode-dispatch: error: --concurrency: expects a value" + see_run},
        {"cocode-dispatch status a b",
         "cocode-dispatch: error: unexpected argument 'a' for `cocode-dispatch status` (see "
         "`cocode-dispatch status --help`)\n"},
        {"cocode-dispatch issues list --state shut",
         "cocode-dispatch: error: --state: expected one of open, closed, all, got 'shut' (see "
         "`cocode-dispatch issues list --help`)\n"},
        {"cocode-check --isue 3",
         "cocode-check: error: unknown option '--isue' for `cocode-check`; did you mean "
         "'--issue'? (see `cocode-check --help`)\n"},
        {"cocode-hook instal",
         "cocode-hook: error: unknown command 'instal' for `cocode-hook`; did you mean "
         "'install'? Commands: install, uninstall, status, post-commit, pre-push.\n"},
    };
    for (const auto& [command, expected] : cases) {
        const std::size_t space = command.find(' ');
        const std::string name = command.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : command.substr(space);
        Shell shell = sh(tool(name) + rest, dir / "repo");
        EXPECT_EQ(shell.exit_code, 2) << command;
        EXPECT_EQ(shell.err, expected) << command;
    }
    // Outside a repository every tool says so the same way: exit 2.
    const std::string here = fs::weakly_canonical(dir.path()).string();
    for (const std::string command :
         {"cocode-dispatch status", "cocode-dispatch run 1", "cocode-check --run x",
          "cocode-hook status", "cocode-hook install"}) {
        const std::size_t space = command.find(' ');
        const std::string name = command.substr(0, space);
        Shell shell = sh(tool(name) + command.substr(space), dir.path());
        EXPECT_EQ(shell.exit_code, 2) << command << ": " << shell.err;
        EXPECT_EQ(shell.err,
                  name + ": error: not a git repository (nor any of its parents): " + here + "\n");
    }
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
