// The codali agent's local side against a real repository made with git: the worktree index
// (Xapian, Universal Ctags) with known answers — the defining file ranks first, symbols come
// with their lines, impact lists the real importers in C/C++, Python, JS/TS and Go — brought up
// to date from git's blob ids without touching git's own index; ignored and binary files never
// indexed; every need answered, refused or warned about as documented; and the critic judging
// the worktree as it stands, uncommitted edits included, without committing anything.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>

#include "agent/codali_needs.h"
#include "check/critic.h"
#include "index/worktree_index.h"
#include "protocol/envelope.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using namespace cocode::index;

// A file of the fixture, its folders made as needed.
void put(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    write_text(path, text);
}

std::vector<std::string> paths_of(const std::vector<ImportEdge>& edges) {
    std::vector<std::string> out;
    for (const auto& e : edges) out.push_back(e.path);
    return out;
}

class CodaliIndex : public ::testing::Test {
  protected:
    void SetUp() override {
        repo_ = dir_.path() / "repo";
        make_repo(repo_);
        put(repo_ / ".gitignore", "build/\n");
        // Python: config.py defines parse_config; app.py calls it more often than it is
        // written in config.py, so plain term frequency alone would rank app.py first.
        put(repo_ / "pkg/__init__.py", "");
        put(repo_ / "pkg/config.py",
            "import os\n\n\nclass Config:\n    pass\n\n\n"
            "def parse_config(path):\n    \"\"\"Read the configuration.\"\"\"\n"
            "    return Config()\n");
        put(repo_ / "pkg/app.py",
            "from .config import parse_config\n\n\ndef main():\n"
            "    a = parse_config('a')\n    b = parse_config('b')\n"
            "    c = parse_config('c')\n    return parse_config('d')\n");
        put(repo_ / "pkg/cli.py", "import pkg.config\n\nrun = pkg.config.parse_config\n");
        put(repo_ / "tools/report.py", "from pkg import config\n\nconfig.parse_config(1)\n");
        put(repo_ / "unrelated.py", "# parse_config is mentioned, never imported\n");
        // C: an include folder found by suffix, a relative include, a system header.
        put(repo_ / "include/auth/login.h", "int login_user(const char *name);\n");
        put(repo_ / "src/auth/login.c",
            "#include \"auth/login.h\"\n#include <string.h>\n"
            "int login_user(const char *name) { return strlen(name) > 0; }\n");
        put(repo_ / "src/main.c",
            "#include \"auth/login.h\"\nint main(void) { return login_user(\"x\"); }\n");
        put(repo_ / "src/auth/session.c", "#include \"login.h\"\nint session;\n");
        // JavaScript and TypeScript: relative imports in every form, and a package.
        put(repo_ / "web/auth/login.ts",
            "export function loginUser(name: string): boolean {\n  return name.length > 0;\n}\n");
        put(repo_ / "web/app.ts", "import { loginUser } from './auth/login';\nloginUser('a');\n");
        put(repo_ / "web/esm.ts", "import {\n  loginUser,\n} from \"./auth/login.js\";\n");
        put(repo_ / "web/legacy.js", "const { loginUser } = require(\"./auth/login\");\n");
        put(repo_ / "web/other.ts", "import _ from 'lodash';\n");
        // Go: a package imported through the module path in go.mod.
        put(repo_ / "go.mod", "module example.com/shop\n\ngo 1.21\n");
        put(repo_ / "pkg/cart/cart.go", "package cart\n\nfunc Total() int { return 0 }\n");
        put(repo_ / "cmd/shop/main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/shop/pkg/cart\"\n)\n\n"
            "func main() { fmt.Println(cart.Total()) }\n");
        // Never indexed: a binary file, and an ignored one that defines the symbol too.
        put(repo_ / "assets/logo.bin", std::string("PNG\0parse_config\0", 17));
        put(repo_ / "build/generated.py", "def parse_config():\n    pass\n");
        sh_ok("git add -A && git commit -q -m fixture", repo_);
        // Untracked but not ignored: the worktree as it stands includes it.
        put(repo_ / "notes/todo.md", "Refactor the checkout flow later.\n");
        root_ = fs::canonical(repo_);
        auto opened = WorktreeIndex::open(dir_.path() / "index", root_);
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        index_ = std::move(opened).value();
        auto stats = index_->update();
        ASSERT_TRUE(stats.ok()) << stats.error().message;
        first_ = *stats;
    }

