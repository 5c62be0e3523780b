// What a Node.js CLI needs of the Node.js that runs it, and doctor's sentence about it: the
// engines ranges npm packages write, as tables of cases, and a package laid out as npm lays it
// out (a link in node_modules/.bin to a script whose first line names node).
#include "agent/cli_runtime.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace cocode::agent {
namespace {

namespace fs = std::filesystem;

struct RangeCase {
    const char* range;
    const char* version;
    std::optional<bool> holds;
};

TEST(CliRuntime, EnginesRangesAsNpmReadsThem) {
    const RangeCase cases[] = {
        {">=20", "18.20.4", false},  // Debian 12's node and Gemini CLI 0.61
        {">=20", "20.0.0", true},
        {">=20", "v22.23.3", true},  // as `node --version` prints it
        {">=20.0.0", "20.20.2", true},
        {">=22.0.0", "20.20.2", false},  // claude's package (a native binary all the same)
        {">=16", "18.20.4", true},       // codex
        {">=18.17.0", "18.16.9", false},
        {">=18.17.0", "18.17.0", true},
        {">= 20", "19.9.9", false},  // an operator apart from its version
        {"^20.17.0 || >=22.9.0", "20.16.0", false},
        {"^20.17.0 || >=22.9.0", "20.18.1", true},
        {"^20.17.0 || >=22.9.0", "22.8.0", false},
        {"^20.17.0 || >=22.9.0", "22.9.0", true},
        {"^20.17.0 || >=22.9.0", "21.0.0", false},
        {"^0.2.3", "0.2.9", true},
        {"^0.2.3", "0.3.0", false},
        {"~20.1", "20.1.7", true},
        {"~20.1", "20.2.0", false},
        {"20.x", "20.9.0", true},
        {"20", "21.0.0", false},
        {">=18 <21", "20.1.0", true},
        {">=18 <21", "22.0.0", false},
        {">18", "18.99.0", false},  // > a partial version: above all it covers
        {">18", "19.0.0", true},
        {"<=20", "20.9.9", true},
        {"18 - 20", "20.5.0", true},
        {"18 - 20", "21.0.0", false},
        {"18.0.0 - 20.1.0", "20.1.1", false},
        {"*", "4.0.0", true},
        {"", "4.0.0", true},
        {">=20.0.0-rc.1", "20.0.0", true},  // prerelease tags are not compared
        {">=banana", "20.0.0", std::nullopt},
        {">=20", "not a version", std::nullopt},
    };
    for (const auto& c : cases)
        EXPECT_EQ(satisfies(c.range, c.version), c.holds) << c.range << " / " << c.version;
}

TEST(CliRuntime, RangesAsAPersonReadsThem) {
    const std::pair<const char*, const char*> cases[] = {
        {">=20", "≥ 20"},         {">=20.0.0", "≥ 20"},
        {">=18.17.0", "≥ 18.17"}, {">=18.17.1", "≥ 18.17.1"},
        {" >=20 ", "≥ 20"},       {"^20.17.0 || >=22.9.0", "^20.17.0 || >=22.9.0"},
        {">=18 <21", ">=18 <21"},
    };
    for (const auto& [range, shown] : cases) EXPECT_EQ(describe_range(range), shown) << range;
}

TEST(CliRuntime, TheVerdictNamesWhatItNeedsAndWhatItFound) {
    const NodeNeed gemini{"@google/gemini-cli", "0.61.0", ">=20", "node"};
    struct Case {
        std::optional<fs::path> node;
        const char* version_output;
        bool met;
        const char* detail;
    };
    const Case cases[] = {
        {fs::path("/usr/bin/node"), "v18.20.4\n", false,
         "gemini 0.61.0 needs Node.js ≥ 20; /usr/bin/node is 18.20.4"},
        {fs::path("/usr/bin/node"), "v20.20.2\n", true,
         "Node.js 20.20.2 (/usr/bin/node); gemini 0.61.0 needs ≥ 20"},
        {std::nullopt, "", false, "gemini 0.61.0 needs Node.js ≥ 20; node is not on PATH"},
        {fs::path("/usr/bin/node"), "", false,
         "gemini 0.61.0 needs Node.js ≥ 20; /usr/bin/node --version failed"},
    };
    for (const auto& c : cases) {
        auto verdict = judge_node_runtime(gemini, "gemini", c.node, c.version_output);
        EXPECT_EQ(verdict.met, c.met) << c.detail;
        EXPECT_EQ(verdict.detail, c.detail);
    }
    const NodeNeed absolute{"tool", "", ">=20", "/opt/node/bin/node"};
    EXPECT_EQ(judge_node_runtime(absolute, "tool", std::nullopt, "").detail,
              "tool needs Node.js ≥ 20; /opt/node/bin/node does not exist");
    // A range cocode cannot read does not stop an agent: the CLI will say for itself.
    const NodeNeed odd{"odd", "1.0.0", ">=banana", "node"};
    EXPECT_TRUE(judge_node_runtime(odd, "odd", fs::path("/usr/bin/node"), "v20.0.0").met);
}

TEST(CliRuntime, ANodeScriptIsFoundThroughNpmsLinkAndItsPackage) {
    test::TempDir dir;
    const fs::path package = dir.path() / "node_modules/@google/gemini-cli";
    fs::create_directories(package / "bundle");
    fs::create_directories(dir.path() / "node_modules/.bin");
    test::write_text(package / "package.json",
                     R"({"name": "@google/gemini-cli", "version": "0.61.0",
                         "engines": {"node": ">=20"}})");
    test::write_text(package / "bundle/gemini.js", "#!/usr/bin/env node\nconsole.log(1)\n");
    fs::create_symlink("../@google/gemini-cli/bundle/gemini.js",
                       dir.path() / "node_modules/.bin/gemini");
    auto need = node_need_of(dir.path() / "node_modules/.bin/gemini");
    ASSERT_TRUE(need);
    EXPECT_EQ(need->package, "@google/gemini-cli");
    EXPECT_EQ(need->package_version, "0.61.0");
    EXPECT_EQ(need->range, ">=20");
    EXPECT_EQ(need->interpreter, "node");

