#include "config/presets.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "config/reader.h"
#include "core/closest_word.h"
#include "core/files.h"
#include "core/json_text.h"
#include "net/allowlist.h"

namespace cocode::config {
namespace fs = std::filesystem;
using Json = detail::Json;

namespace {

struct BuiltinFile {
    std::string_view name;
    std::string_view text;
};
// Generated from src/config/presets/*.json (src/CMakeLists.txt).
constexpr BuiltinFile kBuiltinFiles[] = {
#include "builtin_presets.inc"
};

// The runner contract's token mapping: perplexity → PERPLEXITY_API_KEY, xai → XAI_API_KEY;
// OpenAI's own variable (codex's) for OpenAI.
constexpr ChatProvider kChatProviders[] = {
    {"openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"},
    {"perplexity", "https://api.perplexity.ai", "PERPLEXITY_API_KEY", "sonar"},
    {"xai", "https://api.x.ai/v1", "XAI_API_KEY", "grok-3-mini"},
    {"openai-compatible", "", "", ""},
};

// What a TOML basic string needs escaped: codex parses `-c key=value` values as TOML.
std::string toml_string(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

bool env_true(EnvGetter env, const char* name) {
    auto value = env(name);
    return value && !value->empty() && *value != "0" && *value != "false";
}

}  // namespace

const ChatProvider* chat_provider(std::string_view name) {
    for (const auto& provider : kChatProviders)
        if (provider.name == name) return &provider;
    return nullptr;
}

std::string chat_provider_names() {
    std::string out;
    for (const auto& provider : kChatProviders)
        out += (out.empty() ? "" : ", ") + std::string(provider.name);
    return out;
}

std::vector<std::string> passed_variables(const CliPreset& cli,
                                          const std::function<bool(const std::string&)>& is_set) {
    std::vector<std::string> out;
    for (const auto& group : cli.env)
        if (group.when.empty() || is_set(group.when))
            out.insert(out.end(), group.names.begin(), group.names.end());
    return out;
}

namespace {

constexpr std::string_view kConditions[] = {"base_url", "model", "root", "enclosed"};

using PresetReader = detail::FieldReader;

// A string field of the document: required, or "" when absent.
Result<std::string> text_field(const PresetReader& r, const Json& doc, const std::string& field,
                               bool required) {
    if (!doc.contains(field)) {
        if (required) return r.bad(field, "a non-empty string");
        return std::string();
    }
    return r.string(doc[field], field);
}

bool env_name_ok(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// Every string in `value`, keys of objects included.
void each_string(const Json& value, const std::function<void(const std::string&)>& visit) {
    if (value.is_string()) {
        visit(value.get_ref<const std::string&>());
    } else if (value.is_object()) {
        for (const auto& [key, item] : value.items()) {
            visit(key);
            each_string(item, visit);
        }
    } else if (value.is_array()) {
        for (const auto& item : value) each_string(item, visit);
    }
}

bool uses(const LaunchStep& step, std::string_view placeholder) {
    bool found = false;
    auto visit = [&](const std::string& text) {
        for (std::string_view filter : {"}", "|toml}"})
            found = found || text.find("{" + std::string(placeholder) + std::string(filter)) !=
                                 std::string::npos;
    };
    for (const auto& [name, value] : step.env) each_string(value, visit);
    for (const auto& list : {step.args, step.args_last})
        for (const auto& arg : list) visit(arg);
    for (const auto& [path, content] : step.files) each_string(content, visit);
    return found;
}

bool asks(const LaunchStep& step, std::string_view condition) {
    return std::find(step.when.begin(), step.when.end(), condition) != step.when.end();
}

Result<LaunchStep> parse_step(const PresetReader& r, const Json& value, const std::string& field) {
    if (!value.is_object()) return r.bad(field, "an object with when, env, args, args_last, files");
    if (auto ok = r.only_keys(value, field, {"when", "env", "args", "args_last", "files", "why"});
        !ok)
        return std::move(ok).error();
    LaunchStep step;
    if (value.contains("when")) {
        auto when = r.strings(value["when"], field + ".when");
        if (!when) return std::move(when).error();
        for (std::size_t i = 0; i < when->size(); ++i) {
            std::string_view c = (*when)[i];
            if (c.front() == '!') c.remove_prefix(1);
            if (std::find(std::begin(kConditions), std::end(kConditions), c) ==
                std::end(kConditions))
                return r.bad(field + ".when[" + std::to_string(i) + "]",
                             "base_url, model, root or enclosed, or one of them after '!'");
        }
        step.when = std::move(*when);
    }
    if (value.contains("env")) {
        const Json& env = value["env"];
        if (!env.is_object()) return r.bad(field + ".env", "an object of variables and values");
        for (const auto& [name, v] : env.items()) {
            if (!env_name_ok(name))
                return r.bad(field + ".env",
                             "variable names of letters, digits and '_', not '" + name + "'");
            if (!v.is_string() && !v.is_object() && !v.is_array())
                return r.bad(field + ".env." + name, "a string, or JSON to pass serialised");
            step.env.emplace_back(name, v);
        }
    }
    for (const char* key : {"args", "args_last"}) {
        if (!value.contains(key)) continue;
        auto args = r.strings(value[key], field + "." + key);
        if (!args) return std::move(args).error();
        (std::string_view(key) == "args" ? step.args : step.args_last) = std::move(*args);
    }
    if (value.contains("files")) {
        const Json& files = value["files"];
        if (!files.is_object())
            return r.bad(field + ".files",
                         "an object of paths (under the CLI's home) and contents");
        for (const auto& [path, content] : files.items()) {
            const fs::path p(path);
            if (path.empty() || p.is_absolute() ||
                std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; }))
                return r.bad(field + ".files",
                             "relative paths inside the CLI's home, not '" + path + "'");
            if (!content.is_string() && !content.is_object())
                return r.bad(field + ".files." + path, "a JSON object, or text");
            step.files.emplace_back(path, content);
        }
    }
    if (uses(step, "base_url") && !asks(step, "base_url"))
        return r.bad(field + ".when",
                     "\"base_url\" among the conditions of a step using {base_url}");
    if (uses(step, "session")) return r.bad(field, "no {session}: it is for `resume` only");
    return step;
}

// {base_url}, {model}, {home}, {session} (and the |toml forms) in `text`; any other braces
// stay as they are (a CLI's own {env:NAME}).
std::string fill(std::string_view text, const std::map<std::string, std::string>& values) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto open = text.find('{', i);
        if (open == std::string_view::npos) break;
        const auto close = text.find('}', open);
        if (close == std::string_view::npos) break;
        std::string_view inner = text.substr(open + 1, close - open - 1);
        bool toml = false;
        if (inner.size() > 5 && inner.substr(inner.size() - 5) == "|toml") {
            inner.remove_suffix(5);
            toml = true;
        }
        auto it = values.find(std::string(inner));
        out.append(text.substr(i, open - i));
        if (it == values.end()) {
            out.append(text.substr(open, close - open + 1));
        } else {
            out += toml ? toml_string(it->second) : it->second;
        }
        i = close + 1;
    }
    out.append(text.substr(std::min(i, text.size())));
    return out;
}

