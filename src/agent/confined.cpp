#include "agent/confined.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>

#include "agent/egress.h"
#include "core/files.h"
#include "environment/store.h"
#include "environment/view.h"
#include "git/git_files.h"
#include "net/proxy.h"
#include "proc/command.h"
#include "run/run_folder.h"
#include "run/seal.h"

namespace cocode::agent {
namespace fs = std::filesystem;

namespace {

// `path` without `.`, `..` or a trailing slash: one spelling for each folder, which the plan's
// comparisons (`==`, lies_in) take as it is.
fs::path plain(const fs::path& path) {
    std::string text = path.lexically_normal().native();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    return text;
}

}  // namespace

fs::path user_home() {
    const char* home = std::getenv("HOME");
    return home && *home == '/' ? plain(home) : fs::path();
}

std::vector<fs::path> secrets_in_home(const fs::path& home, const config::CliPreset* own) {
    std::vector<fs::path> hidden = host_secrets(home);
    if (home.empty() || home == "/") return hidden;
    // Every other CLI's own configuration and state (its logins among them) is hidden; the
    // agent's own preset's stays, also where another preset shares a folder with it.
    const std::vector<std::string> own_paths = own ? own->config_paths : std::vector<std::string>{};
    for (const auto& cli : config::builtin_presets()) {
        if (cli.get() == own) continue;
        for (const auto& path : cli->config_paths)
            if (std::find(own_paths.begin(), own_paths.end(), path) == own_paths.end())
                hidden.push_back(home / path);
    }
    return hidden;
}

namespace {

// The value of `name` in `environment` ("NAME=value" entries), "" when unset.
std::string value_in(const std::vector<std::string>& environment, const std::string& name) {
    for (auto it = environment.rbegin(); it != environment.rend(); ++it)
        if (it->size() > name.size() && it->compare(0, name.size(), name) == 0 &&
            (*it)[name.size()] == '=')
            return it->substr(name.size() + 1);
    return {};
}

bool lies_in(const fs::path& path, const fs::path& folder) { return path_within(path, folder); }

// Files known by what they are, not by their names: a device and an inode each.
using FileId = std::pair<dev_t, ino_t>;
using FileIds = std::set<FileId>;

// What `path` leads to, where it is (links followed).
std::optional<FileId> id_of(const fs::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileId{st.st_dev, st.st_ino};
}

FileIds ids_of(const std::vector<fs::path>& paths) {
    FileIds ids;
    for (const auto& path : paths)
        if (auto id = id_of(path)) ids.insert(*id);
    return ids;
}

// Whether `real` (a path with no link in it: weakly_canonical's) is one of `ids` or lies in
// one: the same as asking whether it lies within where each of them leads, for a file's
// links and its other names (a hard link, a bind) too, at one stat a folder above it.
bool lies_in_any(const fs::path& real, const FileIds& ids) {
    if (ids.empty()) return false;
    for (fs::path at = real;; at = at.parent_path()) {
        if (auto id = id_of(at); id && ids.count(*id)) return true;
        if (!at.has_relative_path()) return false;  // the root, asked last
    }
}

// What of an installation prefix (/usr/local, ~/.local, a Node.js of nvm's or of a runner's
// tool cache) its programs need: its bin, lib and share folders and their kin, not the prefix
// (a `bin` on PATH in a folder of other things showed all of them: a key beside the clone).
std::vector<fs::path> prefix_folders(const fs::path& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const char* part : {"bin", "sbin", "lib", "lib64", "libexec", "share", "include", "etc"})
        if (fs::is_directory(prefix / part, ec)) out.push_back(prefix / part);
    return out;
}

// What a child runs programs from, as PATH names it, where a folder of its own would hide it
// (HOME, /tmp, the rest of the host): a `bin` folder's prefix's folders (prefix_folders),
// node_modules/.bin's node_modules (its links lead there), pyenv's root for its shims, rustup's
// toolchains where its proxies are, else the folder itself.
std::vector<fs::path> program_folders(const fs::path& home, const std::string& path) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (std::size_t at = 0; at <= path.size();) {
        std::size_t end = path.find(':', at);
        if (end == std::string::npos) end = path.size();
        const fs::path dir = plain(path.substr(at, end - at));
        at = end + 1;
        if (!dir.is_absolute() || dir == home || !fs::is_directory(dir, ec)) continue;
        const bool in_home = lies_in(dir, home);
        if (in_home && *dir.lexically_relative(home).begin() == ".pyenv") {
            out.push_back(home / ".pyenv");
        } else if (dir.filename() == "bin" && dir.parent_path() != home &&
                   dir.parent_path() != "/") {
            for (auto& folder : prefix_folders(dir.parent_path())) out.push_back(folder);
            if (in_home && dir.parent_path() == home / ".cargo" &&
                fs::is_directory(home / ".rustup", ec))
                out.push_back(home / ".rustup");
        } else if (dir.filename() == ".bin" && dir.parent_path().filename() == "node_modules") {
            out.push_back(dir.parent_path());
        } else {
            out.push_back(dir);
        }
    }
    return out;
}

