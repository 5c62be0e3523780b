// Shell completion that cannot drift from the command line: the shells' scripts only pass the
// words typed so far to the tool's hidden `__complete` command, and the tool answers from its
// own CLI11 definitions (commands, options) and from the repository (agent names, issues).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cli_errors.h"

namespace cocode::tool {

// Values for an option or a positional, by its name ("--agent", "issue"); none by default.
using CompletionValues = std::function<std::vector<std::string>(const std::string& name)>;

// The candidates for the last of `words` (the word being typed, maybe empty), after the ones
// before it: the commands and options of the command they reached, or the values of the
// option just before it, or of the command's positionals. Only those starting with it.
inline std::vector<std::string> complete(const CLI::App& root,
                                         const std::vector<std::string>& words,
                                         const CompletionValues& values) {
    const CLI::App* at = &root;
    const std::string current = words.empty() ? "" : words.back();
    const CLI::Option* pending = nullptr;  // an option whose value comes next
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const std::string& word = words[i];
        pending = nullptr;
        if (word.rfind("-", 0) == 0) {
            if (word.find('=') != std::string::npos) continue;
            for (const CLI::Option* option : at->get_options())
                if (option->check_name(word) && option->get_type_size() != 0) pending = option;
            continue;
        }
        for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
            if (sub->get_name() == word) at = sub;
    }
    std::vector<std::string> out;
    const auto offer = [&](const std::string& candidate) {
        if (candidate.rfind(current, 0) == 0) out.push_back(candidate);
    };
    if (pending) {
        const auto& longs = pending->get_lnames();
        for (const auto& value : values(longs.empty() ? pending->get_name() : "--" + longs.front()))
            offer(value);
        return out;
    }
    if (current.rfind("-", 0) == 0) {
        for (const CLI::Option* option : at->get_options())
            for (const auto& name : option->get_lnames()) offer("--" + name);
        return out;
    }
    for (const auto& name : detail::subcommand_names(*at)) offer(name);
    for (const CLI::Option* option : at->get_options())
        if (option->get_positional())
            for (const auto& value : values(option->get_name())) offer(value);
    return out;
}

// The script a shell sources to complete `tool` through `tool __complete`.
inline std::string completion_script(const std::string& tool, std::string_view shell) {
    std::string function = "_" + tool;
    for (char& c : function)
        if (c == '-') c = '_';
    if (shell == "bash")
        return "# bash completion for " + tool + ": source it, or put it in\n" +
               "# /usr/share/bash-completion/completions/" + tool + "\n" + function +
               "() {\n"
               "    local IFS=$'\\n'\n"
               "    COMPREPLY=($(\"${COMP_WORDS[0]}\" __complete \"${COMP_WORDS[@]:1:COMP_CWORD}\" "
               "2>/dev/null))\n"
               "}\n"
               "complete -o default -F " +
               function + " " + tool + "\n";
    if (shell == "zsh")
        return "#compdef " + tool + "\n# zsh completion for " + tool +
               ": put it in a folder of $fpath as _" + tool + "\n" + function +
               "() {\n"
               "    local -a candidates\n"
               "    candidates=(\"${(@f)$(\"${words[1]}\" __complete \"${(@)words[2,CURRENT]}\" "
               "2>/dev/null)}\")\n"
               "    compadd -- \"${candidates[@]}\"\n"
               "}\n"
               "if [ \"$funcstack[1]\" = \"" +
               function + "\" ]; then " + function + " \"$@\"; else compdef " + function + " " +
               tool + "; fi\n";
    // fish
    return "# fish completion for " + tool + ": put it in ~/.config/fish/completions/" + tool +
           ".fish\ncomplete -c " + tool + " -f -a '(" + tool +
           " __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'\n";
}

}  // namespace cocode::tool