Json fill_json(const Json& value, const std::map<std::string, std::string>& values) {
    if (value.is_string()) return fill(value.get_ref<const std::string&>(), values);
    if (value.is_array()) {
        Json out = Json::array();
        for (const auto& item : value) out.push_back(fill_json(item, values));
        return out;
    }
    if (value.is_object()) {
        Json out = Json::object();
        for (const auto& [key, item] : value.items())
            out[fill(key, values)] = fill_json(item, values);
        return out;
    }
    return value;
}

Result<std::vector<EnvGroup>> parse_env_groups(const PresetReader& r, const Json& value) {
    if (!value.is_array()) return r.bad("env", "a list of {\"when\": VARIABLE, \"names\": [...]}");
    std::vector<EnvGroup> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string field = "env[" + std::to_string(i) + "]";
        const Json& group = value[i];
        if (!group.is_object()) return r.bad(field, "an object with names (and when)");
        if (auto ok = r.only_keys(group, field, {"when", "names"}); !ok)
            return std::move(ok).error();
        EnvGroup g;
        auto when = text_field(r, group, "when", false);
        if (!when) return r.bad(field + ".when", "a variable name");
        g.when = *when;
        if (!group.contains("names")) return r.bad(field + ".names", "a list of variable names");
        auto names = r.strings(group["names"], field + ".names");
        if (!names) return std::move(names).error();
        for (const auto& name : *names)
            if (!env_name_ok(name) || is_github_credential(name))
                return r.bad(field + ".names",
                             "variable names of the CLI's own (never the GitHub "
                             "token's), not '" +
                                 name + "'");
        g.names = std::move(*names);
        out.push_back(std::move(g));
    }
    return out;
}

