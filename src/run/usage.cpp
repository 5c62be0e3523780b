#include "run/usage.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json_text.h"

namespace cocode::run {

using json = nlohmann::json;

namespace {

// At most this many models and attempts are kept: the record lives in run-end.json's 4 KiB.
constexpr std::size_t kMaxModels = 8;
constexpr std::size_t kMaxAttempts = 8;

json tokens_json(const Tokens& t) {
    return {{"input", t.input}, {"output", t.output}, {"cached", t.cached}};
}

Tokens tokens_from(const json& value) {
    Tokens t;
    t.input = json_value<std::uint64_t>(value, "input", 0);
    t.output = json_value<std::uint64_t>(value, "output", 0);
    t.cached = json_value<std::uint64_t>(value, "cached", 0);
    return t;
}

json cost_json(const std::optional<double>& usd) { return usd ? json(*usd) : json(nullptr); }

std::optional<double> cost_from(const json& value) {
    if (!value.is_object() || !value.contains("cost_usd") || !value["cost_usd"].is_number())
        return std::nullopt;
    return value["cost_usd"].get<double>();
}

}  // namespace

Tokens& Tokens::operator+=(const Tokens& more) {
    input += more.input;
    output += more.output;
    cached += more.cached;
    return *this;
}

Tokens operator-(Tokens a, const Tokens& b) {
    a.input = a.input > b.input ? a.input - b.input : 0;
    a.output = a.output > b.output ? a.output - b.output : 0;
    a.cached = a.cached > b.cached ? a.cached - b.cached : 0;
    return a;
}

json usage_json(const RunUsage& usage) {
    json out = {{"tokens", tokens_json(usage.tokens)},
                {"cost_usd", cost_json(usage.cost_usd)},
                {"cost_source", usage.cost_source},
                {"billing", usage.billing},
                {"models", json::array()},
                {"attempts", json::array()}};
    for (std::size_t i = 0; i < usage.models.size() && i < kMaxModels; ++i)
        out["models"].push_back({{"model", usage.models[i].model.substr(0, 128)},
                                 {"tokens", tokens_json(usage.models[i].tokens)}});
    for (std::size_t i = 0; i < usage.attempts.size() && i < kMaxAttempts; ++i)
        out["attempts"].push_back({{"tokens", tokens_json(usage.attempts[i].tokens)},
                                   {"cost_usd", cost_json(usage.attempts[i].cost_usd)}});
    return out;
}

std::optional<RunUsage> usage_from_json(const json& value) {
    if (!value.is_object() || !value.contains("tokens") || !value["tokens"].is_object())
        return std::nullopt;
    RunUsage usage;
    usage.tokens = tokens_from(value["tokens"]);
    usage.cost_usd = cost_from(value);
    usage.cost_source = json_value(value, "cost_source", "");
    usage.billing = json_value(value, "billing", "");
    for (const auto& m : json_value(value, "models", json::array()))
        if (m.is_object())
            usage.models.push_back(
                {json_value(m, "model", ""), tokens_from(json_value(m, "tokens", json::object()))});
    for (const auto& a : json_value(value, "attempts", json::array()))
        if (a.is_object())
            usage.attempts.push_back(
                {tokens_from(json_value(a, "tokens", json::object())), cost_from(a)});
    return usage;
}

std::string format_count(std::uint64_t n) {
    char text[32];
    if (n < 1000) return std::to_string(n);
    if (n < 999'500) {
        std::snprintf(text, sizeof text, n < 10'000 ? "%.1fk" : "%.0fk",
                      static_cast<double>(n) / 1e3);
    } else {
        std::snprintf(text, sizeof text, n < 10'000'000 ? "%.2fM" : "%.1fM",
                      static_cast<double>(n) / 1e6);
    }
    std::string out = text;
    // "1.0k" reads as "1k".
    if (auto dot = out.find(".0k"); dot != std::string::npos && dot + 3 == out.size())
        out.erase(dot, 2);
    return out;
}

std::string tokens_cell(const RunUsage& usage) {
    return usage.tokens.empty() ? "-" : format_count(usage.tokens.total());
}

std::string cost_cell(const RunUsage& usage) { return format_cost(usage.cost_usd); }

std::string format_tokens(const Tokens& tokens) {
    std::string out = format_count(tokens.input) + " in";
    if (tokens.cached) out += " (" + format_count(tokens.cached) + " cached)";
    return out + " / " + format_count(tokens.output) + " out";
}

std::string usage_summary(const RunUsage& usage) {
    std::string models;
    for (const auto& m : usage.models)
        if (!m.model.empty()) models += (models.empty() ? "" : ", ") + m.model;
    return (models.empty() ? "" : models + " · ") + format_tokens(usage.tokens) + " · " +
           (usage.cost_usd ? format_cost(usage.cost_usd)
                           : "cost unknown (" + usage.cost_source + ")");
}

std::string format_cost(const std::optional<double>& usd) {
    if (!usd) return "-";
    char text[32];
    // Cents for anything from a dime; small sums keep two significant digits.
    if (*usd >= 0.1 || *usd == 0)
        std::snprintf(text, sizeof text, "$%.2f", *usd);
    else
        std::snprintf(text, sizeof text, "$%.2g", *usd);
    std::string out = text;
    if (out.find('e') != std::string::npos) return "<$0.0001";
    return out;
}

}  // namespace cocode::run
