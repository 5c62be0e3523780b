// .cocode/config.json: defaults, presets, durations, and errors that name the field.
#include "config/config.h"

#include <gtest/gtest.h>

#include "config/presets.h"
#include "test_support.h"

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
    EXPECT_EQ(config->agents[2].argv,
              (std::vector<std::string>{"/opt/gemini", "--yolo", "--skip-trust", "--output-format",
                                        "stream-json"}));
    EXPECT_EQ(config->agents[2].token_env, "GEMINI_API_KEY");
}

TEST(Config, PresetsRunTodaysClisUnattendedWithStreamingOutput) {
    auto config = parse(R"({"agents": {"c": {"type": "claude"}, "x": {"type": "codex"},
                                       "g": {"type": "gemini"}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->agents[0].argv,
              (std::vector<std::string>{"claude", "-p", "--permission-mode", "bypassPermissions",
                                        "--output-format", "stream-json", "--verbose"}));
    EXPECT_EQ(config->agents[1].argv,
              (std::vector<std::string>{
                  "codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "--json", "-"}));
    EXPECT_EQ(config->agents[2].argv, (std::vector<std::string>{"gemini", "--yolo", "--skip-trust",
                                                                "--output-format", "stream-json"}));
}

TEST(Config, BaseUrlModelAndEnvValuesAreReadPerAgent) {
    auto config = parse(R"({"agents": {
        "c": {"type": "claude", "base_url": "https://gateway.example/anthropic", "model": "m1",
              "env": {"IS_SANDBOX": "0", "CLAUDE_EXTRA": true}},
        "x": {"type": "codex", "env": ["CODEX_FLAVOUR"]}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    const auto& c = config->agents[0];
    EXPECT_EQ(c.base_url, "https://gateway.example/anthropic");
    EXPECT_EQ(c.model, "m1");
    EXPECT_EQ(c.env_values, (std::map<std::string, std::string>{{"IS_SANDBOX", "0"}}));
    EXPECT_EQ(c.env, (std::vector<std::string>{"CLAUDE_EXTRA"}));
    EXPECT_EQ(config->agents[1].env, (std::vector<std::string>{"CODEX_FLAVOUR"}));
    EXPECT_FALSE(config->agents[1].base_url.has_value());
}

// The agent's network (docs/security.md): every entry is checked where it is written.
TEST(Config, NetworkEntriesAreCheckedWhereTheyAreWritten) {
    auto message = [](const std::string& text) {
        auto config = parse(text);
        EXPECT_FALSE(config.ok()) << text;
        return config.ok() ? std::string() : config.error().message;
    };
    EXPECT_EQ(message(R"({"network": {"mode": "closed"}})"),
              ".cocode/config.json: field 'network.mode': expected \"allowlist\", \"audit\" or "
              "\"open\"");
    EXPECT_EQ(message(R"({"network": {"allow": ["ok.example", "http://x.example"]}})"),
              ".cocode/config.json: network.allow[1]: expected a host, host:port, *.domain or one "
              "of npm, pypi, crates, go, debian, ubuntu, maven, rubygems, github; got "
              "'http://x.example'");
    EXPECT_EQ(message(R"({"network": {"allow": ["*.com"]}})"),
              ".cocode/config.json: network.allow[0]: a wildcard needs a domain with a dot "
              "(*.example.com); got '*.com'");
    EXPECT_EQ(message(R"({"network": {"on_blocked": "stop"}})"),
              ".cocode/config.json: field 'network.on_blocked': expected \"warn\" or \"fail\"");
    EXPECT_EQ(
        message(R"({"agents": {"c": {"type": "claude", "network_allow": ["a.example:99999"]}}})"),
        ".cocode/config.json: agents.c.network_allow[0]: expected a host, host:port, "
        "*.domain or one of npm, pypi, crates, go, debian, ubuntu, maven, rubygems, github; "
        "got 'a.example:99999'");
    auto config = parse(
        R"({"network": {"mode": "audit", "allow": ["npm", "[::1]:8080"], "on_blocked": "fail"},
            "agents": {"c": {"type": "claude", "network_allow": ["*.corp.example"]}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->network.mode, NetworkMode::audit);
    EXPECT_TRUE(config->network.fail_on_blocked);
    EXPECT_EQ(config->network.allow, (std::vector<std::string>{"npm", "[::1]:8080"}));
    EXPECT_EQ(config->agents[0].network_allow, std::vector<std::string>{"*.corp.example"});
    EXPECT_FALSE(parse("{}")->network.mode) << "unset: allowlist where the sandbox can";
}

TEST(Config, PlansAndTheGateAreCheckedWhereTheyAreWritten) {
    auto message = [](const std::string& text) {
        auto config = parse(text);
        EXPECT_FALSE(config.ok()) << text;
        return config.ok() ? std::string() : config.error().message;
    };
    EXPECT_EQ(message(R"({"trigger": {"plan": "yes"}})"),
              ".cocode/config.json: field 'trigger.plan': expected true or false");
    EXPECT_EQ(message(R"({"plan": {"bind_verify": "make test"}})")
                  .rfind(".cocode/config.json: field 'plan.bind_verify': expected ", 0),
              0u);
    EXPECT_EQ(message(R"({"plan": {"bind_verify": ["make test", " "]}})"),
              ".cocode/config.json: field 'plan.bind_verify': expected command prefixes, none of "
              "them blank");
    EXPECT_EQ(message(R"({"plan": {"verify": []}})").rfind(".cocode/config.json: ", 0), 0u);
    EXPECT_EQ(message(R"({"gate": {"approvals": 21}})"),
              ".cocode/config.json: field 'gate.approvals': expected a whole number from 0 to 20");
    auto config = parse(R"({"trigger": {"plan": true}, "plan": {"bind_verify": ["make test"]},
                            "gate": {"approvals": 2}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_TRUE(config->trigger.plan);
    EXPECT_EQ(config->plan.bind_verify, std::vector<std::string>{"make test"});
    EXPECT_EQ(config->gate.approvals, 2);
    auto defaults = parse("{}");
    EXPECT_FALSE(defaults->trigger.plan);
    EXPECT_FALSE(defaults->plan.bind_verify);  // unset: the configured verify commands
    EXPECT_EQ(defaults->gate.approvals, 0);
}

TEST(Config, AgentEnvAndEndpointsAreCheckedBeforeAnythingRuns) {
    auto message = [](const std::string& text) {
        auto config = parse(text);
        EXPECT_FALSE(config.ok()) << text;
        EXPECT_EQ(config.ok() ? ExitCode::ok : config.error().code, ExitCode::usage);
        return config.ok() ? std::string() : config.error().message;
    };
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "env": ["GITHUB_TOKEN"]}}})"),
              ".cocode/config.json: field 'agents.c.env[0]': expected no GitHub credential: "
              "GITHUB_TOKEN never reaches an agent");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "env": {"GH_TOKEN": true}}}})"),
              ".cocode/config.json: field 'agents.c.env.GH_TOKEN': expected no GitHub "
              "credential: GH_TOKEN never reaches an agent");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "env": {"A": 1}}}})"),
              ".cocode/config.json: field 'agents.c.env.A': expected a string (the value for this "
              "agent) or true (passed through)");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "env": ["A=B"]}}})"),
              ".cocode/config.json: field 'agents.c.env[0]': expected environment variable names "
              "(letters, digits and '_')");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "env": {"JRUN_ID": "x"}}}})"),
              ".cocode/config.json: field 'agents.c.env.JRUN_ID': expected no JRUN_ID: COCODE_* "
              "and JRUN_* are set by cocode for each run");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "claude", "base_url": "gateway.example"}}})"),
              ".cocode/config.json: field 'agents.c.base_url': expected an http:// or https:// URL "
              "such as https://gateway.example/v1");
    EXPECT_EQ(message(R"({"agents": {"a": {"command": "x", "base_url": "http://h"}}})"),
              ".cocode/config.json: field 'agents.a.base_url': expected nothing here: base_url is "
              "for the presets and built-in agents (a command agent gets its own through "
              "env)");
    EXPECT_EQ(message(R"({"agents": {"c": {"type": "codex", "model": "a b"}}})"),
              ".cocode/config.json: field 'agents.c.model': expected a model name without spaces "
              "or quotes");
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
              ".cocode/config.json: field 'agents.a.type': expected one of command, textproto, "
              "perplexity, xai, codali, claude, codex, gemini, copilot, opencode, qwen, pi, cline, "
              "kilo, droid (a preset of your own: .cocode/presets/NAME.json)");
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