bool reserved_name(std::string_view name) {
    for (std::string_view taken : {"command", "claude", "codex", "gemini", "cli", "textproto",
                                   "perplexity", "xai", "codali"})
        if (name == taken) return true;
    return false;
}

}  // namespace

const std::vector<std::string_view>& stream_formats() {
    static const std::vector<std::string_view> kFormats = {
        "claude", "codex", "gemini", "qwen", "copilot", "opencode", "pi", "cline", "droid", "text"};
    return kFormats;
}

Result<CliPreset> parse_preset(std::string_view text, const std::string& source,
                               const std::string& name) {
    const PresetReader r{source};
    const Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
        return Error::usage(source +
                            ": not a JSON object (docs/agents.md, \"Declaring a preset\")");
    if (auto ok =
            r.only_keys(doc, "",
                        {"preset", "name", "description", "program", "args", "prompt", "stream",
                         "key", "env", "secrets", "endpoint", "needs_base_url", "launch", "resume",
                         "sessions", "egress", "login_files", "config_paths", "tested"});
        !ok)
        return std::move(ok).error();
    if (!doc.contains("preset") || doc["preset"] != 1)
        return r.bad("preset", "1 (the version of the preset format)");
    CliPreset cli;
    cli.source = source;
    auto declared = text_field(r, doc, "name", name.empty());
    if (!declared) return std::move(declared).error();
    cli.name = declared->empty() ? name : *declared;
    if (!name.empty() && cli.name != name)
        return r.bad("name", "\"" + name + "\", the file's own name");
    if (cli.name.size() > 40 ||
        !std::all_of(cli.name.begin(), cli.name.end(),
                     [](char c) {
                         return std::islower(static_cast<unsigned char>(c)) ||
                                std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_';
                     }) ||
        !std::islower(static_cast<unsigned char>(cli.name.front())))
        return r.bad("name", "a name of lower-case letters, digits, '-' or '_' (at most 40)");
    for (auto [field, out] :
         {std::pair{"description", &cli.description}, std::pair{"program", &cli.program},
          std::pair{"key", &cli.token}, std::pair{"needs_base_url", &cli.needs_base_url}}) {
        auto value = text_field(r, doc, field, std::string_view(field) == "program");
        if (!value) return std::move(value).error();
        *out = *value;
    }
    if (!cli.token.empty() && (!env_name_ok(cli.token) || is_github_credential(cli.token)))
        return r.bad("key", "the variable of the CLI's own key (never the GitHub token's)");
    if (doc.contains("args")) {
        auto args = r.strings(doc["args"], "args");
        if (!args) return std::move(args).error();
        cli.args = std::move(*args);
    }
    if (doc.contains("prompt")) {
        if (doc["prompt"] == "stdin")
            cli.prompt = Stdin::prompt;
        else if (doc["prompt"] == "argument")
            cli.prompt = Stdin::argument;
        else
            return r.bad("prompt", "\"stdin\" or \"argument\"");
    }
    if (doc.contains("stream")) {
        const auto& formats = stream_formats();
        if (!doc["stream"].is_string() ||
            std::find(formats.begin(), formats.end(), doc["stream"].get<std::string>()) ==
                formats.end()) {
            std::string list;
            for (auto f : formats) list += (list.empty() ? "" : ", ") + std::string(f);
            return r.bad("stream", "one of " + list);
        }
        cli.stream = doc["stream"].get<std::string>();
    }
    if (doc.contains("env")) {
        auto groups = parse_env_groups(r, doc["env"]);
        if (!groups) return std::move(groups).error();
        cli.env = std::move(*groups);
    }
    for (auto [field, out] :
         {std::pair{"secrets", &cli.secrets}, std::pair{"resume", &cli.resume},
          std::pair{"sessions", &cli.sessions}, std::pair{"egress", &cli.egress},
          std::pair{"login_files", &cli.login_files},
          std::pair{"config_paths", &cli.config_paths}}) {
        if (!doc.contains(field)) continue;
        auto list = r.strings(doc[field], field);
        if (!list) return std::move(list).error();
        *out = std::move(*list);
    }
    for (const auto& list : {cli.login_files, cli.config_paths, cli.sessions})
        for (const auto& path : list)
            if (fs::path(path).is_absolute() || path.find("..") != std::string::npos)
                return r.bad(list == cli.login_files    ? "login_files"
                             : list == cli.config_paths ? "config_paths"
                                                        : "sessions",
                             "paths relative to $HOME, not '" + path + "'");
    for (std::size_t i = 0; i < cli.egress.size(); ++i)
        if (!net::parse_allow_entry(cli.egress[i], "the " + cli.name + " preset"))
            return r.bad("egress[" + std::to_string(i) + "]",
                         "a host, *.domain or host:port as network.allow takes");
    if (!cli.resume.empty() &&
        std::none_of(cli.resume.begin(), cli.resume.end(),
                     [](const std::string& a) { return a.find("{session}") != std::string::npos; }))
        return r.bad("resume", "arguments naming the session as {session}");
    if (doc.contains("endpoint")) {
        const Json& endpoint = doc["endpoint"];
        if (!endpoint.is_object())
            return r.bad("endpoint", "an object with default (and variable)");
        if (auto ok = r.only_keys(endpoint, "endpoint", {"default", "variable"}); !ok)
            return std::move(ok).error();
        auto url = text_field(r, endpoint, "default", true);
        if (!url || (url->rfind("https://", 0) != 0 && url->rfind("http://", 0) != 0))
            return r.bad("endpoint.default", "the URL of the CLI's model when none is configured");
        cli.default_endpoint = *url;
        auto variable = text_field(r, endpoint, "variable", false);
        if (!variable || (!variable->empty() && !env_name_ok(*variable)))
            return r.bad("endpoint.variable", "the variable that moves the CLI's endpoint");
        cli.endpoint_env = *variable;
    }
    if (doc.contains("launch")) {
        if (!doc["launch"].is_array()) return r.bad("launch", "a list of steps");
        for (std::size_t i = 0; i < doc["launch"].size(); ++i) {
            auto step = parse_step(r, doc["launch"][i], "launch[" + std::to_string(i) + "]");
            if (!step) return std::move(step).error();
            cli.launch.push_back(std::move(*step));
        }
    }
    if (!doc.contains("tested") || !doc["tested"].is_object())
        return r.bad("tested", "an object with version (the CLI version this preset was run with)");
    if (auto ok = r.only_keys(doc["tested"], "tested", {"version", "help"}); !ok)
        return std::move(ok).error();
    auto version = text_field(r, doc["tested"], "version", true);
    if (!version || !version_in(*version))
        return r.bad("tested.version", "a dotted version such as 1.2.3");
    cli.tested_version = *version;
    if (doc["tested"].contains("help")) {
        auto help = r.strings(doc["tested"]["help"], "tested.help");
        if (!help) return std::move(help).error();
        cli.help_args = std::move(*help);
    }
    // The key is a secret whether or not the file says so.
    if (!cli.token.empty() &&
        std::find(cli.secrets.begin(), cli.secrets.end(), cli.token) == cli.secrets.end())
        cli.secrets.push_back(cli.token);
    if (cli.name == "claude") cli.type = AgentType::claude;
    if (cli.name == "codex") cli.type = AgentType::codex;
    if (cli.name == "gemini") cli.type = AgentType::gemini;
    return cli;
}

