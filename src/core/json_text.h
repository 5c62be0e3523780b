// Parsing JSON that a person wrote or a program left on disk, with errors that name the line.
#pragma once

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/result.h"

namespace cocode {

// "<source>:<line>: not valid JSON (expected <expected>)" on a syntax error, exit code 2.
Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view source,
                                       std::string_view expected);
// The same, keeping objects' keys in the order they were written (what a person configures
// in order, such as agents, stays in that order).
Result<nlohmann::ordered_json> parse_ordered_json_text(std::string_view text,
                                                       std::string_view source,
                                                       std::string_view expected);

// The first line of JSON lines (a CLI's session file, a run's events) that holds `needle` and
// is an object `accept` takes; lines without the needle are not parsed.
std::optional<nlohmann::json> first_json_line(
    std::string_view text, std::string_view needle,
    const std::function<bool(const nlohmann::json&)>& accept);

// JSON text of `value`, bytes that are not UTF-8 (an agent's output can hold any) replaced
// rather than refused: never throws. `indent` as nlohmann's dump (-1: one line).
inline std::string json_dump(const nlohmann::json& value, int indent = -1) {
    return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
inline std::string json_dump(const nlohmann::ordered_json& value, int indent = -1) {
    return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// JSON text a tool prints for a program to read (--json): json_dump, and in GitHub Actions
// kept from reading as a workflow command (workflow_safe_json): the runner reads the step's
// output too, and an agent's text in a string could hold `##[`.
std::string json_output(const nlohmann::json& value, int indent = -1);

// A member of a JSON object that came from elsewhere (an agent's output, a file an agent
// could write, an answer from GitHub): `fallback` when `object` is not an object, has no such
// member, or holds it with another type. Never throws.
template <class T>
T json_value(const nlohmann::json& object, std::string_view key, T fallback) {
    if (!object.is_object()) return fallback;
    auto it = object.find(key);
    if (it == object.end()) return fallback;
    if constexpr (std::is_same_v<T, bool>) {
        return it->is_boolean() ? it->template get<bool>() : fallback;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return it->is_string() ? it->template get<std::string>() : fallback;
    } else if constexpr (std::is_integral_v<T>) {
        if (!it->is_number_integer()) return fallback;
        const auto n = it->template get<long long>();
        if (n < static_cast<long long>(std::numeric_limits<T>::min()) ||
            (n > 0 && static_cast<unsigned long long>(n) >
                          static_cast<unsigned long long>(std::numeric_limits<T>::max())))
            return fallback;
        return static_cast<T>(n);
    } else if constexpr (std::is_floating_point_v<T>) {
        return it->is_number() ? it->template get<T>() : fallback;
    } else {
        static_assert(std::is_same_v<T, nlohmann::json>, "json_value: a scalar or json");
        return *it;
    }
}
inline std::string json_value(const nlohmann::json& object, std::string_view key,
                              const char* fallback) {
    return json_value<std::string>(object, key, std::string(fallback));
}

}  // namespace cocode