TEST(Config, PathsStayWhereTheyBelongAndNamesAreOnesGitTakes) {
    auto message = [](const std::string& text) {
        auto config = parse(text);
        EXPECT_FALSE(config.ok()) << text;
        EXPECT_EQ(config.ok() ? ExitCode::ok : config.error().code, ExitCode::usage);
        return config.ok() ? std::string() : config.error().message;
    };
    const std::string root_expected =
        ".cocode/config.json: field 'worktree_root': expected a folder inside the repository "
        "(such as .cocode/worktrees), or an absolute path outside the system's folders";
    EXPECT_EQ(message(R"({"worktree_root": "/etc"})"), root_expected);
    EXPECT_EQ(message(R"({"worktree_root": "/usr/local/wt"})"), root_expected);
    EXPECT_EQ(message(R"({"worktree_root": "../elsewhere"})"), root_expected);
    EXPECT_EQ(message(R"({"worktree_root": "."})"), root_expected);
    EXPECT_TRUE(parse(R"({"worktree_root": "/srv/cocode-worktrees"})").ok());
    EXPECT_EQ(message(R"({"branch_prefix": "co code/"})"),
              ".cocode/config.json: field 'branch_prefix': expected the start of a git branch "
              "name such as cocode/ (not the character ' ')");
    EXPECT_EQ(message(R"({"branch_prefix": "a..b/"})"),
              ".cocode/config.json: field 'branch_prefix': expected the start of a git branch "
              "name such as cocode/ (not '..')");
    EXPECT_NE(message(R"({"agents": {"x.lock": {"command": "x"}}})").find("field 'agents.x.lock'"),
              std::string::npos);
    EXPECT_EQ(message(R"({"check": {"allowed_paths": ["src/**", "docs/[a"]}})"),
              ".cocode/config.json: field 'check.allowed_paths[1]': expected a path glob such as "
              "src/** or *.lock (not a '[' without its ']')");
    EXPECT_EQ(message(R"({"check": {"read_only_paths": ["a/**b"]}})"),
              ".cocode/config.json: field 'check.read_only_paths[0]': expected a path glob such "
              "as src/** or *.lock (not `**` inside a segment (write it as a whole segment: "
              "src/**/test_*))");
    EXPECT_EQ(message(R"({"check": {"allowed_paths": ["../x"]}})"),
              ".cocode/config.json: field 'check.allowed_paths[0]': expected a path glob such as "
              "src/** or *.lock (not a '..' segment (patterns are relative to the repository))");
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

TEST(Presets, BaseUrlAndModelReachEachCliItsOwnWay) {
    auto config = parse(R"({"agents": {
        "c": {"type": "claude", "base_url": "http://127.0.0.1:9/a", "model": "m"},
        "x": {"type": "codex", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "g": {"type": "gemini", "base_url": "http://127.0.0.1:9", "model": "m"}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    using Env = std::vector<std::pair<std::string, std::string>>;
    auto claude = launch_adjustments(config->agents[0], "/runs/r", false);
    EXPECT_EQ(claude.env,
              (Env{{"ANTHROPIC_BASE_URL", "http://127.0.0.1:9/a"}, {"ANTHROPIC_MODEL", "m"}}));
    EXPECT_TRUE(claude.args_after_program.empty());
    // As root claude needs IS_SANDBOX=1, unless the configuration says otherwise.
    auto as_root = launch_adjustments(config->agents[0], "/runs/r", true);
    EXPECT_EQ(as_root.env.back(), (std::pair<std::string, std::string>{"IS_SANDBOX", "1"}));
    auto told = config->agents[0];
    told.env_values["IS_SANDBOX"] = "0";
    EXPECT_EQ(launch_adjustments(told, "/runs/r", true).env.size(), 2u);

    auto codex = launch_adjustments(config->agents[1], "/runs/r", true);
    EXPECT_EQ(codex.args_after_program,
              (std::vector<std::string>{"-c", "openai_base_url=\"http://127.0.0.1:9/v1\"", "-c",
                                        "model=\"m\""}));
    EXPECT_TRUE(codex.env.empty());

    auto gemini = launch_adjustments(config->agents[2], "/runs/r", false);
    EXPECT_EQ(gemini.env, (Env{{"GEMINI_MODEL", "m"},
                               {"GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9"},
                               {"GEMINI_CLI_HOME", "/runs/r/gemini-home"}}));
    ASSERT_EQ(gemini.files.size(), 1u);
    EXPECT_EQ(gemini.files[0].first, "/runs/r/gemini-home/.gemini/settings.json");
    EXPECT_NE(gemini.files[0].second.find("\"selectedType\": \"gemini-api-key\""),
              std::string::npos);
}

std::optional<std::string> no_env(const char*) { return std::nullopt; }
std::optional<std::string> bedrock_env(const char* name) {
    if (std::string_view(name) == "CLAUDE_CODE_USE_BEDROCK") return "1";
    if (std::string_view(name) == "ANTHROPIC_BASE_URL") return "https://from-env.example";
    return std::nullopt;
}

TEST(Presets, TheModelEndpointIsTheConfiguredOneOrTheClisOwn) {
    auto config = parse(R"({"agents": {"c": {"type": "claude"}, "x": {"type": "codex"},
                                       "g": {"type": "gemini", "base_url": "http://h:1"},
                                       "s": {"command": "x"}}})");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(model_endpoint(config->agents[0], no_env).url, "https://api.anthropic.com");
    EXPECT_EQ(model_endpoint(config->agents[0], bedrock_env).provider, "Bedrock");
    EXPECT_FALSE(model_endpoint(config->agents[0], bedrock_env).url.has_value());
    EXPECT_EQ(model_endpoint(config->agents[1], no_env).url, "https://api.openai.com/v1");
    EXPECT_EQ(model_endpoint(config->agents[2], bedrock_env).url, "http://h:1");
    EXPECT_FALSE(model_endpoint(config->agents[3], no_env).url.has_value());
}

// codex's endpoint, when cocode's config names none, is the one codex's own config.toml names
// at its top level (a table's key of the same name is not it).
std::string codex_home;
std::optional<std::string> codex_env(const char* name) {
    if (std::string_view(name) == "CODEX_HOME") return codex_home;
    return std::nullopt;
}

TEST(Presets, CodexsEndpointIsTheOneItsOwnConfigurationNames) {
    test::TempDir dir;
    codex_home = dir.path().string();
    auto config = parse(R"({"agents": {"x": {"type": "codex"}}})");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(model_endpoint(config->agents[0], codex_env).url, "https://api.openai.com/v1");
    test::write_text(
        dir / "config.toml",
        "# gateway\nmodel = \"o4\"\nopenai_base_url = \"https://gw.example/v1\"  # ours\n"
        "[profiles.x]\nopenai_base_url = \"https://not-this.example\"\n");
    EXPECT_EQ(model_endpoint(config->agents[0], codex_env).url, "https://gw.example/v1");
    test::write_text(dir / "config.toml",
                     "[profiles.x]\nopenai_base_url = \"https://not-this.example\"\n");
    EXPECT_EQ(model_endpoint(config->agents[0], codex_env).url, "https://api.openai.com/v1");
}

TEST(Presets, ProviderCredentialsPassOnlyWhenTheProviderIsChosen) {
    const CliPreset& claude = *cli_preset(AgentType::claude);
    auto without = passed_variables(claude, [](const std::string&) { return false; });
    auto has = [](const std::vector<std::string>& names, const char* name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    EXPECT_TRUE(has(without, "ANTHROPIC_API_KEY"));
    EXPECT_FALSE(has(without, "AWS_SECRET_ACCESS_KEY"));
    auto with = passed_variables(
        claude, [](const std::string& name) { return name == "CLAUDE_CODE_USE_BEDROCK"; });
    EXPECT_TRUE(has(with, "AWS_SECRET_ACCESS_KEY"));
    EXPECT_FALSE(has(with, "GOOGLE_APPLICATION_CREDENTIALS"));
    // Nobody else's keys.
    EXPECT_FALSE(has(with, "OPENAI_API_KEY"));
    EXPECT_FALSE(has(
        passed_variables(*cli_preset(AgentType::codex), [](const std::string&) { return true; }),
        "ANTHROPIC_API_KEY"));
}

TEST(PresetFiles, EveryShippedPresetIsAFileThatParsesAndSaysWhatItWasTestedWith) {
    std::vector<std::string> names;
    for (const auto& cli : builtin_presets()) {
        names.push_back(cli->name);
        EXPECT_EQ(cli->source, "built in");
        EXPECT_FALSE(cli->program.empty()) << cli->name;
        EXPECT_TRUE(version_in(cli->tested_version)) << cli->name;
        EXPECT_NE(cli->stream, "text") << cli->name << " streams JSON events";
        EXPECT_FALSE(cli->token.empty()) << cli->name;
        // The text shipped in share/cocode/presets/ is the one compiled in.
        auto again = parse_preset(builtin_preset_text(cli->name), "x.json", cli->name);
        ASSERT_TRUE(again.ok()) << again.error().message;
        EXPECT_EQ(again->args, cli->args);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"claude", "codex", "gemini", "copilot", "opencode",
                                               "qwen", "pi", "cline", "kilo", "droid"}));
    // What every tool redacts without parsing the files holds each preset's secrets and key.
    const auto secrets = secret_variables();
    for (const auto& cli : builtin_presets())
        for (const auto& name : cli->secrets)
            EXPECT_NE(std::find(secrets.begin(), secrets.end(), name), secrets.end())
                << cli->name << " " << name;
    EXPECT_EQ(builtin_preset("claude")->type, AgentType::claude);
    EXPECT_EQ(builtin_preset("droid")->type, AgentType::cli);
    // Only cline takes its prompt as an argument; none is ever handed the GitHub token.
    for (const auto& cli : builtin_presets()) {
        EXPECT_EQ(cli->prompt == Stdin::argument, cli->name == "cline") << cli->name;
        for (const auto& name : passed_variables(*cli, [](const std::string&) { return true; }))
            EXPECT_FALSE(is_github_credential(name)) << cli->name << " " << name;
    }
}

