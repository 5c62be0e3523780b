// docs/config.schema.json against the configuration reader: every configuration the docs
// show passes both, and on a set of documents right and wrong the schema (ajv, from the test
// peers) and the reader give the same answer, so an editor validating as you type tells the
// truth about what cocode will do.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSchema = std::string(COCODE_SOURCE_DIR) + "/docs/config.schema.json";

// ajv's answer for each file: "valid" or its errors.
std::map<std::string, std::string> schema_says(const std::vector<fs::path>& files,
                                               const fs::path& cwd) {
    std::string args;
    for (const auto& f : files) args += " " + quote(f.string());
    Shell shell = sh("COCODE_PEERS_DIR=" + quote(COCODE_PEERS_DIR) + " node " +
                         quote(std::string(COCODE_SOURCE_DIR) + "/tests/e2e/validate_json.mjs") +
                         " " + quote(kSchema) + args,
                     cwd);
    std::map<std::string, std::string> out;
    std::istringstream lines(shell.out);
    for (std::string line; std::getline(lines, line);) {
        const std::size_t colon = line.find(": ");
        if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 2);
    }
    EXPECT_EQ(out.size(), files.size()) << shell.out << shell.err;
    return out;
}

// The ```json blocks of a document that are configurations: objects whose keys are all
// configuration keys (other blocks show run output, verdicts, events).
std::vector<std::string> config_blocks(const fs::path& markdown) {
    const std::set<std::string> keys = [] {
        std::set<std::string> out;
        const json schema = json::parse(read_text(kSchema));  // outlives the loop below
        for (const auto& [key, _] : schema["properties"].items()) out.insert(key);
        return out;
    }();
    std::vector<std::string> out;
    const std::string text = read_text(markdown);
    for (std::size_t at = text.find("```json\n"); at != std::string::npos;
         at = text.find("```json\n", at + 1)) {
        const std::size_t start = at + 8, end = text.find("```", start);
        const std::string block = text.substr(start, end - start);
        auto parsed = json::parse(block, nullptr, false);
        if (!parsed.is_object() || parsed.empty()) continue;
        bool config = true;
        for (const auto& [key, _] : parsed.items()) config = config && keys.count(key);
        if (config) out.push_back(block);
    }
    return out;
}

TEST(ConfigSchema, EveryConfigurationTheDocsShowIsValidToBoth) {
    TempDir dir;
    std::vector<fs::path> files;
    for (const char* doc : {"README.md", "docs/configuration.md", "docs/check.md"}) {
        const auto blocks = config_blocks(fs::path(COCODE_SOURCE_DIR) / doc);
        for (std::size_t i = 0; i < blocks.size(); ++i) {
            std::string name = std::string(doc) + "-" + std::to_string(i) + ".json";
            for (char& c : name)
                if (c == '/') c = '_';
            files.push_back(dir / name);
            write_text(files.back(), blocks[i]);
            auto loaded = config::parse_config(blocks[i], name, dir.path());
            EXPECT_TRUE(loaded.ok()) << doc << ":\n"
                                     << blocks[i] << (loaded ? "" : loaded.error().message);
        }
    }
    ASSERT_GE(files.size(), 3u);  // the README's, configuration.md's whole example, check.md's
    for (const auto& [file, answer] : schema_says(files, dir.path()))
        EXPECT_EQ(answer, "valid") << file << ":\n" << read_text(file);
}