// What a repository borrowing the objects of the one whose git folder is `common_dir` reads of
// it: its object folder, and those it borrows in turn (objects/info/alternates, absolute).
std::vector<fs::path> borrowed_objects(const fs::path& common_dir) {
    std::vector<fs::path> out = {common_dir / "objects"};
    auto read = read_file(common_dir / "objects/info/alternates", 64 << 10);
    const std::string alternates = read ? *read : std::string();
    for (std::size_t at = 0; at < alternates.size();) {
        std::size_t end = alternates.find('\n', at);
        if (end == std::string::npos) end = alternates.size();
        const fs::path line = alternates.substr(at, end - at);
        at = end + 1;
        if (line.is_absolute()) out.push_back(line.lexically_normal());
    }
    return out;
}

}  // namespace

SandboxPlan repository_sandbox(const fs::path& repo_root,
                               const std::vector<std::string>& environment,
                               const std::vector<fs::path>& hidden_first,
                               const fs::path& worktree_root,
                               const std::vector<fs::path>& readable) {
    SandboxPlan plan;
    plan.hidden_first = hidden_first;
    std::error_code ec;
    // Deny by default, for reading too: of the host's root only the system's programs,
    // libraries and settings show (host_folders_out_of_sight: the rest of /, the user's HOME,
    // /run with its sockets); what a child needs of the rest comes back below, read-only.
    const fs::path home = user_home();
    for (auto& folder : host_folders_out_of_sight(home)) plan.hidden_first.push_back(folder);
    // The main repository too: its worktree's files (an ignored .env), its git folder's
    // settings (the token actions/checkout leaves in .git/config, a remote's URL with one),
    // hooks, logs and index. Of it only what borrowing and reading through its git folder needs
    // comes back (below), and what each caller lists for its child (its own worktree, run
    // folder, clean tree).
    plan.hidden_first.push_back(repo_root);
    // What comes back by the way (the toolchains, cocode's programs, what the configuration
    // names), judged below by where it leads.
    std::vector<fs::path> incidental = program_folders(home, value_in(environment, "PATH"));
    // The resolver's file, where the host keeps it under /run (systemd-resolved's stub).
    if (const fs::path resolv = fs::canonical("/etc/resolv.conf", ec);
        !ec && lies_in(resolv, "/run"))
        plan.visible.push_back(resolv.parent_path());
    fs::path own_git;  // cocode's folder in the git folder: its clean trees, views and locks
    std::vector<fs::path> main_settings;  // hidden again below, with the secrets
    if (auto dirs = git::locate_git_dirs(repo_root, nullptr)) {
        // Of its git folder, what borrows from it and reads through it needs (an agent's
        // repository and a clean tree its objects, a linked worktree its refs, HEAD and its own
        // folder there); never `config` (the token, a remote's URL), submodules' folders,
        // hooks, logs or the index.
        if (!lies_in(dirs->common_dir, repo_root)) plan.hidden_first.push_back(dirs->common_dir);
        for (auto& objects : borrowed_objects(dirs->common_dir))
            plan.visible.push_back(std::move(objects));
        for (const char* part : {"HEAD", "refs", "packed-refs", "shallow", "worktrees"})
            plan.visible.push_back(dirs->common_dir / part);
        // A linked worktree's own settings (worktreeConfig) are settings too.
        for (const auto& entry : list_folder(dirs->common_dir / "worktrees", ec))
            main_settings.push_back(entry.path / "config.worktree");
        own_git = dirs->common_dir / "cocode";
    }
    // What the configuration names for its children to read (a toolchain in /opt, a cache):
    // shown, judged as the rest below, the secrets in it hidden again.
    incidental.insert(incidental.end(), readable.begin(), readable.end());
    const fs::path store = environment::default_store();
    plan.visible.push_back(store);
    // cocode's own programs (the egress bridge, the hook its commits run): bin/ and libexec/,
    // or, installed in a folder of other things (~/bin), that folder and libexec/cocode.
    const fs::path programs = plain(dispatch_program().parent_path());
    incidental.push_back(programs.parent_path());
    // Nothing that comes back by the way brings back what is out of sight around it whole —
    // the main repository, HOME — by its own name or another (a link on PATH to the
    // repository, a `bin` folder in it, cocode installed in HOME): each is judged where it
    // leads, and one that is, or holds, one of those is not shown (cocode's own programs
    // then by their folders alone).
    std::vector<fs::path> wholes = {plain(fs::weakly_canonical(repo_root, ec))};
    if (!home.empty()) wholes.push_back(plain(fs::weakly_canonical(home, ec)));
    const auto holds_a_whole = [&](const fs::path& path) {
        return std::any_of(wholes.begin(), wholes.end(),
                           [&](const fs::path& whole) { return lies_in(whole, path); });
    };
    for (const auto& path : incidental) {
        const fs::path real = plain(fs::weakly_canonical(path, ec));
        if (ec || holds_a_whole(real)) continue;
        plan.visible.push_back(real);
    }
    if (holds_a_whole(plain(fs::weakly_canonical(programs.parent_path(), ec)))) {
        plan.visible.push_back(programs);
        plan.visible.push_back(programs.parent_path() / "libexec/cocode");
    }
    // What still shows of HOME (a toolchain's prefix, a repository there) hides its secrets.
    plan.hidden = secrets_in_home(home, nullptr);
    plan.hidden.insert(plan.hidden.end(), main_settings.begin(), main_settings.end());
    // A file an entry names (a CA bundle, a credentials file the configuration passes on) is
    // there to be read; not the folders a variable of the user's session names. Never cocode's
    // own variables: their paths are the plan's to list, and one is the title, which
    // its author writes (a title naming ~/.ssh/id_rsa or another run's folder showed it).
    // Nor anything among the secrets, whoever names it.
    std::vector<fs::path> named_by_variables;
    std::optional<FileIds> secrets;  // asked where they lead only once a variable names a path
    for (const auto& entry : environment) {
        const std::size_t eq = entry.find('=');
        if (eq == std::string::npos || eq + 1 >= entry.size() || entry[eq + 1] != '/') continue;
        const std::string name = entry.substr(0, eq);
        if (name == "HOME" || name == "PWD" || name == "OLDPWD" || name == "TMPDIR" ||
            name.rfind("XDG_", 0) == 0 || name == "SSH_AUTH_SOCK" || name == "PATH" ||
            name.rfind("COCODE_", 0) == 0 || name.rfind("JRUN_", 0) == 0)
            continue;
        // Judged by where it leads (a link to ~/.ssh is ~/.ssh), and bound there: the bind
        // then follows no link.
        const fs::path named = fs::weakly_canonical(entry.substr(eq + 1), ec);
        if (ec || !fs::exists(named, ec)) continue;
        // A secret that is not there holds nothing a path that is there could lie in.
        if (!secrets) secrets = ids_of(plan.hidden);
        if (!lies_in_any(named, *secrets)) named_by_variables.push_back(named);
    }
    plan.protected_paths = {store, repo_root / run::kSealsDir};
    // Other runs' folders, their agents' HOMEs (a CLI's login), their egress sockets, and the
    // seals and their locks: out of sight. A child's own folders there come back (its plan's).
    // The folders of cocode's locks too (the store's builds', git's exclude file's, the clean
    // trees'): a lock the agent can open, it can hold, and the build or run that waits on it
    // waits for ever. Made now: one made later would show through the read-only view.
    plan.apart = {repo_root / run::kRunsDir, repo_root / ".cocode/sandboxes",
                  repo_root / run::kSealsDir};
    // The pairs' worktrees too (their uncommitted work), where a caller names them: its own
    // comes back with what it writes.
    for (const fs::path& own : {own_git, environment::Store::locks_in(store), worktree_root})
        if (!own.empty()) plan.apart.push_back(own);
    // Each made now, whether or not anything is in it yet: a folder the command line finds
    // missing is not covered, and a run that starts beside this one (the first batch of a
    // repository) makes it meanwhile, in sight.
    for (const fs::path& folder : plan.apart) fs::create_directories(folder, ec);
    // Of what lies apart (other runs' folders, the seals, cocode's locks, the other pairs'
    // worktrees), only what a caller lists for its child comes back (its own run's folders),
    // never what a variable happened to name.
    if (!named_by_variables.empty()) {
        const FileIds apart = ids_of(plan.apart);
        for (const auto& named : named_by_variables)
            if (!lies_in_any(named, apart)) plan.visible.push_back(named);
    }
    return plan;
}

