#include "config/config.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "config/presets.h"
#include "config/reader.h"
#include "core/closest_word.h"
#include "core/files.h"
#include "core/glob.h"
#include "core/json_text.h"
#include "net/allowlist.h"

namespace cocode::config {
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr int kMaxConcurrency = 64;
constexpr int kMaxRestarts = 100;

// Validation context: where we are in the document, for messages that name the field.
struct Reader : detail::FieldReader {
    std::vector<PresetPtr> presets;  // the repository's own (.cocode/presets/)

    // A list of network entries (net/allowlist.h), each checked.
    Result<std::vector<std::string>> allow_entries(const json& value,
                                                   const std::string& field) const {
        auto list = strings(value, field);
        if (!list) return list;
        for (std::size_t i = 0; i < list->size(); ++i)
            if (auto entry = net::parse_allow_entry((*list)[i], field); !entry)
                return Error::usage(source + ": " + field + "[" + std::to_string(i) +
                                    "]: " + entry.error().message);
        return list;
    }

    Result<int> integer(const json& value, const std::string& field, int low, int high) const {
        std::string range =
            "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
        if (!value.is_number_integer()) return bad(field, range);
        auto n = value.get<long long>();
        if (n < low || n > high) return bad(field, range);
        return static_cast<int>(n);
    }

    Result<std::uint64_t> size(const json& value, const std::string& field) const {
        const std::string expected = "a size such as \"1GiB\", \"500MB\" or a number of bytes";
        std::string text;
        if (value.is_number_unsigned() || value.is_number_integer())
            text = std::to_string(value.get<long long>());
        else if (value.is_string())
            text = value.get<std::string>();
        else
            return bad(field, expected);
        auto parsed = parse_size(text);
        if (!parsed || *parsed == 0) return bad(field, expected);
        return parsed;
    }

    // A number of dollars (or a price) from 0, or above 0 when `positive`.
    Result<double> amount(const json& value, const std::string& field, bool positive) const {
        const std::string expected = positive ? "a number above 0" : "a number from 0";
        if (!value.is_number()) return bad(field, expected);
        const double n = value.get<double>();
        if (!(n >= 0) || (positive && n == 0) || n > 1e9) return bad(field, expected);
        return n;
    }

    Result<Duration> duration(const json& value, const std::string& field) const {
        std::string text;
        if (value.is_number_unsigned() || value.is_number_integer()) {
            if (value.get<long long>() <= 0) return bad(field, "a positive duration");
            text = std::to_string(value.get<long long>());
        } else if (value.is_string()) {
            text = value.get<std::string>();
        } else {
            return bad(field, "a duration such as 90, \"90s\", \"30m\" or \"1h\"");
        }
        auto parsed = parse_duration(text);
        if (!parsed) return bad(field, "a duration such as 90, \"90s\", \"30m\" or \"1h\"");
        return parsed;
    }
};

// The type an agent names: one of cocode's own, or a preset, the repository's or built in.
struct NamedType {
    AgentType type = AgentType::command;
    PresetPtr cli;
};
Result<NamedType> parse_type(const Reader& r, const json& value, const std::string& field) {
    static const std::map<std::string, AgentType> kTypes = {{"command", AgentType::command},
                                                            {"textproto", AgentType::textproto},
                                                            {"perplexity", AgentType::perplexity},
                                                            {"xai", AgentType::xai},
                                                            {"codali", AgentType::codali}};
    if (value.is_string()) {
        const std::string& name = value.get_ref<const std::string&>();
        if (auto it = kTypes.find(name); it != kTypes.end()) return NamedType{it->second, nullptr};
        for (const auto& cli : r.presets)
            if (cli->name == name) return NamedType{cli->type, cli};
        if (auto cli = builtin_preset(name)) return NamedType{cli->type, cli};
    }
    std::string names = "command, textproto, perplexity, xai, codali";
    for (const auto& cli : builtin_presets()) names += ", " + cli->name;
    for (const auto& cli : r.presets) names += ", " + cli->name;
    return r.bad(field, "one of " + names + " (a preset of your own: .cocode/presets/NAME.json)");
}

Result<void> parse_check(const Reader& r, const json& check, CheckConfig& out) {
    if (!check.is_object())
        return r.bad("check", "an object with allowed_paths, read_only_paths, verify, …");
    if (auto ok = r.only_keys(check, "check",
                              {"allowed_paths", "read_only_paths", "verify", "verify_timeout",
                               "verify_env", "labels"});
        !ok)
        return ok;
    for (auto [key, slot] : {std::pair{"allowed_paths", &out.allowed_paths},
                             {"read_only_paths", &out.read_only_paths},
                             {"verify_env", &out.verify_env}}) {
        if (!check.contains(key)) continue;
        auto list = r.strings(check[key], std::string("check.") + key);
        if (!list) return std::move(list).error();
        if (std::string_view(key) != "verify_env") {
            for (std::size_t i = 0; i < list->size(); ++i)
                if (auto problem = glob_problem((*list)[i]))
                    return r.bad(std::string("check.") + key + "[" + std::to_string(i) + "]",
                                 "a path glob such as src/** or *.lock (not " + *problem + ")");
        }
        *slot = std::move(*list);
    }
    if (check.contains("verify_timeout")) {
        auto d = r.duration(check["verify_timeout"], "check.verify_timeout");
        if (!d) return std::move(d).error();
        out.verify_timeout = *d;
    }
    if (check.contains("verify")) {
        const json& list = check["verify"];
        if (!list.is_array()) return r.bad("check.verify", "a list of commands");
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string field = "check.verify[" + std::to_string(i) + "]";
            VerifyCommand command;
            if (list[i].is_string()) {
                auto run = r.string(list[i], field);
                if (!run) return std::move(run).error();
                command.run = *run;
            } else if (list[i].is_object()) {
                if (auto ok = r.only_keys(list[i], field, {"name", "run", "timeout"}); !ok)
                    return ok;
                if (!list[i].contains("run")) return r.bad(field + ".run", "the command to run");
                auto run = r.string(list[i]["run"], field + ".run");
                if (!run) return std::move(run).error();
                command.run = *run;
                if (list[i].contains("name")) {
                    auto name = r.string(list[i]["name"], field + ".name");
                    if (!name) return std::move(name).error();
                    command.name = *name;
                }
                if (list[i].contains("timeout")) {
                    auto d = r.duration(list[i]["timeout"], field + ".timeout");
                    if (!d) return std::move(d).error();
                    command.timeout = *d;
                }
            } else {
                return r.bad(field, "a command string or {name, run, timeout}");
            }
            if (command.name.empty()) command.name = command.run;
            out.verify.push_back(std::move(command));
        }
    }
    if (check.contains("labels")) {
        const json& labels = check["labels"];
        if (!labels.is_object()) return r.bad("check.labels", "an object with pass and fail");
        if (auto ok = r.only_keys(labels, "check.labels", {"pass", "fail"}); !ok) return ok;
        for (auto [key, slot] : {std::pair{"pass", &out.pass_label}, {"fail", &out.fail_label}}) {
            if (!labels.contains(key)) continue;
            const std::string field = std::string("check.labels.") + key;
            if (!labels[key].is_string()) return r.bad(field, "a label name, or \"\" for none");
            *slot = labels[key].get<std::string>();
        }
    }
    return {};
}

