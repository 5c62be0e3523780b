#include "config/presets.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace cocode::config {
namespace fs = std::filesystem;

namespace {

// Tested against the CLIs from npm on 2026-11-22, each driven by a scripted fake of its
// provider's API (tests/e2e/agent_cli_test.cpp); docs/configuration.md keeps the table.
const CliPreset kClaude{
    AgentType::claude,
    "claude",
    // stream-json streams one JSON event per line (text prints only at exit); it needs
    // --verbose in print mode.
    {"-p", "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--verbose"},
    "ANTHROPIC_API_KEY",
    {{"",
      {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
       "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
       "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
       "ANTHROPIC_CUSTOM_HEADERS", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
       "DISABLE_TELEMETRY", "IS_SANDBOX", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
       "CLAUDE_CODE_USE_FOUNDRY"}},
     {"CLAUDE_CODE_USE_BEDROCK",
      {"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID",
       "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
       "ANTHROPIC_BEDROCK_BASE_URL", "CLAUDE_CODE_SKIP_BEDROCK_AUTH"}},
     {"CLAUDE_CODE_USE_VERTEX",
      {"CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "ANTHROPIC_VERTEX_BASE_URL",
       "GOOGLE_APPLICATION_CREDENTIALS", "CLAUDE_CODE_SKIP_VERTEX_AUTH"}},
     {"CLAUDE_CODE_USE_FOUNDRY",
      {"ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_FOUNDRY_BASE_URL", "ANTHROPIC_FOUNDRY_RESOURCE"}}},
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
     "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
     "ANTHROPIC_FOUNDRY_API_KEY"},
    "https://api.anthropic.com",
    "ANTHROPIC_BASE_URL",
    "2.1.330",
    {"--help"},
    {".claude/.credentials.json"},
    {".claude", ".claude.json"},
};

const CliPreset kCodex{
    AgentType::codex,
    "codex",
    // Its workspace sandbox would keep it from the main repository's .git/worktrees/, where
    // a worktree's commits go (docs/configuration.md). --json streams events; `-` reads the
    // prompt from stdin.
    {"exec", "--dangerously-bypass-approvals-and-sandbox", "--json", "-"},
    "OPENAI_API_KEY",
    // `codex exec` authenticates with CODEX_API_KEY; older versions read OPENAI_API_KEY.
    {{"",
      {"CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_ACCESS_TOKEN", "AZURE_OPENAI_API_KEY",
       "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_HOME",
       "CODEX_CA_CERTIFICATE"}}},
    {"CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_ACCESS_TOKEN", "AZURE_OPENAI_API_KEY"},
    "https://api.openai.com/v1",
    "OPENAI_BASE_URL",
    "0.169.0",
    {"exec", "--help"},
    {".codex/auth.json"},
    {".codex"},
};

const CliPreset kGemini{
    AgentType::gemini,
    "gemini",
    // --skip-trust: every new worktree is a folder gemini has never been told to trust, and
    // it exits 55 in one.
    {"--yolo", "--skip-trust", "--output-format", "stream-json"},
    "GEMINI_API_KEY",
    {{"",
      {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_MODEL",
       "GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GOOGLE_GENAI_USE_VERTEXAI",
       "GOOGLE_GENAI_USE_GCA"}},
     {"GOOGLE_GENAI_USE_VERTEXAI",
      {"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_APPLICATION_CREDENTIALS",
       "GOOGLE_VERTEX_BASE_URL"}}},
    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
    "https://generativelanguage.googleapis.com",
    "GOOGLE_GEMINI_BASE_URL",
    "0.61.0",
    {"--help"},
    {".gemini/oauth_creds.json"},
    {".gemini"},
};

// The runner contract's token mapping: perplexity → PERPLEXITY_API_KEY, xai → XAI_API_KEY;
// OpenAI's own variable (codex's) for OpenAI.
constexpr ChatProvider kChatProviders[] = {
    {"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"},
    {"perplexity", "https://api.perplexity.ai", "PERPLEXITY_API_KEY", "sonar"},
    {"xai", "https://api.x.ai/v1", "XAI_API_KEY", "grok-3-mini"},
    {"openai-compatible", "", "", ""},
};

