// What a run used and cost, as recorded in its run-end.json (`usage`) and shown by status,
// logs, the verdict's footer and `report` (docs/cost.md).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cocode::run {

struct Tokens {
    std::uint64_t input = 0;   // every input token, those read from a cache included
    std::uint64_t output = 0;  // reasoning included
    std::uint64_t cached = 0;  // of input, read from a cache

    std::uint64_t total() const { return input + output; }
    bool empty() const { return input == 0 && output == 0; }
    Tokens& operator+=(const Tokens& more);
    friend Tokens operator-(Tokens a, const Tokens& b);
    friend bool operator==(const Tokens&, const Tokens&) = default;
};

struct ModelTokens {
    std::string model;  // as the provider named it; "" when the stream does not say
    Tokens tokens;
    friend bool operator==(const ModelTokens&, const ModelTokens&) = default;
};

// One attempt's share (a run restarted after a failure has several).
struct AttemptUsage {
    Tokens tokens;
    std::optional<double> cost_usd;
    friend bool operator==(const AttemptUsage&, const AttemptUsage&) = default;
};

struct RunUsage {
    std::vector<ModelTokens> models;
    Tokens tokens;                   // all models together
    std::optional<double> cost_usd;  // nullopt when it cannot be known
    // How the cost was known: "reported by claude", "price table of 2025-11-24", "pricing in
    // the config", or why there is none: "subscription: tokens only", "no price for <model>".
    std::string cost_source;
    // "key" (an API key: billed per token), "subscription" (a CLI signed in to a plan), or ""
    // (cocode cannot tell: a script agent).
    std::string billing;
    std::vector<AttemptUsage> attempts;

    bool empty() const { return tokens.empty() && !cost_usd; }
    friend bool operator==(const RunUsage&, const RunUsage&) = default;
};

nlohmann::json usage_json(const RunUsage& usage);
// nullopt when `value` is not a usage record.
std::optional<RunUsage> usage_from_json(const nlohmann::json& value);

// A number of tokens, short: "999", "1.5k", "412k", "1.25M".
std::string format_count(std::uint64_t tokens);
// A run's tokens in and out together, short ("421k"), and its cost ("$1.84"): "-" for none.
std::string tokens_cell(const RunUsage& usage);
std::string cost_cell(const RunUsage& usage);

// "412k in / 9k out" (cached input said when there is some: "412k in (380k cached) / 9k out").
std::string format_tokens(const Tokens& tokens);
// "$1.84", "$0.0031"; "-" for none.
std::string format_cost(const std::optional<double>& usd);
// One line: "claude-sonnet-4-5 · 412k in / 9k out · $1.84", or "… · cost unknown (why)".
std::string usage_summary(const RunUsage& usage);

}  // namespace cocode::run