Result<void> parse_publish(const Reader& r, const json& publish, PublishConfig& out) {
    if (!publish.is_object())
        return r.bad("publish", "an object with after_run, status, labels, push, pull_request");
    if (auto ok = r.only_keys(publish, "publish",
                              {"after_run", "status", "labels", "push", "pull_request"});
        !ok)
        return ok;
    for (auto [key, slot] : {std::pair{"after_run", &out.after_run},
                             {"status", &out.status},
                             {"labels", &out.labels},
                             {"push", &out.push},
                             {"pull_request", &out.pull_request}}) {
        if (!publish.contains(key)) continue;
        if (!publish[key].is_boolean())
            return r.bad(std::string("publish.") + key, "true or false");
        *slot = publish[key].get<bool>();
    }
    return {};
}

Result<void> parse_review(const Reader& r, const json& review, ReviewConfig& out) {
    if (!review.is_object()) return r.bad("review", "an object with max_rounds, fix_checks");
    if (auto ok = r.only_keys(review, "review", {"max_rounds", "fix_checks"}); !ok) return ok;
    if (review.contains("max_rounds")) {
        auto n = r.integer(review["max_rounds"], "review.max_rounds", 1, 100);
        if (!n) return std::move(n).error();
        out.max_rounds = *n;
    }
    if (review.contains("fix_checks")) {
        if (!review["fix_checks"].is_boolean()) return r.bad("review.fix_checks", "true or false");
        out.fix_checks = review["fix_checks"].get<bool>();
    }
    return {};
}

Result<void> parse_plan(const Reader& r, const json& plan, PlanConfig& out) {
    if (!plan.is_object()) return r.bad("plan", "an object with bind_verify");
    if (auto ok = r.only_keys(plan, "plan", {"bind_verify"}); !ok) return ok;
    if (plan.contains("bind_verify")) {
        auto prefixes = r.strings(plan["bind_verify"], "plan.bind_verify");
        if (!prefixes) return std::move(prefixes).error();
        for (const auto& prefix : *prefixes)
            if (prefix.find_first_not_of(" \t") == std::string::npos)
                return r.bad("plan.bind_verify", "command prefixes, none of them blank");
        out.bind_verify = std::move(prefixes).value();
    }
    return {};
}

Result<void> parse_gate(const Reader& r, const json& gate, GateConfig& out) {
    if (!gate.is_object()) return r.bad("gate", "an object with approvals");
    if (auto ok = r.only_keys(gate, "gate", {"approvals"}); !ok) return ok;
    if (gate.contains("approvals")) {
        auto n = r.integer(gate["approvals"], "gate.approvals", 0, 20);
        if (!n) return std::move(n).error();
        out.approvals = *n;
    }
    return {};
}

Result<void> parse_pricing(const Reader& r, const json& pricing,
                           std::map<std::string, Price>& out) {
    const std::string expected =
        "an object of model names, each {\"input\", \"output\", \"cached\"} in USD per million "
        "tokens";
    if (!pricing.is_object()) return r.bad("pricing", expected);
    for (const auto& [model, value] : pricing.items()) {
        const std::string field = "pricing." + model;
        if (model.empty()) return r.bad("pricing", expected);
        if (!value.is_object()) return r.bad(field, "an object with input, output, cached");
        if (auto ok = r.only_keys(value, field, {"input", "output", "cached"}); !ok) return ok;
        Price price;
        for (auto [key, slot] : {std::pair{"input", &price.input},
                                 {"output", &price.output},
                                 {"cached", &price.cached}}) {
            if (!value.contains(key)) {
                if (std::string_view(key) == "cached") {
                    price.cached = price.input;  // no discount for a cache, unless said
                    continue;
                }
                return r.bad(field + "." + key, "a number from 0 (USD per million tokens)");
            }
            auto n = r.amount(value[key], field + "." + key, false);
            if (!n) return std::move(n).error();
            *slot = *n;
        }
        out[model] = price;
    }
    return {};
}

Result<void> parse_progress(const Reader& r, const json& progress, ProgressConfig& out) {
    if (progress.is_boolean()) {
        out.enabled = progress.get<bool>();
        return {};
    }
    if (!progress.is_object()) return r.bad("progress", "false, or an object with interval");
    if (auto ok = r.only_keys(progress, "progress", {"interval"}); !ok) return ok;
    if (progress.contains("interval")) {
        auto d = r.duration(progress["interval"], "progress.interval");
        if (!d) return std::move(d).error();
        if (*d < std::chrono::seconds(3))
            return r.bad("progress.interval", "a duration of at least 3s");
        out.interval = *d;
    }
    return {};
}

Result<void> parse_network(const Reader& r, const json& network, NetworkConfig& out) {
    if (!network.is_object()) return r.bad("network", "an object with mode, allow and on_blocked");
    if (auto ok = r.only_keys(network, "network", {"mode", "allow", "on_blocked"}); !ok) return ok;
    if (network.contains("mode")) {
        const json& mode = network["mode"];
        if (mode == "allowlist")
            out.mode = NetworkMode::allowlist;
        else if (mode == "audit")
            out.mode = NetworkMode::audit;
        else if (mode == "open")
            out.mode = NetworkMode::open;
        else
            return r.bad("network.mode", "\"allowlist\", \"audit\" or \"open\"");
    }
    if (network.contains("allow")) {
        auto entries = r.allow_entries(network["allow"], "network.allow");
        if (!entries) return std::move(entries).error();
        out.allow = std::move(*entries);
    }
    if (network.contains("on_blocked")) {
        const json& on = network["on_blocked"];
        if (on != "warn" && on != "fail")
            return r.bad("network.on_blocked", "\"warn\" or \"fail\"");
        out.fail_on_blocked = on == "fail";
    }
    return {};
}

// A relative path that stays inside the folder it is used in.
bool inside_path(const std::string& text) {
    const fs::path p = fs::path(text).lexically_normal();
    return !text.empty() && !p.is_absolute() && !p.empty() && *p.begin() != ".." && p != ".";
}

