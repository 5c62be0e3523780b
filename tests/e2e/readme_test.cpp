// The README, run as a newcomer would run it: every ```sh block, in order, in one shell, in a
// scratch folder. The machine is a user's: git knows who they are; claude, codex and gemini
// (the real CLIs, from the build tree) are on PATH with keys, pointed at a scripted model on
// 127.0.0.1 the way a gateway's user points them (ANTHROPIC_BASE_URL, codex's own
// config.toml, GOOGLE_GEMINI_BASE_URL with gemini's API-key setting); GitHub is a loopback
// TLS server reached as an Enterprise one (GITHUB_API_URL and its CA). What the CLIs would
// send elsewhere goes to a proxy that refuses it. A block preceded by a `<!-- not run here:
// … -->` comment is one this test cannot run (building a package, the test command itself);
// the comment names what runs it. `export NAME=…` is the reader's own value: the test
// supplies it, and fails when it does not know it.
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "connect_proxy.h"
#include "fake_github.h"
#include "fake_models.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;

const fs::path kClis = fs::path(COCODE_AGENT_CLIS_DIR) / "node_modules/.bin";
constexpr char kKey[] = "sk-cocode-fake-model-key-0123456789";

struct Block {
    int line = 0;         // of the opening fence
    std::string text;     // the commands
    std::string not_run;  // why not, when it is not run here
};

std::vector<Block> sh_blocks(const fs::path& readme) {
    std::istringstream in(read_text(readme));
    std::vector<Block> blocks;
    std::string line, previous;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.rfind("```", 0) == 0) {
            const bool shell = line == "```sh";
            Block block{number, "", ""};
            if (previous.rfind("<!-- not run here:", 0) == 0) block.not_run = previous;
            while (std::getline(in, line) && line.rfind("```", 0) != 0) {
                ++number;
                block.text += line + "\n";
            }
            ++number;
            if (shell) blocks.push_back(block);
        }
        if (!line.empty()) previous = line;
    }
    return blocks;
}

