#include "agent/usage.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "agent/builtin.h"
#include "agent/sessions.h"
#include "agent/transcript.h"
#include "config/presets.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "run/run_folder.h"

namespace cocode::agent {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<ShippedPrice>& price_table() {
    // USD per million tokens: input, output, input read from a cache. Standard tier, prompts
    // of up to 200k tokens; a cache write is counted as input.
    static const std::vector<ShippedPrice> table = {
        {"claude-opus-4-5", {5, 25, 0.5}},
        {"claude-opus-4", {15, 75, 1.5}},
        {"claude-sonnet-4", {3, 15, 0.3}},
        {"claude-3-7-sonnet", {3, 15, 0.3}},
        {"claude-3-5-sonnet", {3, 15, 0.3}},
        {"claude-haiku-4-5", {1, 5, 0.1}},
        {"claude-3-5-haiku", {0.8, 4, 0.08}},
        {"gpt-5", {1.25, 10, 0.125}},
        {"gpt-5-mini", {0.25, 2, 0.025}},
        {"gpt-5-nano", {0.05, 0.4, 0.005}},
        {"gpt-4.1", {2, 8, 0.5}},
        {"gpt-4.1-mini", {0.4, 1.6, 0.1}},
        {"gpt-4.1-nano", {0.1, 0.4, 0.025}},
        {"gpt-4o", {2.5, 10, 1.25}},
        {"gpt-4o-mini", {0.15, 0.6, 0.075}},
        {"o3", {2, 8, 0.5}},
        {"o3-mini", {1.1, 4.4, 0.55}},
        {"o4-mini", {1.1, 4.4, 0.275}},
        {"codex-mini", {1.5, 6, 0.375}},
        {"gemini-3-pro", {2, 12, 0.2}},
        {"gemini-2.5-pro", {1.25, 10, 0.125}},
        {"gemini-2.5-flash", {0.3, 2.5, 0.03}},
        {"gemini-2.5-flash-lite", {0.1, 0.4, 0.01}},
        {"gemini-2.0-flash", {0.1, 0.4, 0.025}},
        {"sonar", {1, 1, 1}},
        {"sonar-pro", {3, 15, 3}},
        {"grok-4", {3, 15, 0.75}},
        {"grok-code-fast", {0.2, 1.5, 0.02}},
        {"grok-3-mini", {0.3, 0.5, 0.075}},
    };
    return table;
}

namespace {

// The longest key of `names` that `model` starts with.
template <typename Range, typename Name>
auto longest_prefix(const Range& names, std::string_view model, Name name_of) {
    auto best = names.end();
    std::size_t length = 0;
    for (auto it = names.begin(); it != names.end(); ++it) {
        const std::string_view name = name_of(*it);
        if (name.size() > length && model.substr(0, name.size()) == name) {
            best = it;
            length = name.size();
        }
    }
    return best;
}

double priced(const config::Price& price, const run::Tokens& t) {
    const std::uint64_t cached = std::min(t.cached, t.input);
    return (static_cast<double>(t.input - cached) * price.input +
            static_cast<double>(cached) * price.cached +
            static_cast<double>(t.output) * price.output) /
           1e6;
}

std::uint64_t count(const json& object, std::string_view key) {
    if (!object.is_object()) return 0;
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return 0;
    const double n = it->get<double>();
    return n > 0 ? static_cast<std::uint64_t>(n) : 0;
}

// Usage whose input count includes what was read from a cache (OpenAI's, Gemini's, a
// script's), under each provider's own names; no cached key: nothing cached.
run::Tokens tokens_of(const json& usage, const char* input, const char* cached,
                      const char* output) {
    run::Tokens t;
    t.input = count(usage, input);
    t.cached = cached ? std::min(count(usage, cached), t.input) : 0;
    t.output = count(usage, output);
    return t;
}

// Anthropic's usage: input_tokens leaves out what was read from or written to the cache.
run::Tokens claude_tokens(const json& usage, const char* input, const char* output,
                          const char* cache_read, const char* cache_write) {
    run::Tokens t;
    t.cached = count(usage, cache_read);
    t.input = count(usage, input) + t.cached + count(usage, cache_write);
    t.output = count(usage, output);
    return t;
}

}  // namespace

std::optional<config::Price> price_of(std::string_view model,
                                      const std::map<std::string, config::Price>& pricing,
                                      bool* from_config) {
    if (model.empty()) return std::nullopt;
    // A provider's prefix ("models/gemini-2.5-pro", "openai/gpt-5") names the same model.
    if (auto slash = model.rfind('/'); slash != std::string_view::npos)
        if (pricing.find(std::string(model)) == pricing.end()) model.remove_prefix(slash + 1);
    if (auto own = longest_prefix(pricing, model,
                                  [](const auto& p) -> std::string_view { return p.first; });
        own != pricing.end()) {
        if (from_config) *from_config = true;
        return own->second;
    }
    const auto& table = price_table();
    auto shipped = longest_prefix(table, model, [](const ShippedPrice& p) { return p.model; });
    if (shipped == table.end()) return std::nullopt;
    if (from_config) *from_config = false;
    return shipped->price;
}

void UsageReader::feed(std::string_view bytes) {
    // Only lines that start with '{' can carry usage. Most of an agent's output is not such a
    // line, and memchr passes over it at memory speed: a line is looked into only when a '{'
    // starts it.
    constexpr std::size_t kLongest = std::size_t{1} << 20;  // a longer line is no usage line
    const char* p = bytes.data();
    const char* const end = p + bytes.size();
    auto find = [&](const char* from, char c) {
        return static_cast<const char*>(std::memchr(from, c, static_cast<std::size_t>(end - from)));
    };
    while (p < end) {
        if (keeping_) {
            const char* nl = find(p, '\n');
            const std::size_t room = kLongest - std::min(kLongest, partial_.size());
            partial_.append(p, std::min(room, static_cast<std::size_t>((nl ? nl : end) - p)));
            if (!nl) return;
            feed_line(partial_);
            partial_.clear();
            keeping_ = false;
            p = nl + 1;
            line_start_ = true;
            continue;
        }
        if (line_start_) {
            line_start_ = false;
            if (*p == '{') {
                keeping_ = true;
                continue;
            }
        }
        const char* brace = find(p, '{');
        if (!brace) {
            line_start_ = end[-1] == '\n';
            return;
        }
        if (brace > p && brace[-1] == '\n') {  // a line that starts with '{'
            p = brace;
            line_start_ = true;
            continue;
        }
        const char* nl = find(brace, '\n');  // a '{' within a line: on to the next line
        if (!nl) return;
        p = nl + 1;
        line_start_ = true;
    }
}

void UsageReader::add(const std::string& model, const run::Tokens& tokens) {
    if (!settled_.count(model) && !unpriced_.count(model) &&
        std::find(order_.begin(), order_.end(), model) == order_.end())
        order_.push_back(model);
    settled_[model] += tokens;
}

void UsageReader::add_unpriced(const std::string& model, const run::Tokens& tokens) {
    add(model, tokens);
    unpriced_[model] += tokens;
}

void UsageReader::feed_claude(const json& event, const std::string& type) {
    if (type == "system" && (event.contains("qwen_code_version") || declared_ == StreamKind::qwen))
        qwen_ = true;
    if (type == "assistant" && event.contains("message") && event["message"].is_object()) {
        const json& message = event["message"];
        if (!message.contains("usage")) return;
        const std::string id = json_value(message, "id", "");
        pending_[id.empty() ? std::to_string(pending_.size()) : id] = {
            json_value(message, "model", default_model_),
            qwen_ ? tokens_of(message["usage"], "input_tokens", "cache_read_input_tokens",
                              "output_tokens")
                  : claude_tokens(message["usage"], "input_tokens", "output_tokens",
                                  "cache_read_input_tokens", "cache_creation_input_tokens")};
    } else if (type == "result") {
        // The attempt's own account settles what its messages said.
        const json& by_model = json_value(event, "modelUsage", json::object());
        const bool cost = event.contains("total_cost_usd") && event["total_cost_usd"].is_number();
        if (by_model.is_object() && !by_model.empty()) {
            for (const auto& [model, u] : by_model.items()) {
                const run::Tokens t =
                    claude_tokens(u, "inputTokens", "outputTokens", "cacheReadInputTokens",
                                  "cacheCreationInputTokens");
                cost ? add(model, t) : add_unpriced(model, t);
            }
        } else {
            for (const auto& [id, entry] : pending_)
                cost ? add(entry.first, entry.second) : add_unpriced(entry.first, entry.second);
        }
        pending_.clear();
        if (cost) claude_cost_ = claude_cost_.value_or(0) + event["total_cost_usd"].get<double>();
    }
}

void UsageReader::feed_gemini(const json& event, const std::string& type) {
    if (type == "init") {
        gemini_model_ = json_value(event, "model", "");
    } else if (type == "result" && event.contains("stats")) {
        const json& stats = event["stats"];
        const json& by_model = json_value(stats, "models", json::object());
        if (by_model.is_object() && !by_model.empty()) {
            for (const auto& [model, s] : by_model.items())
                add_unpriced(model, tokens_of(s, "input_tokens", "cached", "output_tokens"));
        } else {
            add_unpriced(gemini_model_.empty() ? default_model_ : gemini_model_,
                         tokens_of(stats, "input_tokens", "cached", "output_tokens"));
        }
    }
}

void UsageReader::feed_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Most lines are text or events without usage: only those that can carry it are parsed.
    if (line.empty() || line.front() != '{') return;
    const bool may = line.find("usage") != std::string_view::npos ||
                     line.find("\"stats\"") != std::string_view::npos ||
                     line.find("prompt_tokens") != std::string_view::npos ||
                     line.find("\"init\"") != std::string_view::npos ||
                     line.find("okens") != std::string_view::npos ||
                     line.find("thread.started") != std::string_view::npos;
    if (!may) return;
    const json event = json::parse(line, nullptr, false);
    if (!event.is_object()) return;
    const std::string type = json_value(event, "type", "");