namespace {

// A shipped file, parsed once and only when asked for: a configuration naming claude alone (the
// pre-push gate reads it on every push) parses claude's file alone.
PresetPtr parsed_builtin(std::size_t index) {
    static std::mutex mutex;
    static PresetPtr parsed[std::size(kBuiltinFiles)];
    std::lock_guard<std::mutex> lock(mutex);
    if (!parsed[index]) {
        const BuiltinFile& file = kBuiltinFiles[index];
        auto preset = parse_preset(file.text, "presets/" + std::string(file.name) + ".json",
                                   std::string(file.name));
        // The shipped files are checked by the tests (PresetFiles.*): one that does not parse
        // is a build that must not ship.
        if (!preset) throw std::logic_error(preset.error().message);
        preset->source = "built in";
        parsed[index] = std::make_shared<const CliPreset>(std::move(*preset));
    }
    return parsed[index];
}

}  // namespace

const std::vector<PresetPtr>& builtin_presets() {
    static const std::vector<PresetPtr> kPresets = [] {
        std::vector<PresetPtr> out;
        for (std::size_t i = 0; i < std::size(kBuiltinFiles); ++i) out.push_back(parsed_builtin(i));
        return out;
    }();
    return kPresets;
}

PresetPtr builtin_preset(std::string_view name) {
    for (std::size_t i = 0; i < std::size(kBuiltinFiles); ++i)
        if (kBuiltinFiles[i].name == name) return parsed_builtin(i);
    return nullptr;
}