TEST(Presets, TheNewClisGetTheirEndpointModelAndQuietTheirOwnWay) {
    auto config = parse(R"({"agents": {
        "cp": {"type": "copilot", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "oc": {"type": "opencode", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "cl": {"type": "cline", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "dr": {"type": "droid", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "pi": {"type": "pi", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
        "oc2": {"type": "opencode", "model": "openai/gpt-5"}}})");
    ASSERT_TRUE(config.ok()) << config.error().message;
    auto env_of = [](const LaunchAdjustments& a, const std::string& name) {
        for (const auto& [n, v] : a.env)
            if (n == name) return v;
        return std::string("(unset)");
    };
    // copilot: the provider's endpoint alone, offline (no GitHub sign-in), never updating.
    auto copilot = launch_adjustments(config->agents[0], "/runs/r", true);
    EXPECT_EQ(env_of(copilot, "COPILOT_PROVIDER_BASE_URL"), "http://127.0.0.1:9/v1");
    EXPECT_EQ(env_of(copilot, "COPILOT_OFFLINE"), "true");
    EXPECT_EQ(env_of(copilot, "COPILOT_AUTO_UPDATE"), "false");
    EXPECT_EQ(env_of(copilot, "COPILOT_MODEL"), "m");
    // opencode: a provider in its configuration's content, naming the key's variable, not the
    // key; its lookups off only when its network is enclosed.
    auto opencode = launch_adjustments(config->agents[1], "/runs/r", false);
    const auto content = nlohmann::json::parse(env_of(opencode, "OPENCODE_CONFIG_CONTENT"));
    EXPECT_EQ(content["model"], "cocode/m");
    EXPECT_EQ(content["provider"]["cocode"]["options"]["baseURL"], "http://127.0.0.1:9/v1");
    EXPECT_EQ(content["provider"]["cocode"]["options"]["apiKey"], "{env:OPENAI_API_KEY}");
    EXPECT_TRUE(content["provider"]["cocode"]["models"].contains("m"));
    EXPECT_EQ(env_of(opencode, "OPENCODE_DISABLE_MODELS_FETCH"), "(unset)");
    EXPECT_EQ(env_of(launch_adjustments(config->agents[1], "/runs/r", false, true),
                     "OPENCODE_DISABLE_MODELS_FETCH"),
              "1");
    // cline: a configuration folder of the run's own naming the endpoint and no key.
    auto cline = launch_adjustments(config->agents[2], "/runs/r", false);
    EXPECT_EQ(cline.args_after_program,
              (std::vector<std::string>{"--config", "/runs/r/cline-home", "-P", "openai-compatible",
                                        "-m", "m"}));
    ASSERT_EQ(cline.files.size(), 1u);
    EXPECT_EQ(cline.files[0].first, "/runs/r/cline-home/data/settings/providers.json");
    EXPECT_NE(cline.files[0].second.find("\"baseUrl\": \"http://127.0.0.1:9/v1\""),
              std::string::npos);
    EXPECT_EQ(cline.files[0].second.find("apiKey"), std::string::npos);
    // droid: its settings for this process only, after `exec`'s own arguments.
    auto droid = launch_adjustments(config->agents[3], "/runs/r", false);
    EXPECT_EQ(droid.args_last,
              (std::vector<std::string>{"--settings", "/runs/r/droid-home/settings.json", "-m",
                                        "custom:cocode-0"}));
    EXPECT_NE(droid.files.at(0).second.find("\"apiKey\": \"${OPENAI_API_KEY}\""),
              std::string::npos);
    // pi: a models.json in an agent folder of the run's own.
    auto pi = launch_adjustments(config->agents[4], "/runs/r", false);
    EXPECT_EQ(env_of(pi, "PI_CODING_AGENT_DIR"), "/runs/r/pi-home/agent");
    EXPECT_EQ(pi.files.at(0).first, "/runs/r/pi-home/agent/models.json");
    // Without a base_url the model goes on opencode's command line, and no provider is made.
    auto own = launch_adjustments(config->agents[5], "/runs/r", false);
    EXPECT_EQ(own.args_last, (std::vector<std::string>{"--model", "openai/gpt-5"}));
    EXPECT_EQ(env_of(own, "OPENCODE_CONFIG_CONTENT"), "(unset)");
}

TEST(Presets, AModelIsAskedForWhereThePresetPassesOneWithTheBaseUrl) {
    auto refused = parse(R"({"agents": {"o": {"type": "opencode", "base_url": "http://h:1/v1"}}})");
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              ".cocode/config.json: field 'agents.o.model': expected a model name: the opencode "
              "preset passes one with base_url");
    EXPECT_TRUE(parse(R"({"agents": {"o": {"type": "opencode"}}})").ok());
    EXPECT_TRUE(parse(R"({"agents": {"c": {"type": "claude", "base_url": "http://h:1"}}})").ok());
}

TEST(Presets, ABrokenPresetFileGetsOneLineNamingTheFileAndField) {
    const std::string good = R"({"preset": 1, "program": "tool", "tested": {"version": "1.0.0"}})";
    ASSERT_TRUE(parse_preset(good, "p/mine.json", "mine").ok());
    const std::pair<std::string, std::string> cases[] = {
        {"[1]", "p/mine.json: not a JSON object (docs/agents.md, \"Declaring a preset\")"},
        {R"({"preset": 2, "program": "tool", "tested": {"version": "1"}})",
         "p/mine.json: field 'preset': expected 1 (the version of the preset format)"},
        {R"({"preset": 1, "tested": {"version": "1.0"}})",
         "p/mine.json: field 'program': expected a non-empty string"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"}, "stream": "xml"})",
         "p/mine.json: field 'stream': expected one of claude, codex, gemini, qwen, copilot, "
         "opencode, pi, cline, droid, text"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"}, "promt": "stdin"})",
         "p/mine.json: unknown field 'promt' (did you mean 'prompt'?)"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"},
             "launch": [{"env": {"URL": "{base_url}"}}]})",
         "p/mine.json: field 'launch[0].when': expected \"base_url\" among the conditions of a "
         "step using {base_url}"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"},
             "launch": [{"when": ["sometimes"]}]})",
         "p/mine.json: field 'launch[0].when[0]': expected base_url, model, root or enclosed, or "
         "one of them after '!'"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"},
             "env": [{"names": ["GITHUB_TOKEN"]}]})",
         "p/mine.json: field 'env[0].names': expected variable names of the CLI's own (never the "
         "GitHub token's), not 'GITHUB_TOKEN'"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"},
             "launch": [{"files": {"../../.bashrc": "x"}}]})",
         "p/mine.json: field 'launch[0].files': expected relative paths inside the CLI's home, "
         "not '../../.bashrc'"},
        {R"({"preset": 1, "name": "other", "program": "t", "tested": {"version": "1.0"}})",
         "p/mine.json: field 'name': expected \"mine\", the file's own name"},
        {R"({"preset": 1, "program": "t", "tested": {}})",
         "p/mine.json: field 'tested.version': expected a dotted version such as 1.2.3"},
        {R"({"preset": 1, "program": "t", "tested": {"version": "1.0"}, "resume": ["--again"]})",
         "p/mine.json: field 'resume': expected arguments naming the session as {session}"},
    };
    for (const auto& [text, expected] : cases) {
        auto parsed = parse_preset(text, "p/mine.json", "mine");
        ASSERT_FALSE(parsed.ok()) << text;
        EXPECT_EQ(parsed.error().message, expected);
        EXPECT_EQ(parsed.error().message.find('\n'), std::string::npos);
    }
}

