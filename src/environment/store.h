// The machine's store of prepared environments (docs/environments.md): one folder per key,
// built once — in a clean checkout of a commit, by the setup commands, under whatever runner
// the caller gives (agent/ gives the sandbox behind the egress proxy) — then kept read-only
// and checked against its manifest every time it is taken.
//
//   <store>/<key>/tree/          what the setup made (only its `paths`), where it was made:
//                                absolute paths inside it (a venv's scripts) keep working
//   <store>/<key>/manifest.json  written last, atomically: an environment without one is not
//                                finished, whatever else is there (a build killed with -9)
//   <store>/<key>/stamp          the files' metadata when last checked whole (not shared)
//   <store>/<key>.uses/<name>    who takes it: a run's folder, or a check's process (recorded
//                                before it is taken, so that prune never removes it under them)
//   <store>/.locks/<key>.building  the build's lock: builders of one key wait for one build
//                                (a folder kept out of every sandbox's sight: an agent that sees
//                                the store read-only could hold a lock there and stall builds)
//   <store>/<key>.log            the last build's log (kept when it failed)
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "environment/spec.h"
#include "proc/command_runner.h"

namespace cocode::environment {

// $COCODE_ENV_STORE, else $XDG_CACHE_HOME/cocode/environments, else
// $HOME/.cache/cocode/environments.
std::filesystem::path default_store();

// One entry of an environment: a file (`digest` its SHA-256), a folder, or a link (`digest`
// its target). Paths relative to the tree, '/'-separated.
struct ManifestFile {
    std::string path;
    char type = 'f';  // 'f', 'd', 'l'
    unsigned mode = 0;
    std::uint64_t size = 0;
    std::string digest;
};

struct Manifest {
    std::string key;
    std::string created;             // UTC, ISO 8601
    std::string source;              // the spec's source
    std::string commit;              // the commit it was built from
    std::vector<std::string> paths;  // its top entries in the tree (node_modules, .venv)
    std::vector<std::pair<std::string, std::string>> env;
    std::vector<ManifestFile> files;
    std::uint64_t size = 0;  // bytes of its files
    std::string hash;        // over every entry (the files' digests included)
};

// A finished, checked environment.
struct Entry {
    std::filesystem::path dir;  // <store>/<key>
    Manifest manifest;
    std::filesystem::path tree() const { return dir / "tree"; }
};

// The one line a failed setup command is: "`npm ci` exited with 1 (log: …)", "timed out after
// 20m", the hosts refused.
std::string setup_failure(const CommandRequest& command, const CommandOutcome& outcome,
                          const std::string& timeout_text);

struct BuildRequest {
    std::string key;
    Spec spec;
    std::filesystem::path repo_dir;  // a folder of the repository it is built from
    std::string commit;
    std::vector<std::string> environment;  // for the setup (the spec's env is added)
};

// Who uses an environment: a run (while its run-info says it is queued or running), or a
// process (while it lives).
struct Use {
    std::string name;                  // the run id, or "check-<pid>"
    std::filesystem::path run_folder;  // a run's
    long pid = 0;
    std::uint64_t start = 0;
    std::string boot;
};

struct Listed {
    std::string key;
    Manifest manifest;
    std::chrono::system_clock::time_point last_used;
    std::vector<Use> live;  // uses that still hold it
    std::size_t uses = 0;   // every use recorded
};

struct Pruned {
    std::vector<std::string> removed;  // keys, and unfinished builds ("<key> (unfinished)")
    std::uint64_t freed = 0;
};

class Store {
  public:
    explicit Store(std::filesystem::path root) : root_(std::move(root)) {}
    const std::filesystem::path& root() const { return root_; }
    std::filesystem::path dir_of(const std::string& key) const { return root_ / key; }
    std::filesystem::path log_of(const std::string& key) const { return root_ / (key + ".log"); }
    std::filesystem::path uses_of_key(const std::string& key) const {
        return root_ / (key + ".uses");
    }
    static std::filesystem::path locks_in(const std::filesystem::path& store) {
        return store / ".locks";
    }
    std::filesystem::path lock_of(const std::string& key) const {
        return locks_in(root_) / (key + ".building");
    }

    // The finished environment of `key`, checked against its manifest; nullopt when there is
    // none to take, and `why_not` says why ("not built", "unfinished", "changed: …").
    Result<std::optional<Entry>> take(const std::string& key, std::string* why_not = nullptr) const;

    // The environment of the request's key: taken when finished and whole; else built, once
    // (builders of one key wait for one build), and said through `notice`. A setup that fails
    // or times out leaves nothing behind but its log; its error is the one line.
    Result<Entry> ensure(const BuildRequest& request, const CommandRunner& run,
                         const std::function<void(const std::string&)>& notice = {}) const;

    // The finished environment of `key` as its manifest says, without checking its files
    // against it: for a reader that may not write the store (inside an agent's sandbox, whose
    // run checked it when it started). An error when it has no manifest.
    Result<Entry> as_recorded(const std::string& key) const;

    // The paths of a finished environment (its manifest's), without checking it; empty when
    // there is none.
    std::vector<std::string> paths_of(const std::string& key) const;

    // Recorded before ensure() takes it: prune keeps what a live use holds.
    Result<void> add_use(const std::string& key, const Use& use) const;
    void drop_use(const std::string& key, const std::string& name) const;

    // Every finished environment, newest use first.
    std::vector<Listed> list() const;

    // Removes what no live use holds: unfinished builds nobody is making, then the
    // environments beyond the `keep` most recently used, then the least recently used until
    // the rest fit in `max_size` bytes.
    Result<Pruned> prune(std::size_t keep, std::optional<std::uint64_t> max_size) const;

  private:
    Result<Entry> build(const BuildRequest& request, const CommandRunner& run) const;
    std::filesystem::path root_;
};

// A checkout of `commit`, detached, at `dest`: a clone sharing the objects of the repository
// at `repo_dir` (none copied), a repository of its own (what runs there may use git), nothing
// registered in the repository's worktrees, the user's hooks not run. Where an environment is
// built, and a check's clean tree.
Result<void> shared_checkout(const std::filesystem::path& repo_dir,
                             const std::filesystem::path& dest, const std::string& commit);

// Whether a use still holds its environment.
bool use_is_live(const Use& use);

}  // namespace cocode::environment