    TempDir dir_;
    fs::path repo_, root_;
    std::unique_ptr<WorktreeIndex> index_;
    UpdateStats first_;
};

TEST_F(CodaliIndex, HoldsTheWorktreeAsItStandsButNotIgnoredOrBinaryFiles) {
    EXPECT_TRUE(first_.warning.empty()) << first_.warning;
    const auto& files = index_->files();
    EXPECT_TRUE(std::count(files.begin(), files.end(), "notes/todo.md"));        // untracked
    EXPECT_FALSE(std::count(files.begin(), files.end(), "build/generated.py"));  // ignored
    EXPECT_EQ(first_.files, files.size());
    EXPECT_EQ(first_.indexed, files.size());
    EXPECT_EQ(first_.skipped, 1u);  // assets/logo.bin
    auto hits = index_->search("checkout flow", 5);
    ASSERT_TRUE(hits.ok());
    ASSERT_FALSE(hits->empty());
    EXPECT_EQ((*hits)[0].path, "notes/todo.md");
    auto symbols = index_->symbols("assets/logo.bin");
    ASSERT_FALSE(symbols.ok());
    EXPECT_NE(symbols.error().message.find("binary or too large"), std::string::npos);
}

TEST_F(CodaliIndex, TheFileThatDefinesTheSymbolRanksFirst) {
    for (const std::string query : {"parse_config", "parse config", "parseConfig"}) {
        auto hits = index_->search(query, 10);
        ASSERT_TRUE(hits.ok()) << hits.error().message;
        ASSERT_GE(hits->size(), 4u) << query;
        EXPECT_EQ((*hits)[0].path, "pkg/config.py") << query;
        EXPECT_EQ((*hits)[0].defines, "parse_config") << query;
        EXPECT_EQ((*hits)[0].line, 8) << query;
        EXPECT_NE((*hits)[0].snippet.find("def parse_config(path):"), std::string::npos);
        for (const auto& h : *hits) {
            EXPECT_NE(h.path, "build/generated.py");
            EXPECT_NE(h.path, "assets/logo.bin");
        }
    }
    // A word that is only part of identifiers is found through them.
    auto hits = index_->search("login user", 3);
    ASSERT_TRUE(hits.ok());
    ASSERT_FALSE(hits->empty());
    EXPECT_TRUE((*hits)[0].path == "src/auth/login.c" ||
                (*hits)[0].path == "include/auth/login.h" || (*hits)[0].path == "web/auth/login.ts")
        << (*hits)[0].path;
}

TEST_F(CodaliIndex, SymbolsComeFromCtagsWithTheirLines) {
    auto symbols = index_->symbols("pkg/config.py");
    ASSERT_TRUE(symbols.ok()) << symbols.error().message;
    std::vector<std::string> seen;
    for (const auto& s : *symbols)
        seen.push_back(s.name + " " + s.kind + " " + std::to_string(s.line));
    EXPECT_EQ(seen, (std::vector<std::string>{"Config class 4", "parse_config function 8"}));
    auto go = index_->symbols("pkg/cart/cart.go");
    ASSERT_TRUE(go.ok());
    EXPECT_TRUE(std::any_of(go->begin(), go->end(),
                            [](const Symbol& s) { return s.name == "Total" && s.line == 3; }));
    EXPECT_FALSE(index_->symbols("no/such.py").ok());
}