// What a TOML basic string needs escaped: codex parses `-c key=value` values as TOML.
std::string toml_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

bool env_true(EnvGetter env, const char* name) {
    auto value = env(name);
    return value && !value->empty() && *value != "0" && *value != "false";
}

}  // namespace

const ChatProvider* chat_provider(std::string_view name) {
    for (const auto& provider : kChatProviders)
        if (provider.name == name) return &provider;
    return nullptr;
}

std::string chat_provider_names() {
    std::string out;
    for (const auto& provider : kChatProviders)
        out += (out.empty() ? "" : ", ") + std::string(provider.name);
    return out;
}

std::vector<std::string> passed_variables(const CliPreset& cli,
                                          const std::function<bool(const std::string&)>& is_set) {
    std::vector<std::string> out;
    for (const auto& group : cli.env)
        if (group.when.empty() || is_set(group.when))
            out.insert(out.end(), group.names.begin(), group.names.end());
    return out;
}

const CliPreset* cli_preset(AgentType type) {
    switch (type) {
        case AgentType::claude:
            return &kClaude;
        case AgentType::codex:
            return &kCodex;
        case AgentType::gemini:
            return &kGemini;
        case AgentType::command:
        case AgentType::textproto:
        case AgentType::perplexity:
        case AgentType::xai:
        case AgentType::codali:
            break;
    }
    return nullptr;
}

