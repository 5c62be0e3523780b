// Parsing JSON that a person wrote or a program left on disk, with errors that name the line.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

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

}  // namespace cocode