namespace {

// What a CLI keeps of its sessions and history, not its settings: left behind.
bool cli_state(const std::string& name) {
    static const std::vector<std::string> kState = {
        "projects",        "sessions", "session-state", "tmp",          "history",
        "history.jsonl",   "logs",     "log",           "cache",        "todos",
        "shell-snapshots", "statsig",  "ide",           "file-history", "chats"};
    return std::find(kState.begin(), kState.end(), name) != kState.end();
}

}  // namespace

Result<void> copy_cli_settings(const config::CliPreset& cli, const fs::path& from_home,
                               const fs::path& home) {
    std::error_code ec;
    for (const auto& path : cli.config_paths) {
        const fs::path from = from_home / path;
        if (!fs::exists(fs::symlink_status(from, ec))) continue;
        if (!fs::is_directory(fs::symlink_status(from, ec))) {
            if (auto ok = environment::copy_beneath(from, home, path, true); !ok)
                return std::move(ok).error();
            continue;
        }
        for (const auto& entry : list_folder(from, ec)) {
            if (cli_state(entry.path.filename().string())) continue;
            if (auto ok = environment::copy_beneath(entry.path, home,
                                                    fs::path(path) / entry.path.filename(), true);
                !ok)
                return std::move(ok).error();
        }
    }
    return {};
}

