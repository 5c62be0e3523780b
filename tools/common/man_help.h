// The help a man page is made from (help2man, tools/CMakeLists.txt): the tool's own help, then
// every command's under a heading of its own ("Command run:"), its description, its usage and
// its options, each group of options after a line naming it. (--help-all runs a command's
// description into its options' headings, which help2man joins into one paragraph.)
// Header-only: cocode-hook has it too, and links none of the other tools' libraries.
#pragma once

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>

namespace cocode::tool {

namespace man_detail {

// A command's own help, as its --help prints it, made into a section of the page: the lines
// a man page has already (the help flags) left out, each group's heading an indented line.
inline std::string section(CLI::App& command, const std::string& tool, const std::string& path) {
    std::string out = "Command " + path + ":\n  " + command.get_description() + "\n\n";
    std::istringstream lines(command.help("", CLI::AppFormatMode::Normal));
    std::string line;
    bool first = true;
    while (std::getline(lines, line)) {
        if (first) {  // its description, said above
            first = false;
            continue;
        }
        if (line.rfind("Usage: ", 0) == 0) {  // "Usage: list [OPTIONS]": the whole command
            const std::string own = "Usage: " + command.get_name();
            out += "  Usage: " + tool + " " + path +
                   line.substr(std::min(own.size(), line.size())) + "\n\n";
            continue;
        }
        if (line.find("-h,--help ") != std::string::npos ||
            line.find("--help-all ") != std::string::npos)
            continue;
        if (line == "Options:" || line == "Positionals:") continue;
        if (!line.empty() && line[0] != ' ' && line.back() == ':') {
            out += "  " + line + "\n\n";  // a group of options
            continue;
        }
        out += line + "\n";
    }
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
        out.pop_back();
    return out + "\n";
}

inline void sections(CLI::App& app, const std::string& tool, const std::string& path,
                     std::string& out) {
    for (CLI::App* command : app.get_subcommands({})) {
        if (command->get_group().empty()) continue;  // hidden
        const std::string name =
            path.empty() ? command->get_name() : path + " " + command->get_name();
        if (command->get_subcommands({}).empty())
            out += section(*command, tool, name);
        else
            sections(*command, tool, name, out);
    }
}

}  // namespace man_detail

inline std::string man_help(CLI::App& app) {
    std::string out = app.help("", CLI::AppFormatMode::Normal) + "\n";
    man_detail::sections(app, app.get_name(), "", out);
    return out;
}

}  // namespace cocode::tool
