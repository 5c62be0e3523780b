// .cocode/config.json: what the dispatcher runs and how (docs/configuration.md).
//
// Loading validates everything up front: an error names the file, the field (as a JSON path
// such as `agents.fixer.timeout`) and what was expected; an unknown key is an error with a
// "did you mean" when a known key is close. cocode-py's shape, `agents` as a list of
// `{name, command, args}`, is read too.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::config {

using Duration = std::chrono::milliseconds;

// claude, codex and gemini are presets with code of their own besides their files (where each
// keeps its sessions, how it bills); `cli` is any other preset: a file, built in or the
// repository's own (config/presets.h).
enum class AgentType { command, claude, codex, gemini, cli, textproto, perplexity, xai, codali };
std::string_view type_name(AgentType type);
// The agents cocode runs itself, over a chat-completions API (agent/builtin.h): textproto
// (the CodingAgent text protocol), perplexity and xai (one request, or the text protocol),
// codali (Codali envelopes answered from an index of the worktree, the check in the loop).
bool is_builtin(AgentType type);

// What the agent's stdin is: /dev/null (the cocode protocol: the agent reads
// COCODE_ISSUE_BODY_FILE), or prompt.md (the coding CLIs take their prompt on stdin); or
// /dev/null with the prompt as the command line's last argument (a CLI that reads no stdin).
enum class Stdin { null, prompt, argument };

struct CliPreset;

// How a built-in agent reaches its model and how long it may go on.
enum class Transport {
    http,  // the chat-completions API
    file,  // copy-paste: the outbox in the run folder, the answer pasted into its inbox/
};
struct ChatSettings {
    std::string provider;  // openai, perplexity, xai, openai-compatible (llm/chat.h)
    Transport transport = Transport::http;
    bool textproto = true;  // perplexity, xai: false sends the prompt as one request
    int max_turns = 30;     // outboxes sent without DONE, then the session ends (exit 1)
    std::uint64_t token_budget = 2'000'000;               // tokens spent without DONE, then it ends
    Duration command_timeout = std::chrono::seconds(30);  // each RUN_COMMAND
    Duration request_timeout = std::chrono::minutes(5);   // each chat request
    bool stream = false;                                  // server-sent events
    // codali only: the model's context window in tokens (history is summarised past 90 % of
    // it), the model that summarises (default: the agent's own), and how many times the
    // critic's FAIL goes back to the model before the session ends.
    std::uint64_t context_window = 128'000;
    std::optional<std::string> summary_model;
    int critic_rounds = 3;
};

struct AgentConfig {
    std::string name;
    AgentType type = AgentType::command;
    std::vector<std::string> argv;                  // program and arguments, ready to start
    std::vector<std::string> env;                   // extra environment names passed through
    std::map<std::string, std::string> env_values;  // set for this agent only
    // The model endpoint and model, translated to each CLI's own mechanism (presets only).
    std::optional<std::string> base_url;
    std::optional<std::string> model;
    std::optional<Duration> timeout;
    std::optional<Duration> idle_timeout;
    std::optional<std::uint64_t> output_cap;  // this agent's own, over the configuration's
    int restarts = 0;
    Stdin stdin_from = Stdin::null;
    // The runner contract's token of its type (claude → ANTHROPIC_API_KEY, codex →
    // OPENAI_API_KEY, gemini → GEMINI_API_KEY); the preset passes its other credentials too
    // (config/presets.h).
    std::optional<std::string> token_env;
    // Built-in agents only: the provider, transport and limits. Their key is token_env.
    std::optional<ChatSettings> chat;
    // Budgets: a run whose cost or tokens (input and output) cross one is ended, reason
    // `budget` (docs/cost.md).
    std::optional<double> max_cost_usd;
    // Where this agent's network may go beyond its endpoint and network.allow.
    std::vector<std::string> network_allow;
    std::optional<std::uint64_t> max_tokens;
    // The preset of a coding CLI (claude, codex, gemini, cli); null for the others.
    std::shared_ptr<const CliPreset> cli;
};

// The agent's type as configured: the preset's name for a CLI, else type_name.
std::string type_of(const AgentConfig& agent);

struct WorktreeSetup {
    std::vector<std::string> copy;      // files (relative to the repository) copied in
    std::vector<std::string> commands;  // run with `sh -c` in the new worktree, in order
};

// `environment` (docs/environments.md): what prepares a clean checkout of the base once per
// key, stored and shared copy-on-write by every agent and every verify of the runs that need
// that key. Unset: a `.devcontainer/devcontainer.json`'s commands, else none.
struct EnvironmentConfig {
    std::vector<std::string> setup;  // `sh -c`, in order, in a clean checkout of the base
    // Globs of the files whose contents key it; unset: the lockfiles at the root and in
    // workspaces (environment/key.h).
    std::optional<std::vector<std::string>> key;
    std::vector<std::string> key_commands;  // their output keys it too (`node --version`)
    // What agents get (relative paths); unset: every file the setup made that git ignores or
    // does not track.
    std::optional<std::vector<std::string>> paths;
    // Variables agents and verify commands get with it; a value may name `${tree}` (the
    // folder it is used in) and `${env:NAME}` (NAME's value before).
    std::vector<std::pair<std::string, std::string>> env;
    Duration timeout = std::chrono::minutes(20);
};

