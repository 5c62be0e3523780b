// The flat `key: value` YAML of run-info.yaml (the runner contract's format): one scalar per
// key, in a stable order. Read with libyaml, so that it reads run-info exactly as
// conductor-loop writes it (gopkg.in/yaml.v3: block scalars `|-`, quoted and plain scalars,
// RFC 3339 timestamps as text); a value that is not a scalar (not one of run-info's) is
// skipped. Written as plain or double-quoted scalars, which every YAML reader reads back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace cocode {

class FlatYaml {
  public:
    // Errors name the line: "<source>:<line>: expected `key: value`".
    static Result<FlatYaml> parse(std::string_view text, std::string_view source);

    std::optional<std::string> get(std::string_view key) const;
    // Strings are quoted when a YAML reader could take them for something else (a number, a
    // bool, null, or text with special characters); numbers are written plain.
    void set(std::string_view key, std::string_view value);
    void set_number(std::string_view key, long long value);

    std::string render() const;

  private:
    struct Entry {
        std::string key;
        std::string value;
        bool plain = false;  // written without quotes
    };
    Entry& slot(std::string_view key);
    std::vector<Entry> entries_;
};

}  // namespace cocode