TEST_F(CodaliIndex, ImpactListsTheRealImportersInEachLanguage) {
    auto py = index_->impact("pkg/config.py");
    ASSERT_TRUE(py.ok()) << py.error().message;
    EXPECT_EQ(paths_of(py->inbound),
              (std::vector<std::string>{"pkg/app.py", "pkg/cli.py", "tools/report.py"}));
    ASSERT_EQ(py->outbound.size(), 1u);
    EXPECT_EQ(py->outbound[0].spec, "os");
    EXPECT_FALSE(py->outbound[0].target);  // the standard library is not in the worktree
    auto app = index_->impact("pkg/app.py");
    ASSERT_TRUE(app.ok());
    ASSERT_FALSE(app->outbound.empty());
    EXPECT_EQ(app->outbound[0].spec, ".config");
    EXPECT_EQ(app->outbound[0].target, "pkg/config.py");

    auto c = index_->impact("include/auth/login.h");
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(paths_of(c->inbound),
              (std::vector<std::string>{"src/auth/login.c", "src/auth/session.c", "src/main.c"}));
    auto login_c = index_->impact("src/auth/login.c");
    ASSERT_TRUE(login_c.ok());
    ASSERT_EQ(login_c->outbound.size(), 2u);
    EXPECT_EQ(login_c->outbound[0].target, "include/auth/login.h");
    EXPECT_FALSE(login_c->outbound[1].target);  // <string.h>

    auto ts = index_->impact("web/auth/login.ts");
    ASSERT_TRUE(ts.ok());
    EXPECT_EQ(paths_of(ts->inbound),
              (std::vector<std::string>{"web/app.ts", "web/esm.ts", "web/legacy.js"}));
    auto other = index_->impact("web/other.ts");
    ASSERT_TRUE(other.ok());
    ASSERT_EQ(other->outbound.size(), 1u);
    EXPECT_EQ(other->outbound[0].spec, "lodash");
    EXPECT_FALSE(other->outbound[0].target);

    auto go = index_->impact("pkg/cart/cart.go");
    ASSERT_TRUE(go.ok());
    EXPECT_EQ(paths_of(go->inbound), std::vector<std::string>{"cmd/shop/main.go"});
    auto main_go = index_->impact("cmd/shop/main.go");
    ASSERT_TRUE(main_go.ok());
    ASSERT_EQ(main_go->outbound.size(), 2u);
    EXPECT_EQ(main_go->outbound[1].spec, "example.com/shop/pkg/cart");
    EXPECT_EQ(main_go->outbound[1].target, "pkg/cart/");
}

TEST_F(CodaliIndex, UpdatesReadOnlyChangedBlobsAndLeaveGitsIndexAlone) {
    const std::string index_before = read_text(repo_ / ".git/index");
    const std::string status_before = sh_ok("git status --porcelain", repo_);
    auto again = index_->update();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->indexed, 0u);
    EXPECT_EQ(again->removed, 0u);

    put(repo_ / "pkg/cart/cart.go",
        "package cart\n\nfunc Total() int { return 0 }\n\nfunc Discount() int { return 1 }\n");
    fs::remove(repo_ / "unrelated.py");
    auto changed = index_->update();
    ASSERT_TRUE(changed.ok());
    EXPECT_EQ(changed->indexed, 1u);
    EXPECT_EQ(changed->removed, 1u);
    auto hits = index_->search("Discount", 5);
    ASSERT_TRUE(hits.ok());
    ASSERT_FALSE(hits->empty());
    EXPECT_EQ((*hits)[0].path, "pkg/cart/cart.go");
    EXPECT_EQ((*hits)[0].line, 5);
    auto gone = index_->search("mentioned never imported", 10);
    ASSERT_TRUE(gone.ok());
    for (const auto& h : *gone) EXPECT_NE(h.path, "unrelated.py");

    // A new index in the same folder (a restarted agent) has nothing to read again.
    index_.reset();
    auto reopened = WorktreeIndex::open(dir_.path() / "index", root_);
    ASSERT_TRUE(reopened.ok());
    auto resumed = (*reopened)->update();
    ASSERT_TRUE(resumed.ok());
    EXPECT_EQ(resumed->indexed, 0u);

    // git's own index and status are as they were, but for the two changes.
    EXPECT_EQ(read_text(repo_ / ".git/index"), index_before);
    EXPECT_NE(sh_ok("git status --porcelain", repo_), status_before);
    EXPECT_EQ(sh_ok("git diff --cached --name-only", repo_), "");
}

TEST_F(CodaliIndex, TheTreeSummarisesBelowItsDepth) {
    const std::string tree = index_->tree(1, 100);
    EXPECT_NE(tree.find("pkg/ (5 files)\n"), std::string::npos) << tree;
    EXPECT_NE(tree.find("go.mod\n"), std::string::npos);
    EXPECT_EQ(tree.find("config.py"), std::string::npos);
    const std::string deeper = index_->tree(2, 100);
    EXPECT_NE(deeper.find("pkg/ (5 files)\n  cart/ (1 file)\n"), std::string::npos) << deeper;
    EXPECT_NE(deeper.find("  config.py\n"), std::string::npos);
    const std::string cut = index_->tree(3, 4);
    EXPECT_NE(cut.find("more lines (ask with a smaller maxDepth)"), std::string::npos) << cut;
}

class CodaliNeeds : public CodaliIndex {
  protected:
    protocol::CodaliResponse answer(const std::string& text, std::size_t budget = 200000) {
        auto request = protocol::parse_agent_request(text);
        EXPECT_TRUE(request.ok()) << request.error().message;
        return agent::answer_request(*request, {root_, index_.get(), budget});
    }
};