std::string_view builtin_preset_text(std::string_view name) {
    for (const auto& file : kBuiltinFiles)
        if (file.name == name) return file.text;
    return {};
}

Result<std::vector<PresetPtr>> repository_presets(const fs::path& repo_root) {
    std::vector<PresetPtr> out;
    const fs::path dir = repo_root / kPresetsDir;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return out;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") files.push_back(it->path());
    if (ec) return Error::general(dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        const std::string source = (fs::path(kPresetsDir) / file.filename()).string();
        const std::string name = file.stem().string();
        if (reserved_name(name) || builtin_preset(name))
            return Error::usage(source +
                                ": field 'name': expected a name no built-in preset or "
                                "agent type has (\"" +
                                name + "\" is cocode's own)");
        auto text = read_file(file, std::size_t{1} << 20);
        if (!text) return Error::usage(source + ": cannot be read");
        auto parsed = parse_preset(*text, source, name);
        if (!parsed) return std::move(parsed).error();
        out.push_back(std::make_shared<const CliPreset>(std::move(*parsed)));
    }
    return out;
}

const CliPreset* cli_preset(AgentType type) {
    switch (type) {
        case AgentType::claude:
        case AgentType::codex:
        case AgentType::gemini:
            return builtin_preset(type_name(type)).get();
        case AgentType::command:
        case AgentType::cli:
        case AgentType::textproto:
        case AgentType::perplexity:
        case AgentType::xai:
        case AgentType::codali:
            break;
    }
    return nullptr;
}

fs::path preset_home(const CliPreset& cli, const fs::path& run_folder) {
    return run_folder / (cli.name + "-home");
}

namespace {

bool holds(const LaunchStep& step, const AgentConfig& agent, bool as_root, bool enclosed) {
    for (std::string_view c : step.when) {
        const bool negated = !c.empty() && c.front() == '!';
        if (negated) c.remove_prefix(1);
        const bool value = c == "base_url" ? agent.base_url.has_value()
                           : c == "model"  ? agent.model.has_value()
                           : c == "root"   ? as_root
                                           : enclosed;
        if (value == negated) return false;
    }
    return true;
}

// `from` merged into `into`: objects key by key, anything else replaced.
void merge(Json& into, const Json& from) {
    if (!into.is_object() || !from.is_object()) {
        into = from;
        return;
    }
    for (const auto& [key, value] : from.items()) merge(into[key], value);
}

}  // namespace