// A command cocode-check runs in the worktree (`sh -c`): the project's tests, a linter.
struct VerifyCommand {
    std::string name;  // in the report; defaults to the command
    std::string run;
    std::optional<Duration> timeout;  // default: CheckConfig::verify_timeout
};

// `check`: what cocode-check judges beyond exit code, marker and commits.
struct CheckConfig {
    std::vector<std::string> allowed_paths;    // globs; empty: every path is allowed
    std::vector<std::string> read_only_paths;  // globs no commit may touch
    std::vector<VerifyCommand> verify;
    Duration verify_timeout = std::chrono::minutes(10);
    std::vector<std::string> verify_env;      // names passed to verify commands beyond the base
    std::string pass_label = "cocode:ready";  // "" for none
    std::string fail_label = "cocode:failed";
};

// `publish`: where a verdict goes besides the comment, and whether `run` publishes at all.
struct PublishConfig {
    bool after_run = false;     // cocode-dispatch run publishes each run's verdict
    bool status = true;         // a commit status on the branch head (GitHub)
    bool labels = true;         // check's pass/fail label on the issue
    bool push = false;          // push the branch to origin
    bool pull_request = false;  // open or update a draft pull request (publish pushes first)
};

// `trigger`: what starts cocode from GitHub (the action, `plan --event`): the label that
// dispatches an issue, the comment command, and the bots allowed to use them (people need write,
// maintain or admin permission on the repository, asked of GitHub).
struct TriggerConfig {
    std::string label = "cocode";
    std::string command = "/cocode";
    std::vector<std::string> allowed_bots;  // logins, e.g. "renovate[bot]"
    bool plan = false;  // a labelled issue starts plan rounds, not code (docs/review.md)
    // The environment variable holding the webhook secret (`serve`); the secret is never in
    // the configuration.
    std::string secret_env = "COCODE_WEBHOOK_SECRET";
};

// `review`: rounds on the agent's pull request (docs/review.md). A round goes on from where the
// last one stopped, judged by the rules sealed at the first.
struct ReviewConfig {
    int max_rounds = 3;       // per pull request, the first round included
    bool fix_checks = false;  // a failing check on the PR's head starts a round
};

// `plan`: a plan round's plan becomes the code round's rules (docs/review.md, "Plans"). A verify
// command the plan proposes joins the sealed ones only when it starts with one of
// `bind_verify` (a whole word or more of it); unset: the configured verify commands themselves
// are the prefixes, so a plan may narrow `make test` to `make test TESTS=x` but not smuggle in
// `curl … | sh`.
struct PlanConfig {
    std::optional<std::vector<std::string>> bind_verify;
};

// `gate`: the commit status `cocode/gate` on each agent pull request's head, green only with a
// PASS on that head and approvals of `approvals` people with write access other than the
// requester (0: off).
struct GateConfig {
    int approvals = 0;
};

// What a model's tokens cost, in USD per million (`pricing`, over the shipped price table).
struct Price {
    double input = 0;  // input tokens not read from a cache
    double output = 0;
    double cached = 0;  // input tokens read from a cache
};

// `progress`: the live comment on each issue a publishing batch runs (docs/check.md).
struct ProgressConfig {
    bool enabled = true;
    Duration interval = std::chrono::seconds(10);  // between edits while runs go on
};

// `budget`: what this repository may spend on this machine.
struct BudgetConfig {
    std::optional<double> daily_usd;  // a run that would start past it is refused
};

// Which agents an issue gets (docs/report.md, "Routing by evidence"): every configured one
// (`all`), or those the scorecard says to trust for the kind of work (`evidence`).
struct RouteConfig {
    bool evidence = false;
    int race = 2;          // agents raced when the evidence is close
    double explore = 0.1;  // the chance of one more, for evidence on it
    int min_runs = 5;      // judged runs of a kind before an agent's rate counts
    std::uint64_t seed = 0;
};

// The agent's network (docs/security.md, "The agent's network"): a namespace of its own whose
// only way out is the run's egress proxy, letting through the allowlist (allowlist) or
// everything while recording it (audit); or the host's network as it is (open).
enum class NetworkMode { allowlist, audit, open };

struct NetworkConfig {
    // Unset: allowlist for a sandboxed run, open for one that is not.
    std::optional<NetworkMode> mode;
    std::vector<std::string> allow;  // entries for every agent (net/allowlist.h)
    bool fail_on_blocked = false;    // on_blocked: fail (a block fails the check), else warn
};

// Where agents run: bubblewrap's PID namespace when the kernel allows (auto), always (bwrap:
// a run that cannot have it fails), or only in their own process group (none).
enum class SandboxMode { automatic, bwrap, none };