LaunchAdjustments launch_adjustments(const AgentConfig& agent, const fs::path& run_folder,
                                     bool as_root, bool enclosed) {
    LaunchAdjustments out;
    switch (agent.type) {
        case AgentType::claude:
            if (agent.base_url) out.env.emplace_back("ANTHROPIC_BASE_URL", *agent.base_url);
            if (agent.model) out.env.emplace_back("ANTHROPIC_MODEL", *agent.model);
            // Claude refuses --permission-mode bypassPermissions as root unless it is told it
            // runs in a sandbox; a configured value wins.
            if (as_root && !agent.env_values.count("IS_SANDBOX"))
                out.env.emplace_back("IS_SANDBOX", "1");
            if (enclosed && !agent.env_values.count("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"))
                out.env.emplace_back("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
            break;
        case AgentType::codex:
            // codex ignores OPENAI_BASE_URL; its endpoint is a config value.
            if (agent.base_url)
                out.args_after_program = {"-c", "openai_base_url=" + toml_string(*agent.base_url)};
            if (agent.model) {
                out.args_after_program.push_back("-c");
                out.args_after_program.push_back("model=" + toml_string(*agent.model));
            }
            if (enclosed)
                for (const char* quiet : {"features.plugins=false", "analytics.enabled=false",
                                          "check_for_update_on_startup=false"})
                    out.args_after_program.insert(out.args_after_program.end(), {"-c", quiet});
            break;
        case AgentType::gemini:
            if (agent.model) out.env.emplace_back("GEMINI_MODEL", *agent.model);
            if (agent.base_url) {
                // With GOOGLE_GEMINI_BASE_URL alone gemini picks its "gateway" auth, which its
                // headless mode refuses; API-key auth must be selected in its settings. Rather
                // than edit the user's ~/.gemini, the run gets a gemini home of its own holding
                // only that setting (its sessions land there too).
                const fs::path home = run_folder / "gemini-home";
                out.env.emplace_back("GOOGLE_GEMINI_BASE_URL", *agent.base_url);
                out.env.emplace_back("GEMINI_CLI_HOME", home.string());
                nlohmann::json settings = {
                    {"security", {{"auth", {{"selectedType", "gemini-api-key"}}}}}};
                if (enclosed) settings["privacy"] = {{"usageStatisticsEnabled", false}};
                out.files.emplace_back(home / ".gemini" / "settings.json",
                                       json_dump(settings, 2) + "\n");
            }
            break;
        case AgentType::command:
        case AgentType::textproto:
        case AgentType::perplexity:
        case AgentType::xai:
        case AgentType::codali:
            break;
    }
    return out;
}

std::optional<std::string> codex_configured_base_url(EnvGetter env) {
    fs::path file;
    if (auto home = env("CODEX_HOME"); home && !home->empty())
        file = fs::path(*home) / "config.toml";
    else if (auto user_home = env("HOME"); user_home && !user_home->empty())
        file = fs::path(*user_home) / ".codex" / "config.toml";
    else
        return std::nullopt;
    std::ifstream in(file);
    std::string line;
    // Top-level keys come before the first [table]; only a basic string value is read.
    while (std::getline(in, line)) {
        const auto start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        if (line[start] == '[') break;
        std::string_view rest = std::string_view(line).substr(start);
        constexpr std::string_view kKey = "openai_base_url";
        if (rest.substr(0, kKey.size()) != kKey) continue;
        rest.remove_prefix(kKey.size());
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
            rest.remove_prefix(1);
        if (rest.empty() || rest.front() != '=') continue;
        rest.remove_prefix(1);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
            rest.remove_prefix(1);
        if (rest.size() < 2 || rest.front() != '"') return std::nullopt;
        const auto close = rest.find('"', 1);
        if (close == std::string_view::npos || close == 1) return std::nullopt;
        return std::string(rest.substr(1, close - 1));
    }
    return std::nullopt;
}

Endpoint model_endpoint(const AgentConfig& agent, EnvGetter env) {
    const CliPreset* cli = cli_preset(agent.type);
    if (!cli) return {};
    if (agent.base_url) return {agent.base_url, ""};
    if (agent.type == AgentType::claude) {
        if (env_true(env, "CLAUDE_CODE_USE_BEDROCK")) return {std::nullopt, "Bedrock"};
        if (env_true(env, "CLAUDE_CODE_USE_VERTEX")) return {std::nullopt, "Vertex AI"};
    }
    if (agent.type == AgentType::gemini && env_true(env, "GOOGLE_GENAI_USE_VERTEXAI"))
        return {std::nullopt, "Vertex AI"};
    // codex does not read OPENAI_BASE_URL any more; its endpoint is its own configuration's.
    if (agent.type == AgentType::codex) {
        if (auto from_config = codex_configured_base_url(env)) return {from_config, ""};
    } else if (!cli->endpoint_env.empty()) {
        if (auto from_env = env(cli->endpoint_env.c_str()); from_env && !from_env->empty())
            return {from_env, ""};
    }
    return {cli->default_endpoint, ""};
}

bool is_github_credential(std::string_view name) {
    static const std::vector<std::string_view> kNames = {
        "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
        "COCODE_GITHUB_APP_PRIVATE_KEY_PATH"};
    return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::vector<std::string> secret_variables() {
    std::vector<std::string> out = {"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN",
                                    "GITHUB_ENTERPRISE_TOKEN"};
    for (const CliPreset* cli : {&kClaude, &kCodex, &kGemini})
        out.insert(out.end(), cli->secrets.begin(), cli->secrets.end());
    for (const auto& provider : kChatProviders)
        if (!provider.key_env.empty() &&
            std::find(out.begin(), out.end(), provider.key_env) == out.end())
            out.emplace_back(provider.key_env);
    return out;
}

std::optional<std::string> version_in(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
        if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.'))
            continue;
        std::size_t end = i;
        int dots = 0;
        while (end < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
            dots += text[end] == '.';
            ++end;
        }
        while (end > i && text[end - 1] == '.') --end, --dots;
        if (dots >= 1) return std::string(text.substr(i, end - i));
        i = end;
    }
    return std::nullopt;
}

int compare_versions(std::string_view a, std::string_view b) {
    auto next = [](std::string_view& s) {
        long n = 0;
        while (!s.empty() && s.front() != '.') {
            if (std::isdigit(static_cast<unsigned char>(s.front()))) n = n * 10 + (s.front() - '0');
            s.remove_prefix(1);
        }
        if (!s.empty()) s.remove_prefix(1);
        return n;
    };
    while (!a.empty() || !b.empty()) {
        long x = next(a), y = next(b);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

}  // namespace cocode::config
