// What cocode knows about each coding CLI it runs from a preset: the command line that runs it
// unattended, how its prompt reaches it, the stream it prints, the variables it reads for its
// own credentials and its provider, how a `base_url` and a `model` reach it, the hosts it needs,
// how a round resumes its session, and the version the preset was tested with.
//
// A preset is data: a JSON file (docs/agents.md, "Declaring a preset"). The built-in ones are
// the files in src/config/presets/, compiled in and shipped in share/cocode/presets/; a
// repository adds its own in .cocode/presets/NAME.json. Everything here is data and pure
// functions; what a run does with it is in agent/prepare.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"

namespace cocode::config {

// Variables a CLI documents, passed through from cocode's environment when set: always
// (`when` empty), or only when the variable `when` is set (a provider switch such as
// CLAUDE_CODE_USE_BEDROCK: the AWS keys reach claude only when it is told to use Bedrock).
struct EnvGroup {
    std::string when;
    std::vector<std::string> names;
};

// One step of how a run starts the CLI, taken when each of its conditions holds: `base_url`,
// `model` (the agent has one), `root` (cocode runs as root), `enclosed` (the agent's network is
// behind the allowlist), each negated by a leading '!'. Strings may hold {base_url}, {model},
// {home} (a folder of the run's own for the CLI's configuration) and {base_url|toml} /
// {model|toml} (as a TOML basic string).
struct LaunchStep {
    std::vector<std::string> when;
    std::vector<std::pair<std::string, nlohmann::ordered_json>> env;  // a string, or JSON
    std::vector<std::string> args;                                    // right after the program
    std::vector<std::string> args_last;  // after the whole command line
    std::vector<std::pair<std::string, nlohmann::ordered_json>> files;  // under {home}; merged
};

// The stream formats cocode reads (agent/transcript.h): claude's stream-json, codex's --json,
// gemini's stream-json, qwen's (claude's shapes), copilot's, opencode's (kilo's too), pi's,
// cline's and droid's JSON lines; or text, shown as it is.
const std::vector<std::string_view>& stream_formats();

struct CliPreset {
    AgentType type = AgentType::cli;  // claude, codex, gemini, or cli
    std::string name;                 // the `type` an agent names it by
    std::string description;
    std::string source;             // "built in", or the file it was read from
    std::string program;            // "claude"
    std::vector<std::string> args;  // unattended, streaming output
    Stdin prompt = Stdin::prompt;   // on stdin, or as the last argument
    std::string stream = "text";    // one of stream_formats()
    std::string token;              // the runner contract's token variable
    // Its credentials, endpoint and provider settings; nobody else's.
    std::vector<EnvGroup> env;
    // Which of those hold credentials (their values are masked in whatever cocode shows).
    std::vector<std::string> secrets;
    std::string default_endpoint;  // where the model is when nothing says otherwise
    std::string endpoint_env;      // the variable of the CLI's own that moves it ("" if none)
    // Why a run without a base_url cannot be trusted to this CLI ("" when it can): doctor says it.
    std::string needs_base_url;
    std::vector<LaunchStep> launch;
    std::vector<std::string> resume;  // appended to resume session {session}; empty: it cannot
    // Where the CLI keeps session {session}, as globs under $HOME: a round resumes it only when
    // one matches. Empty: the CLI is trusted to say when it cannot.
    std::vector<std::string> sessions;
    // Hosts it needs besides its model when it has no base_url (its own service's).
    std::vector<std::string> egress;
    std::string tested_version;          // the CLI version the preset was last run against
    std::vector<std::string> help_args;  // lists the flags the preset uses ("--help")
    // Files of the CLI's own login, relative to $HOME: a key is not needed when one exists.
    std::vector<std::string> login_files;
    // Its own configuration and state, relative to $HOME: available to it inside the sandbox,
    // hidden from every other agent.
    std::vector<std::string> config_paths;
};
using PresetPtr = std::shared_ptr<const CliPreset>;

// A preset file's text, checked as the configuration is: every error one line naming `source`
// and the field. `name`: the name the file must declare (its file name's stem), "" for any.
Result<CliPreset> parse_preset(std::string_view text, const std::string& source,
                               const std::string& name = {});

// The presets cocode ships, in the order docs/agents.md lists them.
const std::vector<PresetPtr>& builtin_presets();
PresetPtr builtin_preset(std::string_view name);  // null when there is none by that name
// A built-in preset's file as shipped (share/cocode/presets/NAME.json).
std::string_view builtin_preset_text(std::string_view name);

// The repository's own presets, .cocode/presets/*.json, each checked; a name that a built-in
// preset or agent type has is refused.
inline constexpr char kPresetsDir[] = ".cocode/presets";
Result<std::vector<PresetPtr>> repository_presets(const std::filesystem::path& repo_root);

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

// The built-in preset of claude, codex or gemini; nullptr for the other types.
const CliPreset* cli_preset(AgentType type);
// The agent's preset; nullptr for command and built-in agents.
inline const CliPreset* cli_preset(const AgentConfig& agent) { return agent.cli.get(); }

// The variables of `cli.env` that pass, given how `env` answers for the switches.
using EnvGetter = std::optional<std::string> (*)(const char* name);
std::vector<std::string> passed_variables(const CliPreset& cli,
                                          const std::function<bool(const std::string&)>& is_set);

// How a run starts an agent beyond its configured command line: arguments that go right
// after the program and at the end, variables set for it alone, and files to write first
// (paths absolute).
struct LaunchAdjustments {
    std::vector<std::string> args_after_program;
    std::vector<std::string> args_last;
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<std::pair<std::filesystem::path, std::string>> files;
};

// The steps of the agent's preset whose conditions hold, with their placeholders filled: the
// agent's base_url and model in the CLI's own terms, what it needs as root, and with `enclosed`
// (the agent's network behind an allowlist: docs/security.md) what it can be told so that it
// asks for nothing but its model. A variable the agent's configuration sets keeps its value.
// The CLI's home is `run_folder`/<preset>-home.
LaunchAdjustments launch_adjustments(const AgentConfig& agent,
                                     const std::filesystem::path& run_folder, bool as_root,
                                     bool enclosed = false);
std::filesystem::path preset_home(const CliPreset& cli, const std::filesystem::path& run_folder);

// What the agent's configuration lacks that a step of its preset needs ({model} in a step its
// base_url takes): the field and what it expects; nullopt when nothing.
struct MissingField {
    std::string field;
    std::string expected;
};
std::optional<MissingField> missing_for_preset(const AgentConfig& agent);

// The preset's resume arguments for `session`; empty when the preset declares none.
std::vector<std::string> resume_args(const CliPreset& cli, const std::string& session);
// Whether session `session` of the CLI is still under `home`, as far as its preset says where.
bool session_kept(const CliPreset& cli, const std::string& session,
                  const std::filesystem::path& home);

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