Result<void> parse_environment(const Reader& r, const json& doc, EnvironmentConfig& out) {
    if (!doc.is_object())
        return r.bad("environment", "an object with setup, key, key_commands, paths, env, timeout");
    if (auto ok = r.only_keys(doc, "environment",
                              {"setup", "key", "key_commands", "paths", "env", "timeout"});
        !ok)
        return ok;
    if (!doc.contains("setup")) return r.bad("environment.setup", "a list of commands (npm ci, …)");
    auto setup = r.strings(doc["setup"], "environment.setup");
    if (!setup) return std::move(setup).error();
    if (setup->empty()) return r.bad("environment.setup", "at least one command");
    out.setup = std::move(*setup);
    if (doc.contains("key")) {
        auto key = r.strings(doc["key"], "environment.key");
        if (!key) return std::move(key).error();
        out.key = std::move(*key);
    }
    if (doc.contains("key_commands")) {
        auto commands = r.strings(doc["key_commands"], "environment.key_commands");
        if (!commands) return std::move(commands).error();
        out.key_commands = std::move(*commands);
    }
    if (doc.contains("paths")) {
        auto paths = r.strings(doc["paths"], "environment.paths");
        if (!paths) return std::move(paths).error();
        for (const auto& path : *paths)
            if (!inside_path(path))
                return r.bad(
                    "environment.paths",
                    "paths inside the repository (node_modules, .venv), not '" + path + "'");
        out.paths = std::move(*paths);
    }
    if (doc.contains("env")) {
        const json& env = doc["env"];
        if (!env.is_object())
            return r.bad("environment.env", "an object of NAME: value (a string)");
        for (const auto& [name, value] : env.items()) {
            const bool valid_name = !name.empty() &&
                                    !std::isdigit(static_cast<unsigned char>(name[0])) &&
                                    name.find_first_not_of(
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_") == std::string::npos;
            if (!valid_name) return r.bad("environment.env", "variable names, not '" + name + "'");
            if (!value.is_string()) return r.bad("environment.env." + name, "a string");
            out.env.emplace_back(name, value.get<std::string>());
        }
    }
    if (doc.contains("timeout")) {
        auto d = r.duration(doc["timeout"], "environment.timeout");
        if (!d) return std::move(d).error();
        out.timeout = *d;
    }
    return {};
}

Result<void> parse_budget(const Reader& r, const json& budget, BudgetConfig& out) {
    if (!budget.is_object()) return r.bad("budget", "an object with daily_usd");
    if (auto ok = r.only_keys(budget, "budget", {"daily_usd"}); !ok) return ok;
    if (budget.contains("daily_usd")) {
        auto n = r.amount(budget["daily_usd"], "budget.daily_usd", true);
        if (!n) return std::move(n).error();
        out.daily_usd = *n;
    }
    return {};
}

Result<void> parse_route(const Reader& r, const json& route, RouteConfig& out) {
    if (!route.is_object())
        return r.bad("route", "an object with mode, race, explore, min_runs, seed");
    if (auto ok = r.only_keys(route, "route", {"mode", "race", "explore", "min_runs", "seed"}); !ok)
        return ok;
    if (route.contains("mode")) {
        const std::string mode = route["mode"].is_string() ? route["mode"].get<std::string>() : "";
        if (mode != "all" && mode != "evidence")
            return r.bad("route.mode", "\"all\" or \"evidence\"");
        out.evidence = mode == "evidence";
    }
    if (route.contains("race")) {
        auto n = r.integer(route["race"], "route.race", 1, 20);
        if (!n) return std::move(n).error();
        out.race = *n;
    }
    if (route.contains("min_runs")) {
        auto n = r.integer(route["min_runs"], "route.min_runs", 1, 1000);
        if (!n) return std::move(n).error();
        out.min_runs = *n;
    }
    if (route.contains("explore")) {
        const json& p = route["explore"];
        if (!p.is_number() || !(p.get<double>() >= 0) || p.get<double>() > 1)
            return r.bad("route.explore", "a probability from 0 to 1");
        out.explore = p.get<double>();
    }
    if (route.contains("seed")) {
        const json& seed = route["seed"];
        if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<long long>() >= 0))
            return r.bad("route.seed", "a whole number from 0");
        out.seed = seed.get<std::uint64_t>();
    }
    return {};
}

Result<void> parse_trigger(const Reader& r, const json& trigger, TriggerConfig& out) {
    if (!trigger.is_object())
        return r.bad("trigger", "an object with label, command, allowed_bots, secret_env, plan");
    if (auto ok = r.only_keys(trigger, "trigger",
                              {"label", "command", "allowed_bots", "secret_env", "plan"});
        !ok)
        return ok;
    if (trigger.contains("plan")) {
        if (!trigger["plan"].is_boolean()) return r.bad("trigger.plan", "true or false");
        out.plan = trigger["plan"].get<bool>();
    }
    if (trigger.contains("secret_env")) {
        const json& name = trigger["secret_env"];
        const bool valid =
            name.is_string() && !name.get<std::string>().empty() &&
            std::all_of(name.get<std::string>().begin(), name.get<std::string>().end(), [](char c) {
                return std::isupper(static_cast<unsigned char>(c)) ||
                       std::isdigit(static_cast<unsigned char>(c)) || c == '_';
            });
        if (!valid)
            return r.bad("trigger.secret_env",
                         "the name of an environment variable (e.g. \"COCODE_WEBHOOK_SECRET\"), "
                         "never the secret itself");
        out.secret_env = name.get<std::string>();
    }
    if (trigger.contains("label")) {
        if (!trigger["label"].is_string() || trigger["label"].get<std::string>().empty())
            return r.bad("trigger.label", "a label name");
        out.label = trigger["label"].get<std::string>();
    }
    if (trigger.contains("command")) {
        const json& command = trigger["command"];
        if (!command.is_string() || command.get<std::string>().size() < 2 ||
            command.get<std::string>()[0] != '/' ||
            command.get<std::string>().find_first_of(" \t\n") != std::string::npos)
            return r.bad("trigger.command", "a word starting with '/', e.g. \"/cocode\"");
        out.command = command.get<std::string>();
    }
    if (trigger.contains("allowed_bots")) {
        auto bots = r.strings(trigger["allowed_bots"], "trigger.allowed_bots");
        if (!bots) return std::move(bots).error();
        out.allowed_bots = std::move(bots).value();
    }
    return {};
}

bool valid_agent_name(const std::string& name) {
    // The name becomes part of a branch, a folder and a run id's neighbour: keep it simple,
    // and never something git refuses in a branch name (`..`, a trailing `.lock` or `.`).
    if (name.empty() || name.size() > 40 || name.front() == '-' || name.front() == '.' ||
        name.back() == '.' || name.find("..") != std::string::npos ||
        (name.size() >= 5 && name.compare(name.size() - 5, 5, ".lock") == 0))
        return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '_' || c == '.';
    });
}

