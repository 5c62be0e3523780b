#include "environment/key.h"

#include <sys/utsname.h>

#include <algorithm>
#include <map>

#include "core/files.h"
#include "core/glob.h"
#include "core/sha256.h"
#include "git/cli.h"
#include "proc/command.h"
#include "proc/environment.h"
#include "proc/spawn.h"

namespace cocode::environment {
namespace fs = std::filesystem;

namespace {

std::string base_name(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A line of /etc/os-release: ID, VERSION_ID (quotes dropped).
std::string os_release(const std::string& text, const std::string& name) {
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        if (line.rfind(name + "=", 0) != 0) continue;
        std::string value = line.substr(name.size() + 1);
        std::erase(value, '"');
        return value;
    }
    return "";
}

std::string platform() {
    struct utsname u {};
    ::uname(&u);
    std::string out = std::string(u.sysname) + " " + u.machine;
    if (auto release = read_file("/etc/os-release", 64 << 10))
        out += " " + os_release(*release, "ID") + " " + os_release(*release, "VERSION_ID");
    return out;
}

// origin's URL without what a URL can carry of credentials (user:token@).
std::string without_credentials(std::string url) {
    const std::size_t scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    const std::size_t at = url.find('@', scheme + 3), slash = url.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash))
        url.erase(scheme + 3, at - scheme - 2);
    return url;
}

Result<std::vector<CommitFile>> files_of(const fs::path& repo_dir, const std::string& commit) {
    auto listed = git::git_output(repo_dir, {"ls-tree", "-r", "-z", "--full-tree", commit});
    if (!listed) return std::move(listed).error();
    std::vector<CommitFile> out;
    std::size_t at = 0;
    while (at < listed->size()) {
        std::size_t end = listed->find('\0', at);
        if (end == std::string::npos) end = listed->size();
        const std::string entry = listed->substr(at, end - at);
        at = end + 1;
        // "<mode> <type> <object>\t<path>"
        const std::size_t tab = entry.find('\t');
        const std::size_t space = entry.rfind(' ', tab);
        if (tab == std::string::npos || space == std::string::npos) continue;
        if (entry.find(" blob ") == std::string::npos) continue;  // submodules
        out.push_back({entry.substr(tab + 1), entry.substr(space + 1, tab - space - 1)});
    }
    return out;
}

}  // namespace

const std::vector<std::string_view>& lockfile_names() {
    static const std::vector<std::string_view> names = {
        "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock",
        "bun.lock",          "bun.lockb",           "poetry.lock",    "uv.lock",
        "Pipfile.lock",      "Cargo.lock",          "go.sum",         "Gemfile.lock",
        "composer.lock"};
    return names;
}

std::vector<CommitFile> key_files(const std::vector<CommitFile>& files,
                                  const std::optional<std::vector<std::string>>& globs) {
    std::vector<CommitFile> out;
    for (const auto& file : files) {
        bool keyed = false;
        if (globs) {
            keyed = std::any_of(globs->begin(), globs->end(),
                                [&](const std::string& g) { return glob_match(g, file.path); });
        } else {
            const std::string name = base_name(file.path);
            const bool vendored = ("/" + file.path).find("/node_modules/") != std::string::npos ||
                                  ("/" + file.path).find("/vendor/") != std::string::npos;
            const auto& locks = lockfile_names();
            keyed = !vendored && (std::find(locks.begin(), locks.end(), name) != locks.end() ||
                                  (name.rfind("requirements", 0) == 0 && name.size() > 4 &&
                                   name.compare(name.size() - 4, 4, ".txt") == 0));
        }
        if (keyed) out.push_back(file);
    }
    std::sort(out.begin(), out.end(),
              [](const CommitFile& a, const CommitFile& b) { return a.path < b.path; });
    return out;
}

std::string key_of(const Spec& spec, const KeyInputs& inputs) {
    // Every part written with its length: no text a part holds (a committed file's name with a
    // newline in it) can pass for another part.
    std::string text = "cocode environment 2\n";
    auto add = [&](std::string_view kind, std::initializer_list<std::string_view> parts) {
        text += kind;
        for (const auto& part : parts)
            text += " " + std::to_string(part.size()) + ":" + std::string(part);
        text += "\n";
    };
    add("identity", {inputs.identity});
    add("platform", {inputs.platform});
    for (const auto& command : spec.setup) add("setup", {command});
    if (spec.paths) {
        add("paths", {std::to_string(spec.paths->size())});
        for (const auto& path : *spec.paths) add("path", {path});
    }
    for (const auto& [name, value] : spec.env) add("env", {name, value});
    for (const auto& file : inputs.files) add("file", {file.blob, file.path});
    for (const auto& [command, output] : inputs.commands) add("command", {command, output});
    return sha256_hex(text).substr(0, 24);
}

