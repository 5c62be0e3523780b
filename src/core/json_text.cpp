#include "core/json_text.h"

#include <algorithm>
#include <string>

#include "core/terminal_text.h"

namespace cocode {

namespace {

template <class Json>
Result<Json> parse_text(std::string_view text, std::string_view source, std::string_view expected) {
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is where the parser stopped; a line number is what a person can use.
        const auto stop = static_cast<std::ptrdiff_t>(std::min(e.byte, text.size()));
        const auto line = 1 + std::count(text.begin(), text.begin() + stop, '\n');
        return Error::usage(std::string(source) + ":" + std::to_string(line) +
                            ": not valid JSON (expected " + std::string(expected) + ")");
    } catch (const nlohmann::json::exception& e) {
        // Well-formed but not representable: a number past a double's range (1e400).
        return Error::usage(std::string(source) + ": not valid JSON (" +
                            (e.id == 406 ? std::string("a number out of range") : "unreadable") +
                            "; expected " + std::string(expected) + ")");
    }
}

}  // namespace

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view source,
                                       std::string_view expected) {
    return parse_text<nlohmann::json>(text, source, expected);
}

Result<nlohmann::ordered_json> parse_ordered_json_text(std::string_view text,
                                                       std::string_view source,
                                                       std::string_view expected) {
    return parse_text<nlohmann::ordered_json>(text, source, expected);
}

std::optional<nlohmann::json> first_json_line(
    std::string_view text, std::string_view needle,
    const std::function<bool(const nlohmann::json&)>& accept) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.find(needle) == std::string_view::npos) continue;
        auto value = nlohmann::json::parse(line, nullptr, false);
        if (value.is_object() && accept(value)) return value;
    }
    return std::nullopt;
}

std::string json_output(const nlohmann::json& value, int indent) {
    std::string text = json_dump(value, indent);
    return in_github_actions() ? workflow_safe_json(text) : text;
}

}  // namespace cocode