    if (type == "cocode.usage") {
        // A script's own line (docs/runs.md): a model's totals so far; the latest counts.
        const std::string model = json_value(event, "model", "");
        ScriptUsage& u = script_[model];
        u.tokens = tokens_of(event, "input_tokens", "cached_tokens", "output_tokens");
        u.cost.reset();
        if (event.contains("cost_usd") && event["cost_usd"].is_number() &&
            event["cost_usd"].get<double>() >= 0)
            u.cost = event["cost_usd"].get<double>();
        if (std::find(order_.begin(), order_.end(), model) == order_.end()) order_.push_back(model);
        return;
    }
    if (type.empty() && event.contains("call") && event.contains("prompt_tokens")) {
        // The built-in agents' usage.jsonl: one line per chat call.
        add_unpriced(json_value(event, "model", default_model_),
                     tokens_of(event, "prompt_tokens", nullptr, "completion_tokens"));
        return;
    }
    switch (recognise(event, declared_)) {
        case StreamKind::claude:
        case StreamKind::qwen:
            feed_claude(event, type);
            return;
        case StreamKind::codex:
            if (type == "thread.started") {
                codex_thread_ = json_value(event, "thread_id", "");
            } else if (type == "turn.completed" && event.contains("usage")) {
                // codex's stream does not name its model; its session file does.
                if (default_model_.empty() && !codex_thread_.empty())
                    default_model_ = codex_session_model(codex_thread_, home_);
                add_unpriced(default_model_, tokens_of(event["usage"], "input_tokens",
                                                       "cached_input_tokens", "output_tokens"));
            }
            return;
        case StreamKind::gemini:
            feed_gemini(event, type);
            return;
        case StreamKind::copilot:
            return;  // its stream names no tokens (1.0.102, with a provider of your own)
        case StreamKind::opencode:
            // Each step's tokens; input leaves out what was read from or written to the cache.
            if (type == "step_finish") {
                const json& tokens =
                    json_value(json_value(event, "part", json::object()), "tokens", json::object());
                const json& cache = json_value(tokens, "cache", json::object());
                run::Tokens t;
                t.cached = count(cache, "read");
                t.input = count(tokens, "input") + t.cached + count(cache, "write");
                t.output = count(tokens, "output") + count(tokens, "reasoning");
                add_unpriced(default_model_, t);
            }
            return;
        case StreamKind::pi:
            // Each answer's usage, once: at its message_end.
            if (type == "message_end") {
                const json& message = json_value(event, "message", json::object());
                if (json_value(message, "role", "") != "assistant" || !message.contains("usage"))
                    return;
                add_unpriced(
                    json_value(message, "model", default_model_),
                    claude_tokens(message["usage"], "input", "output", "cacheRead", "cacheWrite"));
            }
            return;
        case StreamKind::cline:
            // Each call's usage (its input counting what was cached); the totals after it repeat.
            if (type == "agent_event") {
                const json& e = json_value(event, "event", json::object());
                if (json_value(e, "type", "") == "usage")
                    add_unpriced(default_model_,
                                 tokens_of(e, "inputTokens", "cacheReadTokens", "outputTokens"));
            }
            return;
        case StreamKind::droid:
            // The session's usage, at its end, in claude's terms.
            if (type == "completion" && event.contains("usage"))
                add_unpriced(
                    default_model_,
                    claude_tokens(event["usage"], "input_tokens", "output_tokens",
                                  "cache_read_input_tokens", "cache_creation_input_tokens"));
            return;
        case StreamKind::unknown:
            return;
    }
}

