// YAML documents as JSON values, both ways, with libyaml: the Codali envelopes
// (protocol/envelope.h) are YAML as models write it, and cocode holds them as JSON.
//
// Reading: plain scalars are resolved as YAML 1.2's core schema does (null, true/false,
// integers, floats; anything else is a string); quoted and block scalars are strings. Anchors
// and aliases, tags other than the standard ones, and non-scalar keys are errors, each naming
// its line. Writing: block style, strings that a reader would take for something else quoted,
// multi-line strings as literal blocks where YAML allows one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"

namespace cocode {

// The first document of `text`. Errors (usage, exit 2) read "<source> line N: what".
Result<nlohmann::ordered_json> yaml_to_json(std::string_view text, std::string_view source);

// `value` as a YAML block document, without the `---` and `...` markers.
std::string json_to_yaml(const nlohmann::ordered_json& value);

}  // namespace cocode
