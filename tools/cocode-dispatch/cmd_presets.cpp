// cocode-dispatch presets [NAME]: the coding CLIs cocode runs from a preset, built in and the
// repository's own (.cocode/presets/), with where each comes from; with a name, the preset's
// file as it is, to read or to copy as the start of one's own (docs/agents.md).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config/presets.h"
#include "core/files.h"
#include "core/terminal_text.h"
#include "proc/command.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

int run_presets(const PresetsArgs& args) {
    Workspace ws = open_workspace(false);
    std::vector<config::PresetPtr> presets = config::builtin_presets();
    // A repository's preset file that does not parse is the configuration's error: exit 2.
    auto own = config::repository_presets(ws.root);
    if (!own) throw Failure(std::move(own).error());
    presets.insert(presets.end(), own->begin(), own->end());

    if (args.name) {
        for (const auto& cli : presets) {
            if (cli->name != *args.name) continue;
            if (cli->source == "built in") {
                std::fputs(std::string(config::builtin_preset_text(cli->name)).c_str(), stdout);
            } else {
                // The repository's file, as anyone with write access wrote it.
                std::fputs(terminal_safe(read_file(ws.root / cli->source).value_or_throw()).c_str(),
                           stdout);
            }
            return 0;
        }
        std::string names;
        for (const auto& cli : presets) names += (names.empty() ? "" : ", ") + cli->name;
        throw Failure(
            Error::usage("no preset named '" + *args.name + "' (there are " + names + ")"));
    }

    nlohmann::json list = nlohmann::json::array();
    for (const auto& cli : presets) {
        const auto found = find_in_path(cli->program);
        list.push_back({{"name", cli->name},
                        {"source", cli->source},
                        {"program", cli->program},
                        {"found", found ? nlohmann::json(found->string()) : nlohmann::json()},
                        {"tested_version", cli->tested_version},
                        {"stream", cli->stream},
                        {"prompt", cli->prompt == config::Stdin::argument ? "argument" : "stdin"},
                        {"key", cli->token}});
    }
    if (args.json) {
        std::printf("%s\n", terminal_safe(list.dump(2)).c_str());
        return 0;
    }
    std::printf("%-10s %-28s %-9s %-9s %s\n", "PRESET", "FROM", "TESTED", "STREAM", "PROGRAM");
    for (const auto& p : list) {
        const std::string where = p["found"].is_string()
                                      ? p["found"].get<std::string>()
                                      : p["program"].get<std::string>() + " (not on PATH)";
        std::printf("%-10s %-28s %-9s %-9s %s\n",
                    terminal_safe_line(p["name"].get<std::string>()).c_str(),
                    terminal_safe_line(p["source"].get<std::string>()).c_str(),
                    terminal_safe_line(p["tested_version"].get<std::string>()).c_str(),
                    terminal_safe_line(p["stream"].get<std::string>()).c_str(),
                    terminal_safe_line(where).c_str());
    }
    return 0;
}

}  // namespace cocode::dispatch_cli