std::optional<double> UsageReader::reported_cost() const {
    std::optional<double> cost = claude_cost_;
    for (const auto& [model, u] : script_)
        if (u.cost) cost = cost.value_or(0) + *u.cost;
    return cost;
}

std::string UsageReader::reporter() const {
    if (claude_cost_) return "claude";
    return reported_cost() ? "the agent" : "";
}

void UsageReader::skip() {
    partial_.clear();
    keeping_ = false;
    line_start_ = false;
}

std::vector<run::ModelTokens> UsageReader::models() const {
    std::map<std::string, run::Tokens> all = settled_;
    for (const auto& [model, u] : script_) all[model] += u.tokens;
    std::vector<std::string> order = order_;
    for (const auto& [id, entry] : pending_) {
        if (!all.count(entry.first) &&
            std::find(order.begin(), order.end(), entry.first) == order.end())
            order.push_back(entry.first);
        all[entry.first] += entry.second;
    }
    std::vector<run::ModelTokens> out;
    for (const auto& model : order)
        if (auto it = all.find(model); it != all.end() && !it->second.empty())
            out.push_back({model, it->second});
    return out;
}

std::map<std::string, run::Tokens> UsageReader::unpriced() const {
    std::map<std::string, run::Tokens> out = unpriced_;
    for (const auto& [model, u] : script_)
        if (!u.cost) out[model] += u.tokens;
    for (const auto& [id, entry] : pending_) out[entry.first] += entry.second;
    return out;
}

