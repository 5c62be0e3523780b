// What cocode knows about each coding CLI it ships a preset for: the command line that runs it
// unattended with its prompt on stdin and its output streamed, the variables it reads for its
// own credentials and its provider, how a `base_url` and a `model` reach it, the version the
// preset was tested with, and where it keeps a login of its own (docs/configuration.md).
//
// Everything here is data and pure functions; what a run does with it is in agent/prepare.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"

namespace cocode::config {

// Variables a CLI documents, passed through from cocode's environment when set: always
// (`when` empty), or only when the variable `when` is set (a provider switch such as
// CLAUDE_CODE_USE_BEDROCK: the AWS keys reach claude only when it is told to use Bedrock).
struct EnvGroup {
    std::string when;
    std::vector<std::string> names;
};

struct CliPreset {
    AgentType type = AgentType::command;
    std::string program;            // "claude"
    std::vector<std::string> args;  // unattended, prompt on stdin, streaming output
    std::string token;              // the runner contract's token variable
    // Its credentials, endpoint and provider settings; nobody else's.
    std::vector<EnvGroup> env;
    // Which of those hold credentials (their values are masked in whatever cocode shows).
    std::vector<std::string> secrets;
    std::string default_endpoint;        // where the model is when nothing says otherwise
    std::string endpoint_env;            // the variable of the CLI's own that moves it ("" if none)
    std::string tested_version;          // the CLI version the preset was last run against
    std::vector<std::string> help_args;  // lists the flags the preset uses ("--help")
    // Files of the CLI's own login, relative to $HOME: a key is not needed when one exists.
    std::vector<std::string> login_files;
    // Its own configuration and state, relative to $HOME: available to it inside the sandbox,
    // hidden from every other agent.
    std::vector<std::string> config_paths;
};

// A chat-completions provider of the built-in agents: where it is, the variable of its key
// (the runner contract's token mapping), and the model used when none is configured.
struct ChatProvider {
    std::string_view name;      // openai, perplexity, xai, openai-compatible
    std::string_view base_url;  // "" for openai-compatible: the configuration gives it
    std::string_view key_env;   // "" when no key is needed
    std::string_view model;     // "" when the configuration must give it
};
const ChatProvider* chat_provider(std::string_view name);  // nullptr when unknown
std::string chat_provider_names();  // "openai, perplexity, xai, openai-compatible"

// The preset of a CLI type; nullptr for AgentType::command.
const CliPreset* cli_preset(AgentType type);

// The variables of `cli.env` that pass, given how `env` answers for the switches.
using EnvGetter = std::optional<std::string> (*)(const char* name);
std::vector<std::string> passed_variables(const CliPreset& cli,
                                          const std::function<bool(const std::string&)>& is_set);

// How a run starts an agent beyond its configured command line: arguments that go right
// after the program, variables set for it alone, and files to write first (paths absolute).
struct LaunchAdjustments {
    std::vector<std::string> args_after_program;
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::pair<std::filesystem::path, std::string>> files;
};

// The agent's base_url and model in each CLI's own terms (claude: ANTHROPIC_BASE_URL and
// ANTHROPIC_MODEL; codex: `-c openai_base_url=…`, `-c model=…`; gemini: GOOGLE_GEMINI_BASE_URL
// and GEMINI_MODEL, plus a home of its own under `run_folder` whose settings select API-key
// auth, which gemini needs for a base URL), and IS_SANDBOX=1 for claude when `as_root`
// (claude refuses to skip its permission prompts as root otherwise). With `enclosed` (the
// agent's network behind an allowlist: docs/security.md), what each CLI can be told so that it
// asks for nothing but its model: claude CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1; codex no
// plugin marketplace, no analytics, no update check; gemini (in its own home) no usage
// statistics.
LaunchAdjustments launch_adjustments(const AgentConfig& agent,
                                     const std::filesystem::path& run_folder, bool as_root,
                                     bool enclosed = false);

// codex's own `openai_base_url`, from the top level of $CODEX_HOME/config.toml (else
// ~/.codex/config.toml): where codex sends its requests when cocode's config names none.
std::optional<std::string> codex_configured_base_url(EnvGetter env);

// The model endpoint an agent talks to: its base_url, else the CLI's own setting (claude's and
// gemini's variable in `env`, codex's configuration file) when set, else the CLI's default. nullopt
// for command agents, or when the provider is one whose endpoint the CLI derives itself (Bedrock,
// Vertex), named in `provider`.
struct Endpoint {
    std::optional<std::string> url;
    std::string provider;  // "", "Bedrock", "Vertex AI"
};
Endpoint model_endpoint(const AgentConfig& agent, EnvGetter env);

// Names of variables that hold the GitHub token or App key: never given to an agent.
bool is_github_credential(std::string_view name);

// Every variable cocode knows to hold a secret: the GitHub token's, and each CLI's
// credentials. Their values are redacted from whatever cocode shows or writes.
std::vector<std::string> secret_variables();

// "2.1.330" from "2.1.330 (Claude Code)", "codex-cli 0.169.0", "0.61.0"; nullopt if none.
std::optional<std::string> version_in(std::string_view text);
// Compares dotted versions numerically: <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace cocode::config