TEST(Presets, ARepositorysOwnPresetIsATypeLikeABuiltInOne) {
    test::TempDir dir;
    const auto root = dir.path();
    std::filesystem::create_directories(root / ".cocode/presets");
    test::write_text(root / ".cocode/presets/mine.json",
                     R"({"preset": 1, "program": "mine-cli", "args": ["--json"],
                         "prompt": "argument", "stream": "cline", "key": "MINE_KEY",
                         "tested": {"version": "2.0.1"}})");
    auto config =
        parse_config(R"({"agents": {"m": {"type": "mine"}}})", ".cocode/config.json", root);
    ASSERT_TRUE(config.ok()) << config.error().message;
    const AgentConfig& m = config->agents.at(0);
    EXPECT_EQ(m.type, AgentType::cli);
    EXPECT_EQ(type_of(m), "mine");
    EXPECT_EQ(m.argv, (std::vector<std::string>{"mine-cli", "--json"}));
    EXPECT_EQ(m.stdin_from, Stdin::argument);
    EXPECT_EQ(m.token_env, "MINE_KEY");
    EXPECT_EQ(cli_preset(m)->source, ".cocode/presets/mine.json");

    // A broken one stops the configuration with its own one line; a built-in's name is taken.
    test::write_text(root / ".cocode/presets/mine.json", R"({"preset": 1})");
    auto broken = parse_config(R"({"agents": {}})", ".cocode/config.json", root);
    ASSERT_FALSE(broken.ok());
    EXPECT_EQ(broken.error().message,
              ".cocode/presets/mine.json: field 'program': expected a non-empty string");
    std::filesystem::remove(root / ".cocode/presets/mine.json");
    test::write_text(root / ".cocode/presets/claude.json", "{}");
    auto taken = parse_config(R"({"agents": {}})", ".cocode/config.json", root);
    ASSERT_FALSE(taken.ok());
    EXPECT_EQ(taken.error().message,
              ".cocode/presets/claude.json: field 'name': expected a name no built-in preset or "
              "agent type has (\"claude\" is cocode's own)");
}

