// What a coding CLI runs on. A CLI installed from npm as a Node.js script (codex, gemini) runs
// on whatever `node` its first line finds, and says in its package's engines field which
// versions of Node.js it accepts; on an older one it dies before it can print its version
// (Gemini CLI 0.61 on Debian 12's Node.js 18.20, in ModuleLoader). claude is a native binary
// and needs nothing. doctor asks this module so that it can name what a CLI needs and what it
// found, instead of "its version is unknown".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocode::agent {

// What a Node.js CLI asks of the Node.js that runs it.
struct NodeNeed {
    std::string package;          // its package.json's name, "@google/gemini-cli"
    std::string package_version;  // "0.61.0"
    std::string range;            // engines.node as written, ">=20"
    // What runs it, from its first line: "node" for `#!/usr/bin/env node` (looked up in PATH),
    // else the absolute path the line names.
    std::string interpreter;
};

// The need of `program` (a path, links followed), or nullopt when it is not a Node.js script
// or its package names no engines.node: then there is nothing to check.
std::optional<NodeNeed> node_need_of(const std::filesystem::path& program);

// Whether `version` ("18.20.4", a leading v allowed) is in an npm engines range: comparators
// >=, >, <=, <, = and bare versions, ^ and ~, x-ranges ("20", "20.x"), hyphen ranges, all
// joined by spaces (and) and || (or). nullopt when the range cannot be read.
std::optional<bool> satisfies(std::string_view range, std::string_view version);

// The range as a person reads it: ">=20" and ">=20.0.0" are "≥ 20"; anything else as written.
std::string describe_range(std::string_view range);

struct RuntimeVerdict {
    bool met = false;
    std::string detail;  // one line for doctor
};

// The decision, from what was found: `cli` is the program's name ("gemini"), `node` where
// the interpreter was found (nullopt: not at all), `version_output` what its --version said
// (empty: it failed).
RuntimeVerdict judge_node_runtime(const NodeNeed& need, std::string_view cli,
                                  const std::optional<std::filesystem::path>& node,
                                  std::string_view version_output);

// The flags of a command line (argv[0] aside; `--flag=value` as `--flag`) that a CLI's
// `--help` text does not list as a flag of its own: a newer or older CLI than its preset knows.
// A flag counts as listed where it stands as a word of its own (not inside --flag-longer).
std::vector<std::string> unlisted_flags(const std::vector<std::string>& argv,
                                        std::string_view help);

}  // namespace cocode::agent
