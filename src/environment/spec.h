// What prepares a repository's environment (docs/environments.md): the `environment` block of
// the configuration, else the commands of a `.devcontainer/devcontainer.json`, else nothing.
// Read from the base commit (never from an agent's tree), so that a run's environment is a
// function of what it was sealed with.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"

namespace cocode::environment {

inline constexpr char kDevcontainerFile[] = ".devcontainer/devcontainer.json";

struct Spec {
    std::string source;  // "environment in .cocode/config.json", ".devcontainer/devcontainer.json"
    std::vector<std::string> setup;
    std::optional<std::vector<std::string>> key;  // globs; unset: the lockfiles
    std::vector<std::string> key_commands;
    std::optional<std::vector<std::string>> paths;  // unset: what the setup made, untracked
    std::vector<std::pair<std::string, std::string>> env;
    config::Duration timeout = std::chrono::minutes(20);
    // What a devcontainer.json names that cocode does not use ("image", "build"): said by
    // `init` and `doctor`.
    std::vector<std::string> not_used;
    std::vector<std::string> fields;  // a devcontainer.json's: those that gave commands
};

// One line for `init` and `doctor`: where the setup comes from, and for a devcontainer.json
// that its commands run on the host under cocode's sandbox and what of it is not used.
std::string describe(const Spec& spec);

// `base` ("NAME=value" entries) with `env` set over it, for a tree at `tree`: in a value,
// `${tree}` is the tree and `${env:NAME}` NAME's value in `base` ("" when unset).
std::vector<std::string> with_env(const std::vector<std::string>& base,
                                  const std::vector<std::pair<std::string, std::string>>& env,
                                  const std::filesystem::path& tree);

// The setup commands of a devcontainer.json (JSON with comments and trailing commas):
// `onCreateCommand`, `updateContentCommand`, `postCreateCommand`, in that order, each a string
// (a shell command), an array (a program and its arguments, quoted here for `sh -c`) or an
// object of those (each in the order written). Also what it names that is not used.
// `source` names the file in errors (exit 2, naming the field).
Result<Spec> devcontainer_spec(std::string_view text, const std::string& source);

// The spec for a repository: `config.environment` when set; else the devcontainer.json that
// `devcontainer_text` holds (nullopt: none); else nullopt.
Result<std::optional<Spec>> spec_of(const config::Config& config,
                                    const std::optional<std::string>& devcontainer_text);

}  // namespace cocode::environment