TEST(ConfigSchema, TheSchemaAndTheReaderAgree) {
    const std::vector<std::pair<const char*, bool>> documents = {
        {R"({})", true},
        {R"({"$schema": "../docs/config.schema.json", "concurrency": 64})", true},
        {R"({"timeout": "1h30m", "grace": 5, "ready_quiet": "250ms"})", true},
        {R"({"output_cap": "512MiB", "sandbox": "none"})", true},
        {R"({"agents": {"claude": {"type": "claude", "model": "opus", "timeout": "45m"}}})", true},
        {R"({"agents": {"fixer": {"command": "a.sh", "env": {"MODE": "1", "KEY": true}}}})", true},
        {R"({"agents": [{"name": "py", "command": "agent.py", "args": ["--fast"]}]})", true},
        {R"({"check": {"verify": ["make test", {"name": "lint", "run": "make lint",
            "timeout": "5m"}], "allowed_paths": ["src/**", "*.md"]}})",
         true},
        {R"({"publish": {"after_run": true, "pull_request": false}})", true},
        {R"({"trigger": {"label": "agents", "command": "/agents",
            "allowed_bots": ["renovate[bot]"]}})",
         true},
        {R"({"agents": {"tp": {"type": "textproto", "model": "gpt-4o", "max_turns": 20,
            "token_budget": 500000, "command_timeout": "45s", "stream": true}}})",
         true},
        {R"({"agents": {"local": {"type": "textproto", "provider": "openai-compatible",
            "base_url": "http://127.0.0.1:8080/v1", "model": "qwen"}}})",
         true},
        {R"({"agents": {"paste": {"type": "textproto", "transport": "file"}}})", true},
        {R"({"agents": {"p": {"type": "perplexity"}, "x": {"type": "xai", "protocol": "textproto",
            "key_env": "MY_XAI_KEY"}}})",
         true},
        {R"({"agents": {"cd": {"type": "codali", "model": "gpt-4o", "context_window": 32000,
            "summary_model": "gpt-4o-mini", "critic_rounds": 2, "max_turns": 40}}})",
         true},
        {R"({"agents": {"cd": {"type": "codali", "provider": "openai-compatible",
            "base_url": "http://127.0.0.1:8080/v1", "model": "qwen", "critic_rounds": 0}}})",
         true},
        {R"({"agents": {"cd": {"type": "codali", "transport": "file"}}})", false},
        {R"({"agents": {"cd": {"type": "codali", "protocol": "textproto"}}})", false},
        {R"({"agents": {"cd": {"type": "codali", "context_window": 500}}})", false},
        {R"({"agents": {"cd": {"type": "codali", "critic_rounds": -1}}})", false},
        {R"({"agents": {"cd": {"type": "codali", "summary_model": ""}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "critic_rounds": 2}}})", false},
        {R"({"agents": {"x": {"type": "xai", "protocol": "codali"}}})", false},
        {R"({"agents": {"c": {"command": "a.sh", "context_window": 8000}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "command": "x"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "stdin": "prompt"}}})", false},
        {R"({"agents": {"c": {"command": "a.sh", "max_turns": 3}}})", false},
        {R"({"agents": {"c": {"type": "claude", "provider": "openai"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "provider": "acme"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "provider": "openai-compatible"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "protocol": "chat"}}})", false},
        {R"({"agents": {"p": {"type": "perplexity", "transport": "file"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "key_env": "GITHUB_TOKEN"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "key_env": "sk-abc def"}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "max_turns": 0}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "token_budget": 0}}})", false},
        {R"({"agents": {"tp": {"type": "textproto", "stream": "yes"}}})", false},
        {R"({"concurrency": 0})", false},
        {R"({"concurency": 5})", false},
        {R"({"timeout": "5 minutes"})", false},
        {R"({"timeout": 0})", false},
        {R"({"sandbox": "maybe"})", false},
        {R"({"output_cap": "1TB"})", false},
        {R"({"output_cap": 0})", false},
        {R"({"$schema": 1})", false},
        {R"({"agents": {"x": {}}})", false},
        {R"({"agents": {"x": {"command": "a", "model": "m"}}})", false},
        {R"({"agents": {"bad..name": {"type": "claude"}}})", false},
        {R"({"agents": {"x": {"type": "claude", "env": ["GITHUB_TOKEN"]}}})", false},
        {R"({"agents": {"x": {"type": "claude", "env": ["COCODE_MARKER"]}}})", false},
        {R"({"agents": {"x": {"type": "claude", "restarts": 101}}})", false},
        {R"({"agents": {"x": {"type": "claude", "base_url": "ftp://x"}}})", false},
        // A type is a preset's name; the schema cannot see .cocode/presets/, so only a name no
        // preset could have is refused by both.
        {R"({"agents": {"x": {"type": "Robot!"}}})", false},
        {R"({"agents": {"x": {"type": "droid"}}})", true},
        {R"({"agents": [{"command": "nameless"}]})", false},
        {R"({"check": {"allowed_paths": ["src/***"]}})", false},
        {R"({"check": {"allowed_paths": ["../outside"]}})", false},
        {R"({"check": {"verify": [{"name": "no command"}]}})", false},
        {R"({"publish": {"push": "yes"}})", false},
        {R"({"trigger": {"command": "cocode"}})", false},
        {R"({"trigger": {"command": "/co code"}})", false},
        {R"({"trigger": {"label": ""}})", false},
        {R"({"trigger": {"allowed_bots": "renovate[bot]"}})", false},
        {R"({"trigger": {"users": []}})", false},
        {R"({"worktree_setup": {"copy": ["../secret"]}})", false},
        {R"({"environment": {"setup": ["npm ci"], "paths": ["node_modules"], "env": {"PATH": "${tree}/.venv/bin:${env:PATH}"}, "key_commands": ["node --version"], "timeout": "30m"}})",
         true},
        {R"({"environment": {"setup": []}})", false},
        {R"({"environment": {"paths": ["node_modules"]}})", false},
        {R"({"environment": {"setup": ["npm ci"], "paths": ["../out"]}})", false},
        {R"({"environment": {"setup": ["npm ci"], "env": {"1BAD": "x"}}})", false},
        {R"({"environment": {"setup": ["npm ci"], "timeout": "soon"}})", false},
        {R"({"environment": {"setup": ["npm ci"], "cache": true}})", false},
    };
    TempDir dir;
    std::vector<fs::path> files;
    for (std::size_t i = 0; i < documents.size(); ++i) {
        files.push_back(dir / ("doc-" + std::to_string(i) + ".json"));
        write_text(files.back(), documents[i].first);
    }
    auto answers = schema_says(files, dir.path());
    for (std::size_t i = 0; i < documents.size(); ++i) {
        const auto& [text, valid] = documents[i];
        auto loaded = config::parse_config(text, "config.json", dir.path());
        EXPECT_EQ(loaded.ok(), valid) << text << (loaded ? "" : "\n" + loaded.error().message);
        if (!loaded) {
            EXPECT_EQ(loaded.error().code, ExitCode::usage) << text;  // exit 2
        }
        EXPECT_EQ(answers[files[i].string()] == "valid", valid)
            << text << "\nschema: " << answers[files[i].string()];
    }
}

}  // namespace
}  // namespace cocode::test
