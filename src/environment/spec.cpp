#include "environment/spec.h"

#include <nlohmann/json.hpp>

#include "proc/command.h"

namespace cocode::environment {
namespace {

using json = nlohmann::ordered_json;

// JSON with comments (as nlohmann reads them) and trailing commas, which devcontainer.json
// allows (it is JSONC): the commas before a closing bracket dropped, strings and comments
// kept as they are.
std::string without_trailing_commas(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t pending = std::string::npos;  // where in `out` the last comma went
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            const std::size_t start = i++;
            while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
            out.append(text.substr(start, i - start + 1));
            pending = std::string::npos;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
            const bool line = text[i + 1] == '/';
            const std::size_t end = line ? text.find('\n', i) : text.find("*/", i + 2);
            const std::size_t stop = end == std::string::npos ? text.size() : line ? end : end + 2;
            out.append(text.substr(i, stop - i));
            i = stop - 1;
            continue;
        }
        if ((c == '}' || c == ']') && pending != std::string::npos) out[pending] = ' ';
        if (c == ',')
            pending = out.size();
        else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            pending = std::string::npos;
        out += c;
    }
    return out;
}

// One lifecycle command in its three forms, as `sh -c` lines.
Result<std::vector<std::string>> commands_of(const json& value, const std::string& source,
                                             const std::string& field) {
    auto bad = [&](const std::string& expected) {
        return Error::usage(source + ": field '" + field + "': expected " + expected);
    };
    auto from_array = [&](const json& array, const std::string& where) -> Result<std::string> {
        std::vector<std::string> argv;
        for (const auto& word : array) {
            if (!word.is_string())
                return Error::usage(source + ": field '" + where +
                                    "': expected a list of strings (a program and its arguments)");
            argv.push_back(word.get<std::string>());
        }
        if (argv.empty())
            return Error::usage(source + ": field '" + where + "': expected a program to run");
        return shell_command(argv);
    };
    std::vector<std::string> out;
    if (value.is_string()) {
        if (!value.get<std::string>().empty()) out.push_back(value.get<std::string>());
    } else if (value.is_array()) {
        auto line = from_array(value, field);
        if (!line) return std::move(line).error();
        out.push_back(*line);
    } else if (value.is_object()) {
        for (const auto& [name, command] : value.items()) {
            const std::string where = field + "." + name;
            if (command.is_string()) {
                if (!command.get<std::string>().empty()) out.push_back(command.get<std::string>());
            } else if (command.is_array()) {
                auto line = from_array(command, where);
                if (!line) return std::move(line).error();
                out.push_back(*line);
            } else {
                return Error::usage(source + ": field '" + where +
                                    "': expected a command (a string or a list of strings)");
            }
        }
    } else {
        return bad("a command: a string, a list of strings, or an object of those");
    }
    return out;
}

}  // namespace

std::vector<std::string> with_env(const std::vector<std::string>& base,
                                  const std::vector<std::pair<std::string, std::string>>& env,
                                  const std::filesystem::path& tree) {
    auto value_in = [](const std::vector<std::string>& entries, const std::string& name) {
        for (const auto& entry : entries)
            if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
                entry[name.size()] == '=')
                return entry.substr(name.size() + 1);
        return std::string();
    };
    std::vector<std::string> out = base;
    for (const auto& setting : env) {
        const std::string& name = setting.first;
        const std::string& value = setting.second;
        std::string expanded;
        for (std::size_t i = 0; i < value.size();) {
            const std::size_t open = value.find("${", i);
            const std::size_t close = open == std::string::npos ? open : value.find('}', open);
            if (close == std::string::npos) {
                expanded += value.substr(i);
                break;
            }
            expanded += value.substr(i, open - i);
            const std::string what = value.substr(open + 2, close - open - 2);
            if (what == "tree")
                expanded += tree.string();
            else if (what.rfind("env:", 0) == 0)
                expanded += value_in(base, what.substr(4));
            else
                expanded += value.substr(open, close - open + 1);  // not ours: as written
            i = close + 1;
        }
        std::erase_if(out, [&](const std::string& entry) {
            return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
                   entry[name.size()] == '=';
        });
        out.push_back(name + "=" + expanded);
    }
    return out;
}

Result<Spec> devcontainer_spec(std::string_view text, const std::string& source) {
    const json doc = json::parse(without_trailing_commas(text), nullptr, false, true);
    if (doc.is_discarded() || !doc.is_object())
        return Error::usage(source + ": expected a JSON object (JSON with comments)");
    Spec spec;
    spec.source = source;
    for (const char* field : {"onCreateCommand", "updateContentCommand", "postCreateCommand"}) {
        if (!doc.contains(field)) continue;
        auto commands = commands_of(doc[field], source, field);
        if (!commands) return std::move(commands).error();
        if (!commands->empty()) spec.fields.push_back(field);
        spec.setup.insert(spec.setup.end(), commands->begin(), commands->end());
    }
    for (const char* field : {"image", "build", "dockerFile", "dockerComposeFile"})
        if (doc.contains(field)) spec.not_used.push_back(field);
    return spec;
}

std::string describe(const Spec& spec) {
    auto list = [](const std::vector<std::string>& words) {
        std::string out;
        for (std::size_t i = 0; i < words.size(); ++i)
            out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
        return out;
    };
    const std::string commands =
        std::to_string(spec.setup.size()) + (spec.setup.size() == 1 ? " command" : " commands");
    if (spec.fields.empty()) return spec.source + ": " + commands;
    std::string line = spec.source + ": its " + list(spec.fields) + " (" + commands +
                       ") prepare the environment, run on this host under cocode's sandbox";
    if (!spec.not_used.empty())
        line += "; its " + list(spec.not_used) + " is not used (cocode runs no containers)";
    return line;
}

Result<std::optional<Spec>> spec_of(const config::Config& config,
                                    const std::optional<std::string>& devcontainer_text) {
    if (config.environment) {
        const config::EnvironmentConfig& e = *config.environment;
        Spec spec;
        spec.source = "environment in " + std::string(config::kConfigFile);
        spec.setup = e.setup;
        spec.key = e.key;
        spec.key_commands = e.key_commands;
        spec.paths = e.paths;
        spec.env = e.env;
        spec.timeout = e.timeout;
        return std::optional<Spec>(std::move(spec));
    }
    if (!devcontainer_text) return std::optional<Spec>();
    auto spec = devcontainer_spec(*devcontainer_text, kDevcontainerFile);
    if (!spec) return std::move(spec).error();
    if (spec->setup.empty()) return std::optional<Spec>();  // only an image: nothing to run
    return std::optional<Spec>(std::move(*spec));
}

}  // namespace cocode::environment
