// What a person typed wrong, said the way git and gh say it: one line naming the command,
// flag or value and what was expected, with a did-you-mean for a mistyped command or flag,
// instead of CLI11's own texts ("A subcommand is required", "Value 0 not in range 0.000000
// to 1797693134862315…").
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/closest_word.h"

namespace cocode::tool {

// An issue number: a whole number from 1 to 2^31-1 (GitHub's range), nothing clamped.
inline CLI::Validator issue_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            long value = 0;
            const char* end = text.data() + text.size();
            auto [at, error] = std::from_chars(text.data(), end, value);
            if (text.empty() || error != std::errc() || at != end || value < 1 ||
                value > 2147483647)
                return "expected an issue number (a whole number from 1 to 2147483647), got '" +
                       text + "'";
            return {};
        },
        "ISSUE");
}

// A whole number from `low` to `high`.
inline CLI::Validator whole_number(long low, long high) {
    return CLI::Validator(
        [low, high](std::string& text) -> std::string {
            long value = 0;
            const char* end = text.data() + text.size();
            auto [at, error] = std::from_chars(text.data(), end, value);
            if (text.empty() || error != std::errc() || at != end || value < low || value > high)
                return "expected a whole number from " + std::to_string(low) + " to " +
                       std::to_string(high) + ", got '" + text + "'";
            return {};
        },
        "INT in [" + std::to_string(low) + " - " + std::to_string(high) + "]");
}

namespace detail {

// The deepest subcommand the parse reached: where the mistake is.
inline const CLI::App* deepest(const CLI::App& app) {
    const CLI::App* at = &app;
    for (;;) {
        auto chosen = at->get_subcommands();
        if (chosen.empty()) return at;
        at = chosen.front();
    }
}

inline std::string command_path(const CLI::App& app, const CLI::App& root, std::string_view tool) {
    std::string path;
    for (const CLI::App* at = &app; at != nullptr && at != &root; at = at->get_parent())
        path = " " + at->get_name() + path;
    return std::string(tool) + path;
}

inline std::vector<std::string> subcommand_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) {
             return !s->get_group().empty();  // hidden ones (group "") are not offered
         }))
        out.push_back(sub->get_name());
    return out;
}

inline std::vector<std::string> flag_names(const CLI::App& app) {
    std::vector<std::string> out;
    for (const CLI::Option* option : app.get_options()) {
        for (const auto& name : option->get_lnames()) out.push_back("--" + name);
        for (const auto& name : option->get_snames()) out.push_back("-" + name);
    }
    return out;
}

inline std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
}

}  // namespace detail

// The one line for a parse error (without the "<tool>: error: " prefix).
inline std::string explain(const CLI::App& root, const CLI::ParseError& error, int argc,
                           char** argv, std::string_view tool) {
    using namespace detail;
    const CLI::App& at = *deepest(root);
    const std::string where = command_path(at, root, tool);
    const std::string help = " (see `" + where + " --help`)";
    const std::string what = error.what();
    const std::vector<std::string> args(argv + 1, argv + argc);
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr;
    // `word` ("--agnet=x") is no option of the command's: said with its nearest one.
    const auto unknown_option = [&](const std::string& word) {
        const std::string flag = word.substr(0, word.find('='));
        const std::string near = closest_word(flag, flag_names(at)).value_or("");
        return "unknown option '" + flag + "' for `" + where + "`" +
               (near.empty() ? "" : "; did you mean '" + near + "'?") + help;
    };

    // A command was needed: say which exist, and which one a mistyped word was near.
    if (what.find("subcommand is required") != std::string::npos ||
        (extras && !subcommand_names(at).empty())) {
        const auto names = subcommand_names(at);
        for (const auto& word : args) {
            if (word.empty() || word[0] == '-') continue;
            bool known = false;
            for (const CLI::App* a = &at; a != nullptr; a = a->get_parent())
                known = known || a->get_name() == word;
            if (known) continue;
            const std::string near = closest_word(word, names).value_or("");
            return "unknown command '" + word + "' for `" + where + "`" +
                   (near.empty() ? "" : "; did you mean '" + near + "'?") +
                   " Commands: " + join(names) + ".";
        }
        return "`" + where + "` needs a command: " + join(names) + help;
    }
    if (extras) {
        for (const auto& word : args) {
            if (what.find(word) == std::string::npos) continue;
            if (!word.empty() && word[0] == '-') return unknown_option(word);
            return "unexpected argument '" + word + "' for `" + where + "`" + help;
        }
    }
    // The validators above already say "NAME: expected …, got '…'"; a value CLI11 could not
    // convert says what it got.
    const bool conversion = dynamic_cast<const CLI::ConversionError*>(&error) != nullptr;
    if (conversion || dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
        // Unless a mistyped option came first: its value was then taken for a positional one,
        // whose check failed (`run 2 --agnet good`: "got 'good'"). The option is the mistake.
        std::vector<std::string> known;
        for (const CLI::App* a = &at; a != nullptr; a = a->get_parent())
            for (const auto& name : flag_names(*a)) known.push_back(name);
        for (const auto& word : args) {
            if (word == "--") break;
            if (word.rfind("--", 0) != 0 || word.size() < 3) continue;
            if (std::find(known.begin(), known.end(), word.substr(0, word.find('='))) ==
                known.end())
                return unknown_option(word);
        }
        const std::size_t colon = what.find(": ");
        const std::string name = colon == std::string::npos ? "" : what.substr(0, colon);
        std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
        if (conversion) detail = "expected a value of its kind, got: " + detail;
        // CLI::IsMember: "foo not in {open,closed,all}".
        const std::size_t set = detail.find(" not in {");
        if (set != std::string::npos && detail.back() == '}') {
            std::string choices = detail.substr(set + 9, detail.size() - set - 10);
            for (std::size_t comma = choices.find(','); comma != std::string::npos;
                 comma = choices.find(',', comma + 2))
                choices.replace(comma, 1, ", ");
            detail = "expected one of " + choices + ", got '" + detail.substr(0, set) + "'";
        }
        return (name.empty() ? "" : name + ": ") + detail + help;
    }
    // "--concurrency: 1 required INT:INT in [1 - 64] missing": a flag given without its value.
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr &&
        what.find(" required ") != std::string::npos &&
        what.find(" missing") != std::string::npos) {
        const std::size_t colon = what.find(": ");
        return (colon == std::string::npos ? std::string("an option") : what.substr(0, colon)) +
               ": expects a value" + help;
    }
    // The rest (a missing required option, …) are already one plain line.
    std::string line = what;
    if (!line.empty())
        line[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(line[0])));
    return line + help;
}

}  // namespace cocode::tool