// Folders no worktree of a run belongs in.
bool system_folder(const fs::path& path) {
    const fs::path normal = path.lexically_normal();
    if (normal == "/") return true;
    for (const char* top : {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc",
                            "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/log"}) {
        auto rest = normal.lexically_relative(fs::path(top));
        if (!rest.empty() && *rest.begin() != "..") return true;
    }
    return false;
}

bool valid_variable_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// scheme://host[:port][/path], nothing a shell or TOML quoting would have to care about.
bool plausible_url(std::string_view url) {
    std::size_t rest = 0;
    if (url.rfind("https://", 0) == 0)
        rest = 8;
    else if (url.rfind("http://", 0) == 0)
        rest = 7;
    else
        return false;
    if (rest >= url.size() || url[rest] == '/' || url[rest] == ':') return false;
    return std::none_of(url.begin(), url.end(), [](unsigned char c) {
        return c <= ' ' || c == '"' || c == '\\' || c == '\'' || c == 127;
    });
}

// `env`: names passed through (["FIXER_MODE"]), or an object of names and what each gets:
// a string is the value for this agent alone ({"IS_SANDBOX": "1"}), true passes the name
// through. The GitHub token never reaches an agent; COCODE_* and JRUN_* are set per run.
Result<void> parse_agent_env(const Reader& r, const json& value, const std::string& field,
                             AgentConfig& agent) {
    auto check_name = [&](const std::string& name, const std::string& where) -> Result<void> {
        if (!valid_variable_name(name))
            return r.bad(where, "environment variable names (letters, digits and '_')");
        if (is_github_credential(name))
            return r.bad(where, "no GitHub credential: " + name + " never reaches an agent");
        if (name.rfind("COCODE_", 0) == 0 || name.rfind("JRUN_", 0) == 0)
            return r.bad(where,
                         "no " + name + ": COCODE_* and JRUN_* are set by cocode for each run");
        return {};
    };
    if (value.is_array()) {
        auto names = r.strings(value, field);
        if (!names) return std::move(names).error();
        for (std::size_t i = 0; i < names->size(); ++i)
            if (auto ok = check_name((*names)[i], field + "[" + std::to_string(i) + "]"); !ok)
                return ok;
        agent.env = std::move(*names);
        return {};
    }
    if (!value.is_object())
        return r.bad(field, "a list of variable names, or an object of names and values");
    for (const auto& [name, setting] : value.items()) {
        const std::string where = field + "." + name;
        if (auto ok = check_name(name, where); !ok) return ok;
        if (setting.is_string())
            agent.env_values[name] = setting.get<std::string>();
        else if (setting == true)
            agent.env.push_back(name);
        else
            return r.bad(where, "a string (the value for this agent) or true (passed through)");
    }
    return {};
}

fs::path resolve_program(const std::string& program, const fs::path& repo_root) {
    fs::path path(program);
    if (path.is_absolute() || program.find('/') == std::string::npos) return path;
    return (repo_root / path).lexically_normal();
}

const std::vector<std::string> kProcessKeys = {"command", "args", "stdin"};
const std::vector<std::string> kChatKeys = {"provider",        "key_env",         "transport",
                                            "protocol",        "max_turns",       "token_budget",
                                            "command_timeout", "request_timeout", "stream"};
const std::vector<std::string> kCodaliKeys = {"context_window", "summary_model", "critic_rounds"};

