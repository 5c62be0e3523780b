// How config/ reads a JSON document a person wrote (.cocode/config.json, a preset file): each
// error one line naming the file, the field and what was expected. Internal to config/.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/closest_word.h"
#include "core/error.h"
#include "core/result.h"

namespace cocode::config::detail {

// Keys keep the order they were written in (what is passed on keeps it too).
using Json = nlohmann::ordered_json;

struct FieldReader {
    std::string source;  // the file, as errors name it

    Error bad(const std::string& field, const std::string& expected) const {
        return Error::usage(source + ": field '" + field + "': expected " + expected);
    }

    Result<void> only_keys(const Json& object, const std::string& where,
                           const std::vector<std::string>& known) const {
        for (const auto& [key, value] : object.items()) {
            if (std::find(known.begin(), known.end(), key) != known.end()) continue;
            std::string field = where.empty() ? key : where + "." + key;
            std::string message = source + ": unknown field '" + field + "'";
            if (auto near = closest_word(key, known)) message += " (did you mean '" + *near + "'?)";
            return Error::usage(message);
        }
        return {};
    }

    Result<std::string> string(const Json& value, const std::string& field) const {
        if (!value.is_string() || value.get_ref<const std::string&>().empty())
            return bad(field, "a non-empty string");
        return value.get<std::string>();
    }

    Result<std::vector<std::string>> strings(const Json& value, const std::string& field) const {
        if (!value.is_array()) return bad(field, "a list of strings");
        std::vector<std::string> out;
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (!value[i].is_string())
                return bad(field + "[" + std::to_string(i) + "]", "a string");
            out.push_back(value[i].get<std::string>());
        }
        return out;
    }
};

}  // namespace cocode::config::detail