LaunchAdjustments launch_adjustments(const AgentConfig& agent, const fs::path& run_folder,
                                     bool as_root, bool enclosed) {
    LaunchAdjustments out;
    const CliPreset* cli = cli_preset(agent);
    if (!cli) return out;
    const fs::path home = preset_home(*cli, run_folder);
    std::map<std::string, std::string> values = {{"home", home.string()}};
    if (agent.base_url) values["base_url"] = *agent.base_url;
    if (agent.model) values["model"] = *agent.model;
    std::vector<std::pair<std::string, Json>> files;
    for (const auto& step : cli->launch) {
        if (!holds(step, agent, as_root, enclosed)) continue;
        for (const auto& [name, value] : step.env) {
            if (agent.env_values.count(name)) continue;  // the configuration's value wins
            const Json filled = fill_json(value, values);
            std::string text = filled.is_string() ? filled.get<std::string>() : filled.dump();
            auto same = std::find_if(out.env.begin(), out.env.end(),
                                     [&name = name](const auto& e) { return e.first == name; });
            if (same == out.env.end())
                out.env.emplace_back(name, std::move(text));
            else
                same->second = std::move(text);
        }
        for (const auto& arg : step.args) out.args_after_program.push_back(fill(arg, values));
        for (const auto& arg : step.args_last) out.args_last.push_back(fill(arg, values));
        for (const auto& [path, content] : step.files) {
            auto same = std::find_if(files.begin(), files.end(),
                                     [&path = path](const auto& f) { return f.first == path; });
            Json filled = fill_json(content, values);
            if (same == files.end())
                files.emplace_back(path, std::move(filled));
            else
                merge(same->second, filled);
        }
    }
    for (auto& [path, content] : files)
        out.files.emplace_back(home / path, content.is_string() ? content.get<std::string>()
                                                                : json_dump(content, 2) + "\n");
    return out;
}

std::optional<MissingField> missing_for_preset(const AgentConfig& agent) {
    const CliPreset* cli = cli_preset(agent);
    if (!cli || agent.model) return std::nullopt;
    for (const auto& step : cli->launch) {
        if (!uses(step, "model")) continue;
        // Taken with this configuration whatever root and enclosed are?
        bool possible = true;
        for (std::string_view c : step.when) {
            const bool negated = !c.empty() && c.front() == '!';
            if (negated) c.remove_prefix(1);
            if (c == "base_url" && agent.base_url.has_value() == negated) possible = false;
            if (c == "model" && !negated) possible = false;
        }
        if (possible)
            return MissingField{"model",
                                "a model name: the " + cli->name + " preset passes one with " +
                                    (asks(step, "base_url") ? "base_url" : "its command line")};
    }
    return std::nullopt;
}

bool session_kept(const CliPreset& cli, const std::string& session, const fs::path& home) {
    if (cli.sessions.empty()) return true;
    for (const auto& pattern : cli.sessions) {
        const std::string full = (home / fill(pattern, {{"session", session}})).string();
        glob_t found{};
        const bool any =
            ::glob(full.c_str(), GLOB_NOSORT, nullptr, &found) == 0 && found.gl_pathc > 0;
        ::globfree(&found);
        if (any) return true;
    }
    return false;
}

std::vector<std::string> resume_args(const CliPreset& cli, const std::string& session) {
    std::vector<std::string> out;
    for (const auto& arg : cli.resume) out.push_back(fill(arg, {{"session", session}}));
    return out;
}