bool variable_name(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

// A built-in agent's provider, key, transport and limits (docs/configuration.md).
Result<void> parse_chat(const Reader& r, const json& value, const std::string& field,
                        AgentConfig& agent) {
    ChatSettings& chat = *agent.chat;
    if (value.contains("provider")) {
        const json& p = value["provider"];
        if (!p.is_string() || !chat_provider(p.get<std::string>()))
            return r.bad(field + ".provider", "one of " + chat_provider_names());
        chat.provider = p.get<std::string>();
        const ChatProvider* provider = chat_provider(chat.provider);
        if (provider->key_env.empty())
            agent.token_env.reset();
        else
            agent.token_env = std::string(provider->key_env);
    }
    if (value.contains("key_env")) {
        auto name = r.string(value["key_env"], field + ".key_env");
        if (!name) return std::move(name).error();
        if (!variable_name(*name))
            return r.bad(field + ".key_env",
                         "the name of the environment variable that holds the key, such as "
                         "OPENAI_API_KEY (the key itself never goes in the configuration)");
        if (name->rfind("COCODE_", 0) == 0 || name->rfind("JRUN_", 0) == 0)
            return r.bad(field + ".key_env",
                         "a variable of your own, not COCODE_* or JRUN_* (cocode sets those)");
        if (is_github_credential(*name))
            return r.bad(field + ".key_env",
                         "a variable other than the GitHub token's: it is never given to an agent");
        agent.token_env = *name;
    }
    if (value.contains("transport")) {
        const json& t = value["transport"];
        if (t == "http")
            chat.transport = Transport::http;
        else if (t == "file")
            chat.transport = Transport::file;
        else
            return r.bad(field + ".transport",
                         "\"http\" (the chat API) or \"file\" (copy-paste through the run folder)");
    }
    if (value.contains("protocol")) {
        const json& p = value["protocol"];
        if (agent.type == AgentType::codali) {
            if (p != "codali")
                return r.bad(field + ".protocol", "\"codali\" (a codali agent speaks only it)");
        } else if (p == "textproto") {
            chat.textproto = true;
        } else if (p == "chat" && agent.type != AgentType::textproto) {
            chat.textproto = false;
        } else {
            return r.bad(field + ".protocol",
                         agent.type == AgentType::textproto
                             ? "\"textproto\" (a textproto agent speaks only it)"
                             : "\"chat\" (one request) or \"textproto\"");
        }
    }
    if (chat.transport == Transport::file && agent.type == AgentType::codali)
        return r.bad(field + ".transport",
                     "\"http\": a codali session asks its model many times a turn (summaries), "
                     "which copy-paste cannot carry");
    if (chat.transport == Transport::file && !chat.textproto)
        return r.bad(
            field + ".transport",
            "\"http\": the file transport carries the text protocol (protocol: textproto)");
    if (value.contains("max_turns")) {
        auto n = r.integer(value["max_turns"], field + ".max_turns", 1, 10000);
        if (!n) return std::move(n).error();
        chat.max_turns = *n;
    }
    if (value.contains("token_budget")) {
        const json& b = value["token_budget"];
        if (!b.is_number_unsigned() || b.get<std::uint64_t>() == 0)
            return r.bad(field + ".token_budget", "a positive number of tokens");
        chat.token_budget = b.get<std::uint64_t>();
    }
    for (const char* key : {"command_timeout", "request_timeout"}) {
        if (!value.contains(key)) continue;
        auto d = r.duration(value[key], field + "." + key);
        if (!d) return std::move(d).error();
        (std::string_view(key) == "command_timeout" ? chat.command_timeout : chat.request_timeout) =
            *d;
    }
    if (value.contains("stream")) {
        if (!value["stream"].is_boolean()) return r.bad(field + ".stream", "true or false");
        chat.stream = value["stream"].get<bool>();
    }
    if (value.contains("context_window")) {
        const json& w = value["context_window"];
        if (!w.is_number_unsigned() || w.get<std::uint64_t>() < 1000)
            return r.bad(field + ".context_window",
                         "the model's context window in tokens, at least 1000 (such as 128000)");
        chat.context_window = w.get<std::uint64_t>();
    }
    if (value.contains("summary_model")) {
        auto model = r.string(value["summary_model"], field + ".summary_model");
        if (!model) return std::move(model).error();
        if (model->empty())
            return r.bad(field + ".summary_model", "the name of a (cheaper) model of the provider");
        chat.summary_model = *model;
    }
    if (value.contains("critic_rounds")) {
        auto n = r.integer(value["critic_rounds"], field + ".critic_rounds", 0, 100);
        if (!n) return std::move(n).error();
        chat.critic_rounds = *n;
    }
    const ChatProvider* provider = chat_provider(chat.provider);
    if (chat.transport == Transport::http && provider->base_url.empty() &&
        !value.contains("base_url"))
        return r.bad(field + ".base_url",
                     "the server's URL, such as http://127.0.0.1:8080/v1 (provider " +
                         chat.provider + " has none of its own)");
    if (chat.transport == Transport::http && provider->model.empty() && !value.contains("model"))
        return r.bad(field + ".model",
                     "the model to ask for (provider " + chat.provider + " has no default)");
    return {};
}

Result<AgentConfig> parse_agent(const Reader& r, const std::string& name, const json& value,
                                const std::string& field, const fs::path& repo_root) {
    if (!valid_agent_name(name))
        return r.bad(field,
                     "an agent name of letters, digits, '-', '_' or '.' (at most 40; no '..', not "
                     "ending in '.' or '.lock')");
    if (!value.is_object()) return r.bad(field, "an object describing the agent");
    AgentType type = AgentType::command;
    PresetPtr cli;
    if (value.contains("type")) {
        auto parsed = parse_type(r, value["type"], field + ".type");
        if (!parsed) return std::move(parsed).error();
        type = parsed->type;
        cli = parsed->cli;
    }
    std::vector<std::string> keys = {"type",         "env",          "base_url",     "model",
                                     "timeout",      "idle_timeout", "output_cap",   "restarts",
                                     "max_cost_usd", "max_tokens",   "network_allow"};
    const std::vector<std::string>& own = is_builtin(type) ? kChatKeys : kProcessKeys;
    keys.insert(keys.end(), own.begin(), own.end());
    if (type == AgentType::codali) keys.insert(keys.end(), kCodaliKeys.begin(), kCodaliKeys.end());
    if (auto ok = r.only_keys(value, field, keys); !ok) {
        // A key of the other kind of agent says which kind it belongs to.
        for (const auto& [key, unused] : value.items()) {
            if (type != AgentType::codali &&
                std::find(kCodaliKeys.begin(), kCodaliKeys.end(), key) != kCodaliKeys.end())
                return r.bad(field + "." + key,
                             "nothing here: " + key + " is for codali agents (type codali)");
            const auto& other = is_builtin(type) ? kProcessKeys : kChatKeys;
            if (std::find(other.begin(), other.end(), key) != other.end())
                return r.bad(field + "." + key,
                             is_builtin(type)
                                 ? "nothing here: a built-in agent (" +
                                       std::string(type_name(type)) +
                                       ") runs inside cocode-dispatch, without a command"
                                 : "nothing here: " + key +
                                       " is for the built-in agents (textproto, perplexity, xai, "
                                       "codali)");
        }
        return std::move(ok).error();
    }
    AgentConfig agent = cli ? preset(cli, name) : preset(type, name);
    if (is_builtin(type))
        if (auto ok = parse_chat(r, value, field, agent); !ok) return std::move(ok).error();
    if (value.contains("command")) {
        auto command = r.string(value["command"], field + ".command");
        if (!command) return std::move(command).error();
        agent.argv = {resolve_program(*command, repo_root).string()};
        if (type != AgentType::command && !value.contains("args")) {
            // A preset with only its program replaced keeps the preset's arguments.
            auto defaults = cli ? preset(cli, name).argv : preset(type, name).argv;
            agent.argv.insert(agent.argv.end(), defaults.begin() + 1, defaults.end());
        }
    } else if (type == AgentType::command) {
        return r.bad(field + ".command", "the program to run (type command has no default)");
    }
    if (value.contains("args")) {
        auto args = r.strings(value["args"], field + ".args");
        if (!args) return std::move(args).error();
        agent.argv.resize(1);
        agent.argv.insert(agent.argv.end(), args->begin(), args->end());
    }
    if (value.contains("env")) {
        if (auto ok = parse_agent_env(r, value["env"], field + ".env", agent); !ok)
            return std::move(ok).error();
    }
    for (const char* key : {"base_url", "model"}) {
        if (!value.contains(key)) continue;
        const std::string where = field + "." + key;
        if (type == AgentType::command)
            return r.bad(where, std::string("nothing here: ") + key +
                                    " is for the presets and built-in agents (a command "
                                    "agent gets its own through env)");
        auto text = r.string(value[key], where);
        if (!text) return std::move(text).error();
        if (std::string_view(key) == "base_url") {
            if (!plausible_url(*text))
                return r.bad(where,
                             "an http:// or https:// URL such as https://gateway.example/v1");
            agent.base_url = *text;
        } else {
            if (text->find_first_of(" \t\n\"'") != std::string::npos)
                return r.bad(where, "a model name without spaces or quotes");
            agent.model = *text;
        }
    }
    for (const char* key : {"timeout", "idle_timeout"}) {
        if (!value.contains(key)) continue;
        auto d = r.duration(value[key], field + "." + key);
        if (!d) return std::move(d).error();
        (std::string_view(key) == "timeout" ? agent.timeout : agent.idle_timeout) = *d;
    }
    if (value.contains("output_cap")) {
        auto cap = r.size(value["output_cap"], field + ".output_cap");
        if (!cap) return std::move(cap).error();
        agent.output_cap = *cap;
    }
    if (value.contains("restarts")) {
        auto n = r.integer(value["restarts"], field + ".restarts", 0, kMaxRestarts);
        if (!n) return std::move(n).error();
        agent.restarts = *n;
    }
    if (value.contains("max_cost_usd")) {
        auto n = r.amount(value["max_cost_usd"], field + ".max_cost_usd", true);
        if (!n) return std::move(n).error();
        agent.max_cost_usd = *n;
    }
    if (value.contains("network_allow")) {
        auto entries = r.allow_entries(value["network_allow"], field + ".network_allow");
        if (!entries) return std::move(entries).error();
        agent.network_allow = std::move(*entries);
    }
    if (value.contains("max_tokens")) {
        const json& n = value["max_tokens"];
        if (!n.is_number_integer() || n.get<long long>() <= 0)
            return r.bad(field + ".max_tokens", "a whole number above 0");
        agent.max_tokens = n.get<std::uint64_t>();
    }
    if (value.contains("stdin")) {
        const json& s = value["stdin"];
        if (s == "null")
            agent.stdin_from = Stdin::null;
        else if (s == "prompt")
            agent.stdin_from = Stdin::prompt;
        else
            return r.bad(field + ".stdin", "\"null\" or \"prompt\"");
    }
    if (auto missing = missing_for_preset(agent))
        return r.bad(field + "." + missing->field, missing->expected);
    return agent;
}

Result<void> parse_agents(const Reader& r, const json& value, Config& config,
                          const fs::path& repo_root) {
    auto add = [&](AgentConfig agent, const std::string& field) -> Result<void> {
        if (config.find_agent(agent.name)) return r.bad(field, "a name used only once");
        config.agents.push_back(std::move(agent));
        return {};
    };
    if (value.is_object()) {
        for (const auto& [name, spec] : value.items()) {
            auto agent = parse_agent(r, name, spec, "agents." + name, repo_root);
            if (!agent) return std::move(agent).error();
            if (auto ok = add(std::move(*agent), "agents." + name); !ok) return ok;
        }
        return {};
    }
    if (value.is_array()) {
        // cocode-py's shape: [{"name": …, "command": …, "args": […]}].
        for (std::size_t i = 0; i < value.size(); ++i) {
            std::string field = "agents[" + std::to_string(i) + "]";
            const json& item = value[i];
            if (!item.is_object() || !item.contains("name"))
                return r.bad(field, "an object with name and command");
            auto name = r.string(item["name"], field + ".name");
            if (!name) return std::move(name).error();
            json spec = item;
            spec.erase("name");
            auto agent = parse_agent(r, *name, spec, field, repo_root);
            if (!agent) return std::move(agent).error();
            if (auto ok = add(std::move(*agent), field + ".name"); !ok) return ok;
        }
        return {};
    }
    return r.bad("agents", "an object of agents by name (or cocode-py's list of agents)");
}

}  // namespace