TEST_F(CodaliNeeds, EveryNeedIsAnsweredInOneResponse) {
    auto r = answer(R"(AGENT_REQUEST v1
role: architect
request_id: req-1
needs:
  - type: docdex.search
    query: parse_config
    limit: 2
  - type: file.read
    path: pkg/config.py
  - type: file.list
    root: pkg
    pattern: "*.py"
  - type: docdex.open
    path: pkg/app.py
    start_line: 4
    end_line: 5
  - type: docdex.snippet
    doc_id: "pkg/config.py:8"
    window: 1
  - type: docdex.tree
    maxDepth: 1
  - type: docdex.symbols
    file: pkg/config.py
  - type: docdex.impact
    file: pkg/config.py
)");
    EXPECT_EQ(r.request_id, "req-1");
    EXPECT_EQ(r.repo_root, ".");
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
    ASSERT_EQ(r.results.size(), 8u);
    EXPECT_EQ(r.results[0]["hits"].size(), 2u);
    EXPECT_EQ(r.results[0]["hits"][0]["doc_id"], "pkg/config.py:8");
    EXPECT_EQ(r.results[1]["content"], read_text(repo_ / "pkg/config.py"));
    EXPECT_EQ(r.results[2]["files"], nlohmann::ordered_json({"pkg/__init__.py", "pkg/app.py",
                                                             "pkg/cli.py", "pkg/config.py"}));
    EXPECT_EQ(r.results[3]["content"], "def main():\n    a = parse_config('a')\n");
    EXPECT_EQ(r.results[3]["total_lines"], 8);
    EXPECT_EQ(r.results[4]["content"],
              "\ndef parse_config(path):\n    \"\"\"Read the configuration.\"\"\"\n");
    EXPECT_EQ(r.results[4]["start_line"], 7);
    EXPECT_EQ(r.results[5]["files"], index_->files().size());
    EXPECT_EQ(r.results[6]["symbols"][1]["name"], "parse_config");
    EXPECT_EQ(r.results[7]["inbound"].size(), 3u);
    ASSERT_TRUE(r.elapsed_ms.has_value());
}

TEST_F(CodaliNeeds, UnsupportedAndFailingNeedsWarnWhileTheOthersAnswer) {
    put(dir_.path() / "secret.txt", "outside\n");
    auto r = answer(R"(AGENT_REQUEST v1
role: builder
request_id: req-2
needs:
  - type: docdex.web
    query: "how to parse"
  - type: docdex.ast
    file: pkg/app.py
  - type: git.blame
    path: pkg/app.py
  - type: file.read
    path: ../secret.txt
  - type: file.read
    path: .git/config
  - type: file.read
    path: no/such/file.py
  - type: file.read
    path: assets/logo.bin
  - type: docdex.search
  - type: docdex.open
    path: pkg/app.py
    start_line: 99
  - type: file.read
    path: go.mod
)");
    ASSERT_EQ(r.results.size(), 1u);
    EXPECT_EQ(r.results[0]["path"], "go.mod");
    ASSERT_EQ(r.warnings.size(), 9u);
    EXPECT_EQ(r.warnings[0], "unsupported: docdex.web");
    EXPECT_EQ(r.warnings[1], "unsupported: docdex.ast");
    EXPECT_EQ(r.warnings[2], "unsupported: git.blame");
    EXPECT_EQ(
        r.warnings[3].rfind("rejected: ../secret.txt: REJECTED: Path is outside workspace", 0), 0u)
        << r.warnings[3];
    EXPECT_EQ(r.warnings[4].rfind("rejected: .git/config: REJECTED: Path is inside .git", 0), 0u);
    EXPECT_EQ(r.warnings[5], "file_not_found: no/such/file.py");
    EXPECT_EQ(r.warnings[6], "binary_file: assets/logo.bin");
    EXPECT_EQ(r.warnings[7], "docdex.search: missing query");
    EXPECT_EQ(r.warnings[8], "docdex.open: pkg/app.py has 8 lines; line 99 is past its end");
    // The model sees them in the response it gets.
    const std::string text = protocol::render_codali_response(r, protocol::EnvelopeForm::yaml);
    EXPECT_NE(text.find("  - 'unsupported: docdex.web'\n"), std::string::npos) << text;
}