struct Config {
    std::filesystem::path source;  // the file read, or empty for built-in defaults
    std::string text;              // what it held, as read (the run's seal keeps it)
    int concurrency = 5;
    Duration timeout = std::chrono::minutes(30);
    Duration grace = std::chrono::seconds(5);
    // After READY, a run whose agent neither writes nor commits for this long is ended.
    Duration ready_quiet = std::chrono::seconds(60);
    Duration restart_backoff = std::chrono::seconds(1);  // doubled per restart, at most 60 s
    // Bytes of stdout and stderr together one run may write before it is stopped.
    std::uint64_t output_cap = std::uint64_t{1} << 30;
    std::string ready_marker = "cocode ready for check";
    std::string worktree_root = ".cocode/worktrees";
    std::string branch_prefix = "cocode/";
    std::optional<std::string> base_branch;  // default: the repository's default branch
    SandboxMode sandbox = SandboxMode::automatic;
    // What sandboxed children may read besides what they need (proc/sandbox.h denies the rest
    // of the host): absolute paths, or ~/… in the user's HOME (a toolchain in /opt, a cache).
    std::vector<std::string> readable;
    NetworkConfig network;
    WorktreeSetup setup;
    std::optional<EnvironmentConfig> environment;
    CheckConfig check;
    PublishConfig publish;
    TriggerConfig trigger;
    ReviewConfig review;
    PlanConfig plan;
    GateConfig gate;
    // Model name (or a prefix of one: the longest that matches wins) to its price.
    std::map<std::string, Price> pricing;
    BudgetConfig budget;
    RouteConfig route;
    ProgressConfig progress;
    std::vector<AgentConfig> agents;
    std::vector<std::string> default_agents;  // run when no --agent is given; default: all

    const AgentConfig* find_agent(std::string_view name) const;
};

// The preset for a coding CLI, as `init` writes it and as a bare `{"type": "claude"}` means.
AgentConfig preset(AgentType type, std::string name);
AgentConfig preset(std::shared_ptr<const CliPreset> cli, std::string name);

// What git would refuse in a full ref name ("refs/heads/cocode/1-claude"), or nullopt
// (git check-ref-format's rules).
std::optional<std::string> refname_problem(std::string_view name);

// "1GiB", "512MiB", "500MB", "64KB", "1048576" (bytes). Errors say what was expected.
Result<std::uint64_t> parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);  // "4MiB", "1GiB", "2KB": as parse_size reads

// "90" (seconds), "90s", "30m", "1h30m", "250ms". Errors say what was expected.
Result<Duration> parse_duration(std::string_view text);
// "30m", "1h30m", "5s", "250ms", "1h2m3s4ms": what parse_duration reads back as itself.
std::string format_duration(Duration duration);

// Parses config text; `source` names it in errors; relative agent commands that contain a
// '/' are resolved against `repo_root` (the agent runs in its worktree, where untracked
// scripts would be missing).
Result<Config> parse_config(std::string_view text, const std::filesystem::path& source,
                            const std::filesystem::path& repo_root);

// `<repo_root>/.cocode/config.json`; built-in defaults (no agents) when there is no file.
Result<Config> load_config(const std::filesystem::path& repo_root);

inline constexpr char kConfigFile[] = ".cocode/config.json";

// Where the worktrees are: `worktree_root` (absolute, or relative to the repository's root).
std::filesystem::path worktree_root_of(const std::string& worktree_root,
                                       const std::filesystem::path& repo_root);
inline std::filesystem::path worktree_root_of(const Config& config,
                                              const std::filesystem::path& repo_root) {
    return worktree_root_of(config.worktree_root, repo_root);
}

// `readable` as paths, ~/… in `home` (left out when there is none).
std::vector<std::filesystem::path> readable_paths(const Config& config,
                                                  const std::filesystem::path& home);

// What one batch sets over the configuration (`run --marker/--allowed-path/--verify`, the
// action's inputs): the ready marker, and the check's allowed paths and verify commands
// (replacing the configured ones). Applied to the configuration's text, so that the runs'
// seals — the rules they are judged by — hold them.
struct Overrides {
    std::optional<std::string> ready_marker;
    std::optional<std::vector<std::string>> allowed_paths;
    std::optional<std::vector<std::string>> verify;  // commands, named after themselves
    std::optional<std::string> sandbox;              // auto, bwrap or none
    bool empty() const { return !ready_marker && !allowed_paths && !verify && !sandbox; }
};

// The configuration with `overrides` set in its text, read again (so a bad value is an error
// naming the field, as in the file).
Result<Config> with_overrides(const Config& config, const Overrides& overrides,
                              const std::filesystem::path& repo_root);

// The agents a command runs: those named (each once, in the order given), else the
// configuration's default_agents, else all of them. A name the configuration does not have, or
// no agents at all, is a usage error naming the file (and the agent that was likely meant).
Result<std::vector<AgentConfig>> choose_agents(const Config& config,
                                               const std::vector<std::string>& names);

}  // namespace cocode::config