std::string commit_scoped_key(const std::string& key, const std::string& commit) {
    return sha256_hex("cocode environment of one commit\n" + std::to_string(key.size()) + ":" +
                      key + " " + std::to_string(commit.size()) + ":" + commit)
        .substr(0, 24);
}

Result<KeyInputs> key_inputs(const Spec& spec, const fs::path& repo_dir, const std::string& commit,
                             const CommandRunner& runner, const fs::path& cwd) {
    KeyInputs inputs;
    auto files = key_files_at(spec, repo_dir, commit);
    if (!files) return std::move(files).error();
    inputs.files = std::move(*files);
    auto origin = git::run_git(repo_dir, {"config", "--get", "remote.origin.url"});
    if (origin && origin->exit_code == 0 && !first_line(origin->out).empty()) {
        inputs.identity = without_credentials(first_line(origin->out));
    } else {
        auto top =
            git::git_line(repo_dir, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
        if (!top) return std::move(top).error();
        inputs.identity = *top;
    }
    inputs.platform = platform();
    if (spec.key_commands.empty()) return inputs;
    auto scratch = TempFolder::make("cocode-key");
    if (!scratch) return std::move(scratch).error();
    for (const auto& command : spec.key_commands) {
        CommandRequest request;
        request.command = command;
        request.cwd = cwd;
        request.environment = allowlisted_environment(current_environment(), {});
        request.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        request.log = scratch->path() / "err";
        request.out = scratch->path() / "out";
        request.record = scratch->path() / "egress.jsonl";
        request.writes_cwd = false;
        for (const auto& file : {request.log, request.out})
            if (auto ok = write_file_atomic(file, "", 0600, Durability::none); !ok)
                return std::move(ok).error();
        auto ran = runner(request);
        if (!ran)
            return Error{ran.error().code,
                         "environment.key_commands: `" + command + "`: " + ran.error().message};
        const auto said = read_file(request.out, std::size_t{1} << 20);
        const std::string out = said ? *said : std::string();
        if (ran->exit_code != 0 || ran->timed_out) {
            const auto logged = read_file(request.log, 64 << 10);
            const std::string err = logged ? *logged : std::string();
            return Error::usage("environment.key_commands: `" + command + "` " +
                                (ran->timed_out ? std::string("did not end within 30s")
                                                : "exited with " + std::to_string(ran->exit_code)) +
                                (err.empty() ? "" : ": " + first_line(err)));
        }
        inputs.commands.emplace_back(command, out);
    }
    return inputs;
}

Result<std::vector<CommitFile>> key_files_at(const Spec& spec, const fs::path& repo_dir,
                                             const std::string& commit) {
    auto files = files_of(repo_dir, commit);
    if (!files) return std::move(files).error();
    return key_files(*files, spec.key);
}

Result<std::string> key_at(const Spec& spec, const fs::path& repo_dir, const std::string& commit,
                           const CommandRunner& runner, const fs::path& cwd) {
    auto inputs = key_inputs(spec, repo_dir, commit, runner, cwd);
    if (!inputs) return std::move(inputs).error();
    return key_of(spec, *inputs);
}

Result<std::optional<Spec>> spec_at(const config::Config& config, const fs::path& repo_dir,
                                    const std::string& commit) {
    std::optional<std::string> devcontainer;
    if (!config.environment) {
        auto shown =
            git::run_git(repo_dir, {"show", commit + ":" + std::string(kDevcontainerFile)});
        if (!shown) return std::move(shown).error();
        if (shown->exit_code == 0) devcontainer = std::move(shown->out);
    }
    return spec_of(config, devcontainer);
}

std::vector<std::string> changed_key_files(const std::vector<CommitFile>& a,
                                           const std::vector<CommitFile>& b) {
    std::map<std::string, std::string> before, after;
    for (const auto& f : a) before[f.path] = f.blob;
    for (const auto& f : b) after[f.path] = f.blob;
    std::vector<std::string> out;
    for (const auto& [path, blob] : before)
        if (!after.count(path) || after[path] != blob) out.push_back(path);
    for (const auto& [path, blob] : after)
        if (!before.count(path)) out.push_back(path);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace cocode::environment