TEST_F(CodaliNeeds, ContentPastTheBudgetIsCutAndTheCutSaid) {
    auto r = answer(
        "AGENT_REQUEST v1\nrole: builder\nrequest_id: b\nneeds:\n  - type: file.read\n"
        "    path: pkg/config.py\n  - type: file.read\n    path: pkg/app.py\n",
        150);
    ASSERT_EQ(r.results.size(), 2u);
    const std::string config = read_text(repo_ / "pkg/config.py");
    const std::string app = read_text(repo_ / "pkg/app.py");
    ASSERT_LT(config.size(), 150u);
    ASSERT_GT(config.size() + app.size(), 150u);
    EXPECT_EQ(r.results[0]["content"], config);  // within the budget
    EXPECT_FALSE(r.results[0].contains("truncated"));
    EXPECT_EQ(r.results[1]["content"].get<std::string>().size(), 150 - config.size());
    EXPECT_EQ(r.results[1]["truncated"], true);
    EXPECT_EQ(r.results[1]["content"], app.substr(0, 150 - config.size()));
    EXPECT_EQ(r.results[1]["total_bytes"], app.size());
    EXPECT_EQ(r.warnings,
              std::vector<std::string>{
                  "truncated: pkg/app.py: " + std::to_string(150 - config.size()) + " of " +
                  std::to_string(app.size()) + " bytes shown (response budget 150 characters)"});
}

TEST_F(CodaliNeeds, AMalformedRequestIsAnsweredWithWhatWasWrong) {
    auto r = agent::malformed_request("AGENT_REQUEST v1\nrole: boss\nrequest_id: q-9\n",
                                      "AGENT_REQUEST: role: expected one of …");
    EXPECT_EQ(r.request_id, "q-9");
    EXPECT_TRUE(r.results.empty());
    EXPECT_EQ(r.warnings, std::vector<std::string>{
                              "malformed_request: AGENT_REQUEST: role: expected one of …"});
}

TEST_F(CodaliIndex, TheCriticJudgesTheWorktreeAsItStandsAndCommitsNothing) {
    sh_ok("git add -A && git commit -q -m notes", repo_);
    const std::string base = sh_ok("git rev-parse HEAD", repo_).substr(0, 40);
    check::CritiqueInput input;
    input.worktree = repo_;
    input.base = base;
    input.marker = "cocode ready for check";
    input.rules.allowed_paths = {"pkg/**"};
    input.rules.verify = {{"cart", "grep -q Discount pkg/cart/cart.go", std::nullopt}};
    input.report_dir = dir_.path() / "critic";
    fs::create_directories(input.report_dir);

    // An edit inside the allowed paths, one outside, neither committed.
    put(repo_ / "pkg/config.py", read_text(repo_ / "pkg/config.py") + "# edited\n");
    put(repo_ / "scratch.txt", "left behind\n");
    auto first = check::critique_worktree(input);
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_FALSE(first->pass);
    EXPECT_EQ(first->touched_files, (std::vector<std::string>{"pkg/config.py", "scratch.txt"}));
    ASSERT_EQ(first->reasons.size(), 1u);  // the tests are not run once the scope failed
    EXPECT_EQ(first->reasons[0], "scope: outside the allowed paths: scratch.txt");
    EXPECT_NE(first->suggested_fixes[0].find("only these paths may change: pkg/**"),
              std::string::npos);

    // Fixed scope, failing tests: the verify output comes back.
    fs::remove(repo_ / "scratch.txt");
    auto second = check::critique_worktree(input);
    ASSERT_TRUE(second.ok());
    EXPECT_FALSE(second->pass);
    ASSERT_EQ(second->reasons.size(), 1u);
    EXPECT_EQ(second->reasons[0].rfind("verify: cart: exit 1", 0), 0u) << second->reasons[0];

    put(repo_ / "pkg/cart/cart.go", "package cart\n\nfunc Discount() int { return 1 }\n");
    input.rules.allowed_paths = {"pkg/**"};
    auto third = check::critique_worktree(input);
    ASSERT_TRUE(third.ok());
    EXPECT_TRUE(third->pass) << (third->reasons.empty() ? "" : third->reasons[0]);

    // Nothing moved: HEAD, the branches, git's index.
    EXPECT_EQ(sh_ok("git rev-parse HEAD", repo_).substr(0, 40), base);
    EXPECT_EQ(sh_ok("git diff --cached --name-only", repo_), "");
    EXPECT_EQ(sh_ok("git for-each-ref --format='%(refname)'", repo_), "refs/heads/main\n");
}

}  // namespace
}  // namespace cocode::test