std::optional<SandboxMaker> sandbox_maker(const config::Config& config) {
    switch (config.sandbox) {
        case config::SandboxMode::none:
            return std::nullopt;
        case config::SandboxMode::bwrap:
            return SandboxMaker::bubblewrap;
        case config::SandboxMode::automatic:
            break;
    }
    return SandboxMaker::automatic;
}

Result<std::optional<std::string>> take_back(std::optional<SandboxMaker> maker,
                                             const fs::path& repo_root,
                                             const git::AgentRepo& agent_repo) {
    if (!maker)
        return git::take_agent_branch(repo_root, agent_repo.git_dir, agent_repo.branch,
                                      "git-upload-pack");
    const SandboxProbe& probe = probe_sandbox(*maker);
    if (!probe.available)
        return Error::missing(no_sandbox_refusal("reading an agent's repository", probe));
    auto scratch = TempFolder::make("cocode-take");
    if (!scratch) return std::move(scratch).error();
    std::error_code ec;
    for (const char* part : {"home", "tmp"}) fs::create_directory(scratch->path() / part, ec);
    // It reads the agent's repository (its settings, its objects, the main ones it borrows)
    // and writes nothing; no network at all.
    SandboxPlan plan = repository_sandbox(repo_root, {}, {});
    plan.visible.push_back(agent_repo.git_dir);
    plan.home = scratch->path() / "home";
    plan.tmp = scratch->path() / "tmp";
    plan.own_network = true;
    if (const std::string refused = plan_refused(plan); !refused.empty())
        return Error::general("the sandbox for git-upload-pack cannot be made: " + refused);
    return git::take_agent_branch(
        repo_root, agent_repo.git_dir, agent_repo.branch,
        shell_command(sandboxed_argv(probe.program, plan, {"git-upload-pack"})));
}

std::string no_sandbox_refusal(const std::string& what, const SandboxProbe& probe) {
    return what + " runs only in the sandbox, and there is none here (" + probe.why_not +
           "); `\"sandbox\": \"none\"` in " + config::kConfigFile +
           " runs it with no protection at all";
}

namespace {

// The hosts a record's refused connections went to, from byte `offset` on.
std::vector<std::string> blocked_since(const fs::path& record, std::uint64_t offset) {
    std::vector<std::string> out;
    for (const auto& e : net::parse_egress(read_file_from(record, offset, std::size_t{4} << 20))) {
        const std::string host = e.host + ":" + std::to_string(e.port);
        if (!e.allowed && std::find(out.begin(), out.end(), host) == out.end()) out.push_back(host);
    }
    return out;
}

}  // namespace