TEST(Presets, VersionsAreReadAndCompared) {
    EXPECT_EQ(version_in("2.1.330 (Claude Code)"), "2.1.330");
    EXPECT_EQ(version_in("codex-cli 0.169.0"), "0.169.0");
    EXPECT_EQ(version_in("0.61.0\n"), "0.61.0");
    EXPECT_EQ(version_in("no version here 7"), std::nullopt);
    EXPECT_LT(compare_versions("0.9.1", "0.61.0"), 0);
    EXPECT_EQ(compare_versions("2.1.330", "2.1.330"), 0);
    EXPECT_GT(compare_versions("2.2", "2.1.330"), 0);
}

TEST(Duration, ParsesWhatPeopleWrite) {
    EXPECT_EQ(*parse_duration("90"), Duration(90s));
    EXPECT_EQ(*parse_duration("250ms"), Duration(250ms));
    EXPECT_EQ(*parse_duration("1h30m"), Duration(90min));
    EXPECT_EQ(format_duration(Duration(90min)), "1h30m");
    EXPECT_EQ(format_duration(Duration(5s)), "5s");
    EXPECT_EQ(format_duration(Duration(250ms)), "250ms");
    // Sizes read back what they print: the output cap's summary names the configured value.
    for (std::uint64_t size :
         {std::uint64_t{4} << 20, std::uint64_t{1} << 30, std::uint64_t{1500},
          std::uint64_t{67777776777777000}})  // found by fuzzing: 67777776777777KB
        EXPECT_EQ(*parse_size(format_size(size)), size) << format_size(size);
    EXPECT_EQ(format_size(std::uint64_t{4} << 20), "4MiB");
    EXPECT_FALSE(parse_size("999999999999999GiB").ok());  // past 2^64 bytes: refused, not wrapped
    for (const char* bad : {"", "soon", "5x", "m", "0", "-1s", "1.5m"})
        EXPECT_FALSE(parse_duration(bad).ok()) << bad;
}

// Found by fuzzing: parts summing past what a part may hold ("5h5h…22h2787227…") read, but
// printed back as one number too long to read again; enough parts overflowed the count. Ten
// years is the most now, and what is printed always reads back.
TEST(Duration, AtMostTenYearsAndWhatIsPrintedReadsBack) {
    EXPECT_EQ(*parse_duration("87600h"), Duration(87'600h));
    EXPECT_FALSE(parse_duration("87600h1ms").ok());
    EXPECT_FALSE(parse_duration("999999999h999999999h").ok());
    EXPECT_FALSE(parse_duration("999999999").ok());  // seconds: 31 years
    EXPECT_EQ(format_duration(Duration(3'723'004ms)), "1h2m3s4ms");
    for (Duration d : {Duration(1ms), Duration(61'001ms), Duration(87'600h), Duration(3'599'999ms)})
        EXPECT_EQ(*parse_duration(format_duration(d)), d) << format_duration(d);
}

}  // namespace
}  // namespace cocode::config