std::optional<std::string> codex_configured_base_url(EnvGetter env) {
    fs::path file;
    if (auto home = env("CODEX_HOME"); home && !home->empty())
        file = fs::path(*home) / "config.toml";
    else if (auto user_home = env("HOME"); user_home && !user_home->empty())
        file = fs::path(*user_home) / ".codex" / "config.toml";
    else
        return std::nullopt;
    std::ifstream in(file);
    std::string line;
    // Top-level keys come before the first [table]; only a basic string value is read.
    while (std::getline(in, line)) {
        const auto start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        if (line[start] == '[') break;
        std::string_view rest = std::string_view(line).substr(start);
        constexpr std::string_view kKey = "openai_base_url";
        if (rest.substr(0, kKey.size()) != kKey) continue;
        rest.remove_prefix(kKey.size());
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
            rest.remove_prefix(1);
        if (rest.empty() || rest.front() != '=') continue;
        rest.remove_prefix(1);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
            rest.remove_prefix(1);
        if (rest.size() < 2 || rest.front() != '"') return std::nullopt;
        const auto close = rest.find('"', 1);
        if (close == std::string_view::npos || close == 1) return std::nullopt;
        return std::string(rest.substr(1, close - 1));
    }
    return std::nullopt;
}

Endpoint model_endpoint(const AgentConfig& agent, EnvGetter env) {
    const CliPreset* cli = cli_preset(agent);
    if (!cli) return {};
    if (agent.base_url) return {agent.base_url, ""};
    if (agent.type == AgentType::claude) {
        if (env_true(env, "CLAUDE_CODE_USE_BEDROCK")) return {std::nullopt, "Bedrock"};
        if (env_true(env, "CLAUDE_CODE_USE_VERTEX")) return {std::nullopt, "Vertex AI"};
    }
    if (agent.type == AgentType::gemini && env_true(env, "GOOGLE_GENAI_USE_VERTEXAI"))
        return {std::nullopt, "Vertex AI"};
    // codex does not read OPENAI_BASE_URL any more; its endpoint is its own configuration's.
    if (agent.type == AgentType::codex) {
        if (auto from_config = codex_configured_base_url(env)) return {from_config, ""};
    } else if (!cli->endpoint_env.empty()) {
        if (auto from_env = env(cli->endpoint_env.c_str()); from_env && !from_env->empty())
            return {from_env, ""};
    }
    return {cli->default_endpoint, ""};
}

bool is_github_credential(std::string_view name) {
    static const std::vector<std::string_view> kNames = {
        "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
        "COCODE_GITHUB_APP_PRIVATE_KEY_PATH"};
    return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::vector<std::string> secret_variables() {
    std::vector<std::string> out = {"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN",
                                    "GITHUB_ENTERPRISE_TOKEN"};
    // Read from the preset files when they were compiled in (src/CMakeLists.txt): every tool
    // asks at start, and the post-commit hook must not parse ten files on each commit.
    static constexpr std::string_view kPresetSecrets[] = {
#include "builtin_secrets.inc"
    };
    for (std::string_view name : kPresetSecrets)
        if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    for (const auto& provider : kChatProviders)
        if (!provider.key_env.empty() &&
            std::find(out.begin(), out.end(), provider.key_env) == out.end())
            out.emplace_back(provider.key_env);
    return out;
}

std::optional<std::string> version_in(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
        if (i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.'))
            continue;
        std::size_t end = i;
        int dots = 0;
        while (end < text.size() &&
               (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
            dots += text[end] == '.';
            ++end;
        }
        while (end > i && text[end - 1] == '.') --end, --dots;
        if (dots >= 1) return std::string(text.substr(i, end - i));
        i = end;
    }
    return std::nullopt;
}

int compare_versions(std::string_view a, std::string_view b) {
    auto next = [](std::string_view& s) {
        long n = 0;
        while (!s.empty() && s.front() != '.') {
            if (std::isdigit(static_cast<unsigned char>(s.front()))) n = n * 10 + (s.front() - '0');
            s.remove_prefix(1);
        }
        if (!s.empty()) s.remove_prefix(1);
        return n;
    };
    while (!a.empty() || !b.empty()) {
        long x = next(a), y = next(b);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

}  // namespace cocode::config