TEST(Readme, EveryCommandBlockRunsInOrderOnAUsersMachine) {
    const auto blocks = sh_blocks(fs::path(COCODE_SOURCE_DIR) / "README.md");
    ASSERT_GE(blocks.size(), 8u);

    TempDir dir;
    const fs::path home = dir / "home";
    fs::create_directories(home / ".codex");
    fs::create_directories(home / ".gemini");
    FakeModels::Options script;
    script.commands = {
        "echo fixed > fix.txt",
        "git add fix.txt && git commit -q -m 'Say what is fixed' -m 'cocode ready for check'"};
    script.answer = "Done: fix.txt says fixed.";
    script.key = kKey;
    FakeModels models(script);
    write_text(home / ".gitconfig",
               "[user]\n\tname = Readme Reader\n\temail = reader@cocode.invalid\n");
    write_text(home / ".codex/config.toml", "openai_base_url = \"" + models.origin() + "/v1\"\n");
    write_text(home / ".gemini/settings.json",
               R"({"security": {"auth": {"selectedType": "gemini-api-key"}}})");
    FakeGitHub::Options github_options = loopback_options();
    github_options.repo = "calc";
    FakeGitHub github(github_options);
    github.add_issue(3, "Say what is fixed", "Create fix.txt containing the word fixed.",
                     {"cocode"});
    github.add_comment(3, "Seen on 0.1.0 too.");
    ConnectProxy guard;

    // The user's own values for `export NAME=…`.
    const std::map<std::string, std::string> supplied = {{"GITHUB_TOKEN", kTestToken}};
    std::string program = "set -euo pipefail\n";
    int run = 0;
    for (const Block& block : blocks) {
        if (!block.not_run.empty()) {
            EXPECT_GT(block.not_run.size(), std::string("<!-- not run here: -->").size() + 10)
                << "README.md:" << block.line << ": say what runs it instead";
            continue;
        }
        ++run;
        program += "echo '@@ README.md:" + std::to_string(block.line) + "'\n";
        std::istringstream lines(block.text);
        std::string line;
        static const std::regex kExport(R"(^export ([A-Z_]+)=…(\s.*)?$)");
        while (std::getline(lines, line)) {
            std::smatch m;
            if (std::regex_match(line, m, kExport)) {
                auto value = supplied.find(m[1]);
                ASSERT_NE(value, supplied.end()) << "README.md: no value for " << m[1];
                program += "export " + m[1].str() + "=" + value->second + "\n";
            } else {
                program += line + "\n";
            }
        }
    }
    EXPECT_GE(run, 7);
    write_text(dir / "readme.sh", program);

    const std::string env =
        "env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME -u GIT_COMMITTER_EMAIL "
        "-u GIT_CONFIG_GLOBAL -u GITHUB_TOKEN -u GH_TOKEN -u GITHUB_ACTIONS HOME=" +
        quote(home.string()) +
        " PATH=" + quote(tool_path("cocode-dispatch").parent_path().string()) + ":" +
        quote(kClis.string()) + ":\"$PATH\" ANTHROPIC_API_KEY=" + kKey + " CODEX_API_KEY=" + kKey +
        " GEMINI_API_KEY=" + kKey + " ANTHROPIC_BASE_URL=" + models.origin() +
        " GOOGLE_GEMINI_BASE_URL=" + models.origin() + " GITHUB_API_URL=" + github.base_url() +
        " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) +
        " HTTPS_PROXY=" + guard.url() + " HTTP_PROXY=" + guard.url() +
        " NO_PROXY=127.0.0.1,localhost ";
    Shell readme = sh(env + "bash readme.sh 2>&1", dir.path());
    const std::string& out = readme.out;
    const std::size_t last = out.rfind("@@ README.md:");
    ASSERT_EQ(readme.exit_code, 0)
        << "failed in the block at "
        << (last == std::string::npos ? "?" : out.substr(last + 3, out.find('\n', last) - last - 3))
        << "\n"
        << out;

    // The first run: the script agent fixed the bug, its work is on main, its branch is gone.
    EXPECT_EQ(read_text(dir / "calc/calc.py"), "def add(a, b):\n    return a + b\n");
    EXPECT_NE(out.find("#1 fixer  PASS"), std::string::npos) << out;
    EXPECT_NE(out.find("fixing #1: add(2, 2) returns 0. It should return 4."), std::string::npos);
    EXPECT_EQ(sh("git rev-parse --verify -q cocode/1-fixer", dir / "calc").exit_code, 1);
    // The three real CLIs, each to READY and PASS, and compared.
    for (const char* agent : {"claude", "codex", "gemini"})
        EXPECT_NE(out.find(std::string("#2 ") + agent + "  PASS"), std::string::npos)
            << agent << "\n"
            << out;
    EXPECT_NE(out.find("3 agents on #2"), std::string::npos) << out;
    // What they cost: status's columns, and report's table with a row per agent.
    EXPECT_NE(out.find("TOKENS     COST  VERDICT"), std::string::npos) << out;
    EXPECT_NE(out.find("AGENT                 RUNS     PASS (95%) TOKENS"), std::string::npos)
        << out;
    EXPECT_NE(out.find("\nclaude                   1  100% (21-100) "), std::string::npos) << out;
    // GitHub: the run's verdict and the comparison on issue 3 (no commit status: the branch
    // was not pushed, and GitHub refuses a status on a commit it has not seen).
    int verdicts = 0, summaries = 0, live = 0;
    for (const auto& comment : github.comments_of(3)) {
        const std::string body = comment["body"];
        verdicts += body.find("cocode check · `claude` on #3") != std::string::npos;
        summaries += body.rfind("<!-- cocode:check/issue-3/summary -->", 0) == 0;
        // Its last batch was the round `continue` ran: judged, the comment says it is done.
        live += body.rfind("<!-- cocode:progress/issue-3 -->", 0) == 0 &&
                body.find("1 agent on #3 · done") != std::string::npos &&
                body.find("| `claude` | ") != std::string::npos;
    }
    EXPECT_EQ(verdicts, 1);
    EXPECT_EQ(summaries, 1);
    EXPECT_EQ(live, 1) << "the live comment, ended with the verdict";
    EXPECT_TRUE(github.statuses().empty());
    // The gate let main through to the remote.
    EXPECT_EQ(sh_ok("git rev-parse main", dir / "calc"),
              sh_ok("git --git-dir=calc-remote.git rev-parse main", dir.path()));
    // Local traffic stayed off the proxy (NO_PROXY); what tried to leave was refused there.
    for (const auto& target : guard.targets())
        EXPECT_EQ(target.rfind("127.0.0.1:", 0), std::string::npos) << target;
}

}  // namespace
}  // namespace cocode::test
