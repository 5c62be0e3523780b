// Tokens and cost, read from what an agent writes as it runs (docs/cost.md): the coding
// CLIs' streams (claude's assistant and result events, codex's turn.completed, gemini's
// result stats), the built-in agents' usage.jsonl, and the line a script agent may print;
// priced by the provider's own figure where the stream has one, else by the price table.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "agent/transcript.h"
#include "config/config.h"
#include "run/run_folder.h"
#include "run/usage.h"

namespace cocode::agent {

// The day the shipped price table was last checked against the providers' price pages.
inline constexpr char kPriceTableDate[] = "2025-11-24";

struct ShippedPrice {
    std::string_view model;  // a model name, or a prefix of its dated names
    config::Price price;     // USD per million tokens
};
// The shipped price table (docs/cost.md lists how to see it: `cocode-dispatch report --prices`).
const std::vector<ShippedPrice>& price_table();

// The price of `model`: the configuration's `pricing` first, then the table; in each the
// longest name that `model` starts with wins. `from_config` says which answered.
std::optional<config::Price> price_of(std::string_view model,
                                      const std::map<std::string, config::Price>& pricing,
                                      bool* from_config = nullptr);

// A script's usage lines carry its totals so far, so of what it wrote since the last look only
// the newest this much is read, however much it floods its output (docs/runs.md).
inline constexpr std::uint64_t kScriptUsageTail = std::uint64_t{256} << 10;

// What the stream says so far, as it comes: feed it chunks, lines may span them.
class UsageReader {
  public:
    // `model`: the model when the stream does not name it (codex's does not: the agent's
    // configured `model`, else the one codex's session file records).
    // `declared`: the stream the agent's preset says it prints (the run's info), else told from
    // the lines.
    // `home`: the HOME the CLI ran with, where codex keeps its sessions (a sandboxed run's own);
    // empty: ours.
    explicit UsageReader(std::string model = {}, StreamKind declared = StreamKind::unknown,
                         std::filesystem::path home = {})
        : default_model_(std::move(model)), declared_(declared), home_(std::move(home)) {}

    void feed(std::string_view bytes);
    void feed_line(std::string_view line);
    // What follows is not where the last bytes fed ended (a reader that skipped ahead): the
    // first whole line is the next one looked into.
    void skip();

    // Tokens per model, in the order first seen.
    std::vector<run::ModelTokens> models() const;
    run::Tokens tokens() const;
    // The cost the agent reported itself (claude's total_cost_usd, a script's cost_usd), and
    // who reported it ("claude", "the agent").
    std::optional<double> reported_cost() const;
    std::string reporter() const;
    // Per model, the tokens no reported cost covers: what the price table prices.
    std::map<std::string, run::Tokens> unpriced() const;

  private:
    void add(const std::string& model, const run::Tokens& tokens);
    void add_unpriced(const std::string& model, const run::Tokens& tokens);
    // One event of claude's (or qwen's) stream, and of gemini's, of type `type`.
    void feed_claude(const nlohmann::json& event, const std::string& type);
    void feed_gemini(const nlohmann::json& event, const std::string& type);

    std::string default_model_;
    StreamKind declared_ = StreamKind::unknown;
    std::filesystem::path home_;
    bool qwen_ = false;       // a qwen stream: claude's shapes, its input counting what was cached
    std::string partial_;     // a line that starts with '{', not yet ended
    bool keeping_ = false;    // partial_ is being filled
    bool line_start_ = true;  // the next byte starts a line
    std::vector<std::string> order_;
    std::map<std::string, run::Tokens> settled_;
    std::map<std::string, run::Tokens> unpriced_;
    // claude: each assistant message's usage by its id, until a result event settles them
    // (its streams repeat a message's usage once per content block).
    std::unordered_map<std::string, std::pair<std::string, run::Tokens>> pending_;
    std::optional<double> claude_cost_;
    struct ScriptUsage {
        run::Tokens tokens;
        std::optional<double> cost;
    };
    std::map<std::string, ScriptUsage> script_;  // a script's lines: the latest per model
    std::string gemini_model_;
    std::string codex_thread_;
};

// The run's usage: tokens per model, and a cost — the agent's own figure, else priced from
// `pricing` and the table; none for a subscription (`billing` "subscription"), nor when a
// model has no price.
run::RunUsage price_usage(const UsageReader& reader, const std::string& billing,
                          const std::map<std::string, config::Price>& pricing);

// A run's usage: what its end recorded, else (a run still going) read from its files now:
// its stdout, or a built-in agent's usage.jsonl, priced with `pricing` and the table.
run::RunUsage usage_of_run(const std::filesystem::path& run_folder,
                           const std::map<std::string, config::Price>& pricing);

// What the runs started on a UTC day cost together: budget.daily_usd's measure. A run with no
// known cost (a subscription, a model with no price) adds nothing and is counted apart.
struct DaySpend {
    double usd = 0;
    int runs = 0;      // runs started that day
    int unpriced = 0;  // of them, with tokens but no known cost
};
DaySpend spent_on_day(const std::vector<run::RunRecord>& runs,
                      const std::map<std::string, config::Price>& pricing,
                      std::chrono::system_clock::time_point day);

// Why no run may start now (budget.daily_usd spent today, on this machine), or nullopt:
// "budget.daily_usd: $10.40 spent today (UTC) by 7 runs, of $10.00; runs start again at
// 00:00 UTC".
std::optional<std::string> daily_budget_spent(const config::Config& config,
                                              const std::vector<run::RunRecord>& runs,
                                              std::chrono::system_clock::time_point now);

// How an agent is billed, from the environment it is given (and, for codex, the mode its
// auth.json records): "key" when it has an API key of its provider, "subscription" when a
// CLI runs signed in to a plan, "" when cocode cannot tell (a script agent).
std::string billing_of(const config::AgentConfig& agent, const std::vector<std::string>& env);

// Whether `usage` crossed one of the agent's budgets; the reason in words, or nullopt.
std::optional<std::string> budget_crossed(const config::AgentConfig& agent,
                                          const run::RunUsage& usage);

}  // namespace cocode::agent
