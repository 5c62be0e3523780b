// .cocode/config.json: defaults, presets, durations, and errors that name the field.
#include "config/config.h"

#include <gtest/gtest.h>

namespace cocode::config {
namespace {

using namespace std::chrono_literals;

Result<Config> parse(const std::string& text) {
    return parse_config(text, ".cocode/config.json", "/repo");
}

TEST(Config, DefaultsAreTheIssuesOnes) {
    auto config = parse("{}");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(config->concurrency, 5);
    EXPECT_EQ(config->timeout, Duration(30min));
    EXPECT_EQ(config->grace, Duration(5s));
    EXPECT_EQ(config->ready_marker, "cocode ready for check");
    EXPECT_EQ(config->worktree_root, ".cocode/worktrees");
    EXPECT_EQ(config->branch_prefix, "cocode/");
    EXPECT_FALSE(config->base_branch.has_value());
}

TEST(Config, PresetsTakeThePromptOnStdinAndOnlyTheirOwnToken) {
    auto config = parse(R"({"agents": {"c": {"type": "claude"}, "x": {"type": "codex"},
                                       "g": {"type": "gemini", "command": "/opt/gemini"}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    // Agents keep the order they were written in.
    EXPECT_EQ(config->agents[0].name, "c");
    EXPECT_EQ(config->agents[0].argv.front(), "claude");
    EXPECT_EQ(config->agents[0].token_env, "ANTHROPIC_API_KEY");
    EXPECT_EQ(config->agents[0].stdin_from, Stdin::prompt);
    EXPECT_EQ(config->agents[1].token_env, "OPENAI_API_KEY");
    EXPECT_EQ(config->agents[1].argv.back(), "-");
    // A preset's program replaced, its arguments kept.
    EXPECT_EQ(config->agents[2].argv, (std::vector<std::string>{"/opt/gemini", "--yolo"}));
    EXPECT_EQ(config->agents[2].token_env, "GEMINI_API_KEY");
}

TEST(Config, CommandAgentsResolveRelativeScriptsAgainstTheRepository) {
    auto config = parse(R"({"agents": {"a": {"command": "scripts/agent.sh", "args": ["--x"],
                                             "timeout": "10m", "idle_timeout": 90, "restarts": 2}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    const auto& a = config->agents.front();
    EXPECT_EQ(a.argv, (std::vector<std::string>{"/repo/scripts/agent.sh", "--x"}));
    EXPECT_EQ(a.timeout, Duration(10min));
    EXPECT_EQ(a.idle_timeout, Duration(90s));
    EXPECT_EQ(a.restarts, 2);
    EXPECT_FALSE(a.token_env.has_value());
    EXPECT_EQ(a.stdin_from, Stdin::null);
}

TEST(Config, ErrorsNameTheFieldAndWhatWasExpected) {
    auto message = [](const std::string& text) {
        auto config = parse(text);
        EXPECT_FALSE(config.ok()) << text;
        EXPECT_EQ(config.ok() ? ExitCode::ok : config.error().code, ExitCode::usage);
        return config.ok() ? std::string() : config.error().message;
    };
    EXPECT_EQ(message(R"({"timout": "5m"})"),
              ".cocode/config.json: unknown field 'timout' (did you mean 'timeout'?)");
    EXPECT_EQ(message(R"({"agents": {"a": {"comand": "x"}}})"),
              ".cocode/config.json: unknown field 'agents.a.comand' (did you mean 'command'?)");
    EXPECT_EQ(message(R"({"zebra": 1})"), ".cocode/config.json: unknown field 'zebra'");
    EXPECT_EQ(message(R"({"concurrency": 0})"),
              ".cocode/config.json: field 'concurrency': expected a whole number from 1 to 64");
    EXPECT_EQ(message(R"({"agents": {"a": {"type": "gpt"}}})"),
              ".cocode/config.json: field 'agents.a.type': expected one of command, claude, codex, "
              "gemini");
    EXPECT_EQ(message(R"({"agents": {"a": {}}})"),
              ".cocode/config.json: field 'agents.a.command': expected the program to run (type "
              "command has no default)");
    EXPECT_NE(message(R"({"agents": {"a b": {"command": "x"}}})").find("field 'agents.a b'"),
              std::string::npos);
    EXPECT_EQ(message(R"({"default_agents": ["nobody"]})"),
              ".cocode/config.json: field 'default_agents': expected names of agents defined in "
              "agents ('nobody' is not)");
    EXPECT_EQ(message("{\n  \"concurrency\": 5,\n  oops\n}"),
              ".cocode/config.json:3: not valid JSON (expected a JSON object, see "
              "docs/configuration.md)");
    EXPECT_EQ(
        message(R"({"agents": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]})"),
        ".cocode/config.json: field 'agents[1].name': expected a name used only once");
}

TEST(Config, CocodePyShapeIsAListOfAgents) {
    auto config =
        parse(R"({"agents": [{"name": "fixer", "command": "python3", "args": ["fix.py"]}]})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_EQ(config->agents.size(), 1u);
    EXPECT_EQ(config->agents[0].name, "fixer");
    EXPECT_EQ(config->agents[0].type, AgentType::command);
    EXPECT_EQ(config->agents[0].argv, (std::vector<std::string>{"python3", "fix.py"}));
}

TEST(Duration, ParsesWhatPeopleWrite) {
    EXPECT_EQ(*parse_duration("90"), Duration(90s));
    EXPECT_EQ(*parse_duration("250ms"), Duration(250ms));
    EXPECT_EQ(*parse_duration("1h30m"), Duration(90min));
    EXPECT_EQ(format_duration(Duration(90min)), "1h30m");
    EXPECT_EQ(format_duration(Duration(5s)), "5s");
    EXPECT_EQ(format_duration(Duration(250ms)), "250ms");
    for (const char* bad : {"", "soon", "5x", "m", "0", "-1s", "1.5m"})
        EXPECT_FALSE(parse_duration(bad).ok()) << bad;
}

}  // namespace
}  // namespace cocode::config