run::Tokens UsageReader::tokens() const {
    run::Tokens total;
    for (const auto& m : models()) total += m.tokens;
    return total;
}

run::RunUsage price_usage(const UsageReader& reader, const std::string& billing,
                          const std::map<std::string, config::Price>& pricing) {
    run::RunUsage usage;
    usage.billing = billing;
    usage.models = reader.models();
    usage.tokens = reader.tokens();
    if (usage.tokens.empty() && !reader.reported_cost()) return usage;
    if (billing == "subscription") {
        usage.cost_source = "subscription: tokens only";
        return usage;
    }
    double cost = reader.reported_cost().value_or(0);
    bool table = false, configured = false;
    for (const auto& [model, tokens] : reader.unpriced()) {
        if (tokens.empty()) continue;
        bool from_config = false;
        auto price = price_of(model, pricing, &from_config);
        if (!price) {
            usage.cost_source = model.empty() ? "the model is not known (set the agent's model)"
                                              : "no price for " + model;
            return usage;
        }
        cost += priced(*price, tokens);
        (from_config ? configured : table) = true;
    }
    std::vector<std::string> sources;
    if (reader.reported_cost()) sources.push_back("reported by " + reader.reporter());
    if (configured) sources.push_back("pricing in the config");
    if (table) sources.push_back(std::string("price table of ") + kPriceTableDate);
    for (std::size_t i = 0; i < sources.size(); ++i)
        usage.cost_source += (i == 0 ? "" : i + 1 == sources.size() ? " and " : ", ") + sources[i];
    usage.cost_usd = cost;
    return usage;
}

run::RunUsage usage_of_run(const fs::path& run_folder,
                           const std::map<std::string, config::Price>& pricing) {
    const run::RunFiles files{run_folder};
    if (auto end = run::read_run_end(files); end && end->usage) return *end->usage;
    auto info = run::read_run_info(run_folder);
    if (!info) return {};
    UsageReader reader(info->get("model").value_or(""),
                       stream_kind(info->get("stream").value_or("")));
    // Only a built-in agent writes usage.jsonl; a script's latest lines are at its end.
    std::error_code ec;
    fs::path source = run_folder / kUsageFile;
    std::uint64_t from = 0;
    if (!fs::exists(source, ec)) {
        source = files.stdout_file();
        const auto size = fs::file_size(source, ec);
        if (!ec && info->get("agent_type").value_or("") == "command" && size > kScriptUsageTail) {
            from = size - kScriptUsageTail;
            reader.skip();
        }
    }
    scan_file_from(source, from, std::numeric_limits<std::uint64_t>::max(),
                   [&](std::string_view bytes) { reader.feed(bytes); });
    return price_usage(reader, info->get("billing").value_or(""), pricing);
}

namespace {

// "2026-11-25" of a time, in UTC.
std::string utc_day(std::chrono::system_clock::time_point time) {
    return format_utc_timestamp(time).substr(0, 10);
}

}  // namespace