std::string_view type_name(AgentType type) {
    switch (type) {
        case AgentType::command:
            return "command";
        case AgentType::claude:
            return "claude";
        case AgentType::codex:
            return "codex";
        case AgentType::gemini:
            return "gemini";
        case AgentType::cli:
            return "cli";
        case AgentType::textproto:
            return "textproto";
        case AgentType::perplexity:
            return "perplexity";
        case AgentType::xai:
            return "xai";
        case AgentType::codali:
            return "codali";
    }
    return "command";
}

bool is_builtin(AgentType type) {
    return type == AgentType::textproto || type == AgentType::perplexity ||
           type == AgentType::xai || type == AgentType::codali;
}

const AgentConfig* Config::find_agent(std::string_view name) const {
    for (const auto& agent : agents)
        if (agent.name == name) return &agent;
    return nullptr;
}

std::string type_of(const AgentConfig& agent) {
    return agent.cli ? agent.cli->name : std::string(type_name(agent.type));
}

AgentConfig preset(PresetPtr cli, std::string name) {
    // The command line the CLI runs unattended with (config/presets/, docs/agents.md),
    // overridable with command/args.
    AgentConfig agent;
    agent.name = std::move(name);
    agent.type = cli->type;
    agent.argv = {cli->program};
    agent.argv.insert(agent.argv.end(), cli->args.begin(), cli->args.end());
    agent.stdin_from = cli->prompt;
    if (!cli->token.empty()) agent.token_env = cli->token;
    agent.cli = std::move(cli);
    return agent;
}

AgentConfig preset(AgentType type, std::string name) {
    if (type == AgentType::claude || type == AgentType::codex || type == AgentType::gemini)
        return preset(builtin_preset(type_name(type)), std::move(name));
    AgentConfig agent;
    agent.name = std::move(name);
    agent.type = type;
    if (is_builtin(type)) {
        // Run by cocode-dispatch itself (its hidden `agent` subcommand), as a process the
        // supervisor starts like any other; prepare puts the program's path and the run in.
        agent.argv = {"cocode-dispatch", "agent"};
        ChatSettings chat;
        const bool own_provider = type == AgentType::perplexity || type == AgentType::xai;
        chat.provider = own_provider ? std::string(type_name(type)) : "openai";
        chat.textproto = type == AgentType::textproto;
        agent.token_env = std::string(chat_provider(chat.provider)->key_env);
        agent.chat = chat;
    }
    return agent;
}

std::optional<std::string> refname_problem(std::string_view name) {
    if (name.empty() || name == "@") return "an empty name";
    if (name.find("..") != std::string_view::npos) return "'..'";
    if (name.find("@{") != std::string_view::npos) return "'@{'";
    if (name.find("//") != std::string_view::npos) return "'//'";
    if (name.back() == '/' || name.back() == '.') return "a name ending in '/' or '.'";
    for (unsigned char c : name)
        if (c < 0x20 || c == 0x7f ||
            std::string_view(" ~^:?*[\\").find(static_cast<char>(c)) != std::string_view::npos)
            return std::string("the character '") +
                   (c < 0x20 || c == 0x7f ? "control" : std::string(1, static_cast<char>(c))) + "'";
    std::size_t start = 0;
    while (start < name.size()) {
        std::size_t end = name.find('/', start);
        if (end == std::string_view::npos) end = name.size();
        const std::string_view part = name.substr(start, end - start);
        if (!part.empty() && part.front() == '.') return "a part starting with '.'";
        if (part.size() >= 5 && part.substr(part.size() - 5) == ".lock")
            return "a part ending in '.lock'";
        start = end + 1;
    }
    return std::nullopt;
}