CommandRunner confined_runner(const config::Config& config, const fs::path& repo_root,
                              std::optional<net::Allowlist> allow, Surroundings around) {
    return [config, repo_root, allow, around](const CommandRequest& c) -> Result<CommandOutcome> {
        if (config.sandbox == config::SandboxMode::none)
            return run_to_log(c, shell_argv(c.command), c.environment);
        const SandboxProbe& probe = probe_sandbox(*sandbox_maker(config));
        if (!probe.available)
            return Error::missing(no_sandbox_refusal("`" + c.command + "`", probe));
        const NetworkDecision network =
            decide_network(config.network.mode, true, probe.network, probe.network_why_not);
        if (!network.refused.empty()) return Error::missing(network.refused);

        // Its own HOME and /tmp, made for it and thrown away after it.
        auto scratch = TempFolder::make("cocode-sandbox");
        if (!scratch) return std::move(scratch).error();
        std::error_code ec;
        for (const char* part : {"home", "tmp"}) {
            fs::create_directory(scratch->path() / part, ec);
            if (ec)
                return Error::general("cannot make " + (scratch->path() / part).string() + ": " +
                                      ec.message());
        }
        SandboxPlan plan = repository_sandbox(repo_root, c.environment, around.hidden_first,
                                              config::worktree_root_of(config, repo_root),
                                              config::readable_paths(config, user_home()));
        plan.visible.insert(plan.visible.end(), around.visible.begin(), around.visible.end());
        (c.writes_cwd ? plan.writable : plan.visible).push_back(c.cwd);
        plan.writable.insert(plan.writable.end(), c.writable.begin(), c.writable.end());
        plan.visible.insert(plan.visible.end(), c.readable.begin(), c.readable.end());
        plan.home = scratch->path() / "home";
        plan.tmp = scratch->path() / "tmp";
        std::vector<std::string> argv = shell_argv(c.command);
        std::vector<std::string> environment =
            sandbox_environment(c.environment, plan, user_home());
        std::unique_ptr<net::EgressProxy> proxy;
        std::uint64_t record_offset = 0;
        if (network.mode != config::NetworkMode::open) {
            net::Allowlist allowed;
            if (allow) {
                allowed = *allow;
            } else {
                for (const auto& [ecosystem, shown_by] : net::ecosystems_used(c.cwd))
                    if (auto entries = net::parse_allow_entry(ecosystem, shown_by))
                        allowed.add(*entries);
                for (const auto& text : config.network.allow)
                    if (auto entries = net::parse_allow_entry(text, "network.allow"))
                        allowed.add(*entries);
            }
            // The proxy's socket beside the scratch folders: where the bridge inside reaches it.
            const fs::path socket = plan.tmp.parent_path() / "egress.sock";
            EgressPlan egress = enclosed_plan(allowed, network.mode, socket, c.record);
            auto started = start_egress_proxy(
                egress, "network.allow in " + std::string(config::kConfigFile), "setup");
            if (!started) return std::move(started).error();
            proxy = std::move(*started);
            record_offset = fs::file_size(c.record, ec);
            if (ec) record_offset = 0;
            for (const auto& variable : proxy_variables(egress)) {
                const std::string prefix = variable.first + "=";
                std::erase_if(environment, [&](const std::string& entry) {
                    return entry.rfind(prefix, 0) == 0;
                });
                if (!variable.second.empty()) environment.push_back(prefix + variable.second);
            }
            plan.own_network = true;
            plan.visible.push_back(socket);
            argv = bridged_argv(egress, argv);
        }
        if (const std::string refused = plan_refused(plan); !refused.empty())
            return Error::general("the sandbox for `" + c.command + "` cannot be made: " + refused);
        argv = sandboxed_argv(probe.program, plan, argv);
        auto outcome = run_to_log(c, argv, environment);
        if (!outcome) return outcome;
        proxy.reset();  // every process of it is gone: nothing is left to go out
        if (network.mode != config::NetworkMode::open)
            outcome->blocked = blocked_since(c.record, record_offset);
        return outcome;
    };
}

}  // namespace cocode::agent
