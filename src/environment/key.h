// What keys an environment: the files whose contents it is made from (the lockfiles, by
// default, at the root and in workspaces), the setup's text, the key commands' output
// (`node --version`), the repository and the platform. Two commits with the same of all these
// share one environment; a lockfile an agent changes gives its commit a key of its own.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "environment/spec.h"
#include "proc/command_runner.h"

namespace cocode::environment {

// The lockfiles that key an environment by default (docs/environments.md).
const std::vector<std::string_view>& lockfile_names();

// A file of a commit: its path and blob id (its contents, as git names them).
struct CommitFile {
    std::string path;
    std::string blob;
};

// Which files of a commit key it: those matching `globs` (core/glob.h), else every lockfile at
// any depth (a workspace's own), except inside node_modules/ and vendor/.
std::vector<CommitFile> key_files(const std::vector<CommitFile>& files,
                                  const std::optional<std::vector<std::string>>& globs);

struct KeyInputs {
    std::string identity;  // the repository: origin's URL without credentials, else its folder
    std::string platform;  // "Linux x86_64 debian 12"
    std::vector<CommitFile> files;
    std::vector<std::pair<std::string, std::string>> commands;  // key_commands and their output
};

// The key (24 hex digits of a SHA-256 over all of it): a pure function, tabled in the tests.
std::string key_of(const Spec& spec, const KeyInputs& inputs);

// The key of an environment built from `commit` when that commit is not trusted (an agent's
// that changed a key file): `key` made that commit's alone, so that its build is never taken
// for another commit's environment with the same key files.
std::string commit_scoped_key(const std::string& key, const std::string& commit);

// The inputs for `commit` of the repository at `repo_dir`: its files (git ls-tree), its
// identity, this machine's platform, and the key commands' output, each run by `runner` (the
// sandbox: agent::confined_runner) reading `cwd` — the repository's main worktree, or a clean
// tree of the commit when the commit is an agent's. A command that fails is an error naming
// it: a key must not silently lose a part.
Result<KeyInputs> key_inputs(const Spec& spec, const std::filesystem::path& repo_dir,
                             const std::string& commit, const CommandRunner& runner,
                             const std::filesystem::path& cwd);

// The files of `commit` that key it (git ls-tree, then key_files): no key command runs.
Result<std::vector<CommitFile>> key_files_at(const Spec& spec,
                                             const std::filesystem::path& repo_dir,
                                             const std::string& commit);

// Both: the key of `commit`.
Result<std::string> key_at(const Spec& spec, const std::filesystem::path& repo_dir,
                           const std::string& commit, const CommandRunner& runner,
                           const std::filesystem::path& cwd);

// The spec of a repository at `commit`: `config.environment`, else that commit's
// devcontainer.json (environment/spec.h); nullopt for none.
Result<std::optional<Spec>> spec_at(const config::Config& config,
                                    const std::filesystem::path& repo_dir,
                                    const std::string& commit);

// What differs between the key files of two commits ("package-lock.json"), for saying why a
// commit has an environment of its own.
std::vector<std::string> changed_key_files(const std::vector<CommitFile>& a,
                                           const std::vector<CommitFile>& b);

}  // namespace cocode::environment