    // `env -S` with flags, and an absolute interpreter.
    test::write_text(package / "bundle/gemini.js", "#!/usr/bin/env -S node --no-warnings\n");
    EXPECT_EQ(node_need_of(package / "bundle/gemini.js")->interpreter, "node");
    test::write_text(package / "bundle/gemini.js", "#!/opt/node/bin/node\n");
    EXPECT_EQ(node_need_of(package / "bundle/gemini.js")->interpreter, "/opt/node/bin/node");

    // Nothing to check: a shell script, a package without engines, a binary, no file at all.
    test::write_text(package / "bundle/gemini.js", "#!/bin/sh\nexec node \"$0\"\n");
    EXPECT_FALSE(node_need_of(package / "bundle/gemini.js"));
    test::write_text(package / "bundle/gemini.js", "#!/usr/bin/env node\n");
    test::write_text(package / "package.json", R"({"name": "@google/gemini-cli"})");
    EXPECT_FALSE(node_need_of(package / "bundle/gemini.js"));
    test::write_text(package / "bundle/gemini.js", std::string("\x7f"
                                                               "ELF\x02\x01\x01",
                                                               7));
    EXPECT_FALSE(node_need_of(package / "bundle/gemini.js"));
    EXPECT_FALSE(node_need_of(dir.path() / "no-such-program"));
}

TEST(CliRuntime, FlagsACliDoesNotList) {
    const std::string help =
        "Usage: gemini [options]\n  -y, --yolo  accept all\n  --output-format <f>\n"
        "  --skip-trust-folders  a longer flag\n";
    struct Case {
        std::vector<std::string> argv;
        std::vector<std::string> unknown;
    };
    const Case cases[] = {
        {{"gemini", "--yolo", "--output-format", "stream-json"}, {}},
        {{"gemini", "-y"}, {}},
        {{"gemini", "--output-format=json"}, {}},                      // the value is not the flag
        {{"gemini", "--skip-trust"}, {"--skip-trust"}},                // only inside a longer flag
        {{"gemini", "--no-such-flag", "-", "x"}, {"--no-such-flag"}},  // "-" and words: not flags
        {{"--yolo-not-a-flag"}, {}},                                   // argv[0] is the program
    };
    for (const auto& c : cases) EXPECT_EQ(unlisted_flags(c.argv, help), c.unknown);
}

}  // namespace
}  // namespace cocode::agent