// The units of a size, largest first: what parse_size reads and format_size writes.
constexpr std::pair<std::string_view, std::uint64_t> kSizeUnits[] = {
    {"GiB", std::uint64_t{1} << 30},
    {"GB", 1'000'000'000},
    {"MiB", std::uint64_t{1} << 20},
    {"MB", 1'000'000},
    {"KiB", std::uint64_t{1} << 10},
    {"KB", 1'000},
    {"B", 1},
    {"", 1}};

Result<std::uint64_t> parse_size(std::string_view text) {
    auto bad = [&] {
        return Error::usage(
            "'" + std::string(text) +
            "' is not a size (expected e.g. 1GiB, 500MB, 64KB or a number of bytes)");
    };
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0 || digits > 15) return bad();
    const std::uint64_t n = std::stoull(std::string(text.substr(0, digits)));
    const std::string_view suffix = text.substr(digits);
    for (const auto& [unit, size] : kSizeUnits) {
        if (unit != suffix) continue;
        if (n > std::numeric_limits<std::uint64_t>::max() / size) return bad();  // 15 digits of GiB
        return n * size;
    }
    return bad();
}

std::string format_size(std::uint64_t bytes) {
    // The largest unit that divides it: never more digits than the size it was read from.
    for (const auto& [unit, size] : kSizeUnits)
        if (size > 1 && bytes > 0 && bytes % size == 0)
            return std::to_string(bytes / size) + std::string(unit);
    return std::to_string(bytes);
}

Result<Duration> parse_duration(std::string_view text) {
    auto bad = [&] {
        return Error::usage("'" + std::string(text) +
                            "' is not a duration (expected e.g. 90, 90s, 30m, 1h30m, 250ms; at "
                            "most 87600h, ten years)");
    };
    // Ten years: past any limit a run could want, and far from overflowing a count of ms.
    constexpr long long kMaxMs = 87'600LL * 3'600'000;
    if (text.empty()) return bad();
    if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        long long seconds = text.size() > 9 ? 0 : std::stoll(std::string(text));
        if (seconds <= 0 || seconds * 1000 > kMaxMs) return bad();
        return Duration(seconds * 1000);
    }
    long long total = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        std::size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        if (i == start || i - start > 9) return bad();
        long long n = std::stoll(std::string(text.substr(start, i - start)));
        std::size_t unit_start = i;
        while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
        std::string_view unit = text.substr(unit_start, i - unit_start);
        if (unit == "ms")
            total += n;
        else if (unit == "s")
            total += n * 1000;
        else if (unit == "m")
            total += n * 60'000;
        else if (unit == "h")
            total += n * 3'600'000;
        else
            return bad();
        // Checked after each part (at most 999999999h, 3.6e15 ms): the sum never overflows.
        if (total > kMaxMs) return bad();
    }
    if (total <= 0) return bad();
    return Duration(total);
}

std::string format_duration(Duration duration) {
    long long ms = duration.count();
    std::string out;
    for (auto [unit, size] : {std::pair{"h", 3'600'000LL}, {"m", 60'000LL}, {"s", 1'000LL}}) {
        if (ms < size) continue;
        out += std::to_string(ms / size) + unit;
        ms %= size;
    }
    if (ms > 0 || out.empty()) out += std::to_string(ms) + (out.empty() && ms == 0 ? "s" : "ms");
    return out;
}