DaySpend spent_on_day(const std::vector<run::RunRecord>& runs,
                      const std::map<std::string, config::Price>& pricing,
                      std::chrono::system_clock::time_point day) {
    const std::string wanted = utc_day(day);
    DaySpend spend;
    for (const auto& r : runs) {
        // A run not started yet has its folder's time: it counts from the day it was made.
        const std::string started = r.start_time.empty() ? r.run_id.substr(0, 8) : r.start_time;
        const std::string on =
            started.size() >= 10 && started[4] == '-'
                ? started.substr(0, 10)
                : started.substr(0, 4) + "-" + started.substr(4, 2) + "-" + started.substr(6, 2);
        if (on != wanted) continue;
        ++spend.runs;
        const run::RunUsage usage = usage_of_run(r.folder, pricing);
        if (usage.cost_usd)
            spend.usd += *usage.cost_usd;
        else if (!usage.tokens.empty())
            ++spend.unpriced;
    }
    return spend;
}

std::optional<std::string> daily_budget_spent(const config::Config& config,
                                              const std::vector<run::RunRecord>& runs,
                                              std::chrono::system_clock::time_point now) {
    if (!config.budget.daily_usd) return std::nullopt;
    const DaySpend spend = spent_on_day(runs, config.pricing, now);
    if (spend.usd < *config.budget.daily_usd) return std::nullopt;
    return "budget.daily_usd: " + run::format_cost(spend.usd) + " spent today (UTC) by " +
           std::to_string(spend.runs) + (spend.runs == 1 ? " run" : " runs") + ", of " +
           run::format_cost(*config.budget.daily_usd) + "; runs start again at 00:00 UTC";
}

namespace {

bool has_variable(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& entry : env)
        if (entry.size() > name.size() + 1 && entry.compare(0, name.size(), name) == 0 &&
            entry[name.size()] == '=')
            return true;
    return false;
}
bool has_variable(const std::vector<std::string>& env, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const char* name) { return has_variable(env, std::string_view(name)); });
}
bool has_variable(const std::vector<std::string>& env, const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(),
                       [&](const std::string& name) { return has_variable(env, name); });
}

std::string variable(const std::vector<std::string>& env, std::string_view name) {
    for (const auto& entry : env)
        if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
            entry[name.size()] == '=')
            return entry.substr(name.size() + 1);
    return {};
}

// codex records how it was signed in: `auth_mode` "apikey", or an OPENAI_API_KEY kept there.
// Only those two fields are read; nothing of the file is kept.
bool codex_signed_in_with_key(const std::vector<std::string>& env) {
    fs::path home = variable(env, "CODEX_HOME");
    if (home.empty()) {
        const std::string user_home = variable(env, "HOME");
        if (user_home.empty()) return false;
        home = fs::path(user_home) / ".codex";
    }
    auto text = read_file(home / "auth.json", 1 << 20);
    if (!text) return false;
    const json auth = json::parse(*text, nullptr, false);
    if (!auth.is_object()) return false;
    if (json_value(auth, "auth_mode", "") == "apikey") return true;
    return auth.contains("OPENAI_API_KEY") && auth["OPENAI_API_KEY"].is_string() &&
           !auth["OPENAI_API_KEY"].get_ref<const std::string&>().empty();
}

}  // namespace

std::string billing_of(const config::AgentConfig& agent, const std::vector<std::string>& env) {
    switch (agent.type) {
        case config::AgentType::claude:
            return has_variable(
                       env, {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
                             "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"})
                       ? "key"
                       : "subscription";
        case config::AgentType::codex:
            return has_variable(env, {"CODEX_API_KEY", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"}) ||
                           codex_signed_in_with_key(env)
                       ? "key"
                       : "subscription";
        case config::AgentType::gemini:
            return has_variable(env,
                                {"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"})
                       ? "key"
                       : "subscription";
        case config::AgentType::cli:
            // A declared preset's CLI bills its key's owner; a sign-in of its own is its
            // subscription.
            if (const config::CliPreset* cli = config::cli_preset(agent))
                return has_variable(env, cli->secrets) ? "key" : "subscription";
            break;
        case config::AgentType::textproto:
        case config::AgentType::perplexity:
        case config::AgentType::xai:
        case config::AgentType::codali:
            return "key";
        case config::AgentType::command:
            break;
    }
    return {};
}

std::optional<std::string> budget_crossed(const config::AgentConfig& agent,
                                          const run::RunUsage& usage) {
    if (agent.max_tokens && usage.tokens.total() > *agent.max_tokens)
        return "used " + std::to_string(usage.tokens.total()) + " tokens, past max_tokens " +
               std::to_string(*agent.max_tokens);
    if (agent.max_cost_usd && usage.cost_usd && *usage.cost_usd > *agent.max_cost_usd)
        return "cost " + run::format_cost(usage.cost_usd) + ", past max_cost_usd " +
               run::format_cost(*agent.max_cost_usd);
    return std::nullopt;
}

}  // namespace cocode::agent