Result<Config> parse_config(std::string_view text, const fs::path& source,
                            const fs::path& repo_root) {
    Reader r{{source.string()}, {}};
    auto presets = repository_presets(repo_root);
    if (!presets) return std::move(presets).error();
    r.presets = std::move(*presets);
    auto parsed =
        parse_ordered_json_text(text, r.source, "a JSON object, see docs/configuration.md");
    if (!parsed) return std::move(parsed).error();
    const json& doc = *parsed;
    if (!doc.is_object())
        return Error::usage(r.source + ": expected a JSON object, see docs/configuration.md");
    if (auto ok = r.only_keys(
            doc, "",
            {"concurrency",  "timeout",        "grace",         "ready_quiet", "restart_backoff",
             "ready_marker", "worktree_root",  "branch_prefix", "base_branch", "worktree_setup",
             "agents",       "default_agents", "check",         "publish",     "trigger",
             "review",       "sandbox",        "output_cap",    "pricing",     "budget",
             "progress",     "network",        "plan",          "gate",        "environment",
             "route",        "readable",       "$schema"});
        !ok)
        return std::move(ok).error();
    // "$schema" is for editors (docs/config.schema.json); cocode only checks it is text.
    if (doc.contains("$schema") && !doc["$schema"].is_string())
        return r.bad("$schema", "the path or URL of the configuration's JSON Schema");

    Config config;
    config.source = source;
    config.text = std::string(text);
    if (doc.contains("concurrency")) {
        auto n = r.integer(doc["concurrency"], "concurrency", 1, kMaxConcurrency);
        if (!n) return std::move(n).error();
        config.concurrency = *n;
    }
    for (auto [key, slot] : {std::pair{"timeout", &config.timeout},
                             {"grace", &config.grace},
                             {"ready_quiet", &config.ready_quiet},
                             {"restart_backoff", &config.restart_backoff}}) {
        if (!doc.contains(key)) continue;
        auto d = r.duration(doc[key], key);
        if (!d) return std::move(d).error();
        *slot = *d;
    }
    for (auto [key, slot] : {std::pair{"ready_marker", &config.ready_marker},
                             {"worktree_root", &config.worktree_root},
                             {"branch_prefix", &config.branch_prefix}}) {
        if (!doc.contains(key)) continue;
        auto s = r.string(doc[key], key);
        if (!s) return std::move(s).error();
        *slot = *s;
    }
    {
        // Relative: inside the repository. Absolute: anywhere that is not the system's.
        const fs::path root(config.worktree_root);
        if (root.is_absolute()
                ? system_folder(root)
                : (root.lexically_normal().empty() || *root.lexically_normal().begin() == ".." ||
                   root.lexically_normal() == "."))
            return r.bad("worktree_root",
                         "a folder inside the repository (such as .cocode/worktrees), or an "
                         "absolute path outside the system's folders");
        if (auto problem = refname_problem("refs/heads/" + config.branch_prefix + "1-agent"))
            return r.bad("branch_prefix",
                         "the start of a git branch name such as cocode/ (not " + *problem + ")");
    }
    if (doc.contains("base_branch")) {
        auto s = r.string(doc["base_branch"], "base_branch");
        if (!s) return std::move(s).error();
        config.base_branch = *s;
    }
    if (doc.contains("output_cap")) {
        auto cap = r.size(doc["output_cap"], "output_cap");
        if (!cap) return std::move(cap).error();
        config.output_cap = *cap;
    }
    if (doc.contains("sandbox")) {
        const json& mode = doc["sandbox"];
        if (mode == "auto")
            config.sandbox = SandboxMode::automatic;
        else if (mode == "bwrap")
            config.sandbox = SandboxMode::bwrap;
        else if (mode == "none")
            config.sandbox = SandboxMode::none;
        else
            return r.bad("sandbox", "\"auto\", \"bwrap\" or \"none\"");
    }
    if (doc.contains("readable")) {
        auto paths = r.strings(doc["readable"], "readable");
        if (!paths) return std::move(paths).error();
        for (const auto& path : *paths) {
            const fs::path named =
                path.rfind("~/", 0) == 0 ? fs::path(path.substr(2)) : fs::path(path);
            const bool dotted = std::any_of(named.begin(), named.end(),
                                            [](const fs::path& part) { return part == ".."; });
            if ((path.rfind("~/", 0) != 0 && !named.is_absolute()) || dotted ||
                named.lexically_normal() == "/" || named.lexically_normal().empty())
                return r.bad("readable",
                             "absolute paths or ~/… paths of folders or files "
                             "for sandboxed children to read (not \"" +
                                 path + "\")");
        }
        config.readable = std::move(*paths);
    }
    if (doc.contains("worktree_setup")) {
        const json& setup = doc["worktree_setup"];
        if (!setup.is_object()) return r.bad("worktree_setup", "an object with copy and commands");
        if (auto ok = r.only_keys(setup, "worktree_setup", {"copy", "commands"}); !ok)
            return std::move(ok).error();
        if (setup.contains("copy")) {
            auto copy = r.strings(setup["copy"], "worktree_setup.copy");
            if (!copy) return std::move(copy).error();
            for (const auto& file : *copy) {
                fs::path p(file);
                if (p.is_absolute() || file.find("..") != std::string::npos)
                    return r.bad("worktree_setup.copy", "paths inside the repository");
            }
            config.setup.copy = std::move(*copy);
        }
        if (setup.contains("commands")) {
            auto commands = r.strings(setup["commands"], "worktree_setup.commands");
            if (!commands) return std::move(commands).error();
            config.setup.commands = std::move(*commands);
        }
    }
    if (doc.contains("environment")) {
        config.environment.emplace();
        if (auto ok = parse_environment(r, doc["environment"], *config.environment); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("check")) {
        if (auto ok = parse_check(r, doc["check"], config.check); !ok) return std::move(ok).error();
    }
    if (doc.contains("publish")) {
        if (auto ok = parse_publish(r, doc["publish"], config.publish); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("trigger")) {
        if (auto ok = parse_trigger(r, doc["trigger"], config.trigger); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("review")) {
        if (auto ok = parse_review(r, doc["review"], config.review); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("plan")) {
        if (auto ok = parse_plan(r, doc["plan"], config.plan); !ok) return std::move(ok).error();
    }
    if (doc.contains("gate")) {
        if (auto ok = parse_gate(r, doc["gate"], config.gate); !ok) return std::move(ok).error();
    }
    if (doc.contains("pricing")) {
        if (auto ok = parse_pricing(r, doc["pricing"], config.pricing); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("network")) {
        if (auto ok = parse_network(r, doc["network"], config.network); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("budget")) {
        if (auto ok = parse_budget(r, doc["budget"], config.budget); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("route")) {
        if (auto ok = parse_route(r, doc["route"], config.route); !ok) return std::move(ok).error();
    }
    if (doc.contains("progress")) {
        if (auto ok = parse_progress(r, doc["progress"], config.progress); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("agents")) {
        if (auto ok = parse_agents(r, doc["agents"], config, repo_root); !ok)
            return std::move(ok).error();
    }
    if (doc.contains("default_agents")) {
        auto names = r.strings(doc["default_agents"], "default_agents");
        if (!names) return std::move(names).error();
        for (const auto& name : *names) {
            if (!config.find_agent(name))
                return r.bad("default_agents",
                             "names of agents defined in agents ('" + name + "' is not)");
        }
        config.default_agents = std::move(*names);
    }
    return config;
}

std::vector<fs::path> readable_paths(const Config& config, const fs::path& home) {
    std::vector<fs::path> out;
    for (const auto& path : config.readable) {
        if (path.rfind("~/", 0) != 0)
            out.emplace_back(path);
        else if (!home.empty())
            out.push_back(home / path.substr(2));
    }
    return out;
}

fs::path worktree_root_of(const std::string& worktree_root, const fs::path& repo_root) {
    const fs::path root(worktree_root);
    return root.is_absolute() ? root : (repo_root / root).lexically_normal();
}

Result<Config> load_config(const fs::path& repo_root) {
    fs::path file = repo_root / kConfigFile;
    std::error_code ec;
    if (!fs::exists(file, ec)) return Config{};
    auto text = read_file(file, std::size_t{1} << 20);
    if (!text) return std::move(text).error();
    return parse_config(*text, fs::path(kConfigFile), repo_root);
}

Result<std::vector<AgentConfig>> choose_agents(const Config& config,
                                               const std::vector<std::string>& names) {
    if (config.agents.empty())
        return Error::usage(
            "no agents configured in " +
            (config.source.empty() ? std::string(kConfigFile) : config.source.string()) +
            " (run `cocode-dispatch init`)");
    std::vector<std::string> wanted = names;
    if (wanted.empty()) wanted = config.default_agents;
    if (wanted.empty()) return config.agents;
    std::vector<std::string> known;
    for (const auto& a : config.agents) known.push_back(a.name);
    std::vector<AgentConfig> chosen;
    for (const auto& name : wanted) {
        const auto* agent = config.find_agent(name);
        if (!agent) {
            std::string message = "--agent: no agent '" + name + "' in " + kConfigFile;
            if (auto near = closest_word(name, known))
                message += " (did you mean '" + *near + "'?)";
            return Error::usage(message);
        }
        if (std::none_of(chosen.begin(), chosen.end(),
                         [&](const AgentConfig& a) { return a.name == name; }))
            chosen.push_back(*agent);
    }
    return chosen;
}

Result<Config> with_overrides(const Config& config, const Overrides& overrides,
                              const std::filesystem::path& repo_root) {
    if (overrides.empty()) return config;
    // Ordered, so that the agents keep the order the file gives them.
    nlohmann::ordered_json doc = config.text.empty()
                                     ? nlohmann::ordered_json::object()
                                     : nlohmann::ordered_json::parse(config.text, nullptr, false);
    if (!doc.is_object()) return Error::usage(std::string(kConfigFile) + ": not a JSON object");
    if (overrides.ready_marker) doc["ready_marker"] = *overrides.ready_marker;
    if (overrides.sandbox) doc["sandbox"] = *overrides.sandbox;
    if (overrides.allowed_paths || overrides.verify) {
        if (!doc.contains("check") || !doc["check"].is_object())
            doc["check"] = nlohmann::ordered_json::object();
        if (overrides.allowed_paths) doc["check"]["allowed_paths"] = *overrides.allowed_paths;
        if (overrides.verify) doc["check"]["verify"] = *overrides.verify;
    }
    const fs::path source = config.source.empty() ? fs::path(kConfigFile) : config.source;
    return parse_config(json_dump(doc, 2) + "\n", source, repo_root);
}

}  // namespace cocode::config
