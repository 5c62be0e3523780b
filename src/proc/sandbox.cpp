#include "proc/sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/files.h"
#include "proc/command.h"
#include "proc/spawn.h"

namespace cocode {
namespace fs = std::filesystem;

namespace {

std::string first_line_of(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
}

// Why a user namespace may be refused, and what lifts it.
std::string userns_advice() {
    auto restricted = read_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 16);
    if (restricted && restricted->rfind("1", 0) == 0)
        return "; AppArmor restricts unprivileged user namespaces here (Ubuntu 24.04): "
               "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` lifts it";
    auto clone = read_file("/proc/sys/kernel/unprivileged_userns_clone", 16);
    if (clone && clone->rfind("0", 0) == 0)
        return "; unprivileged user namespaces are off: "
               "`sudo sysctl -w kernel.unprivileged_userns_clone=1` turns them on";
    return "";
}

// `path` as a string without `.`, `..`, doubled or trailing slashes: as it is when it has none
// (the common case, asked thousands of times a plan), else lexically_normal's.
std::string normal_text(const fs::path& path) {
    const std::string& text = path.native();
    bool plain = !text.empty();
    // Each part between slashes: none empty (but a leading one), `.` or `..`.
    for (std::size_t at = 0; plain && at < text.size();) {
        std::size_t end = text.find('/', at);
        if (end == std::string::npos) end = text.size();
        const std::size_t length = end - at;
        if ((length == 0 && at != 0) || (length == 1 && text[at] == '.') ||
            (length == 2 && text[at] == '.' && text[at + 1] == '.'))
            plain = false;
        at = end + 1;
        if (end + 1 == text.size() && end != 0) plain = false;  // a trailing slash
    }
    if (plain) return text;
    std::string normal = path.lexically_normal().native();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    return normal;
}

bool within(const fs::path& path, const fs::path& folder) { return path_within(path, folder); }

bool within_any(const fs::path& path, const std::vector<fs::path>& folders) {
    return std::any_of(folders.begin(), folders.end(),
                       [&](const fs::path& folder) { return within(path, folder); });
}

// The folders the child writes: the plan's, its HOME and its /tmp (where the host has it).
std::vector<fs::path> writable_folders(const SandboxPlan& plan) {
    std::vector<fs::path> out = plan.writable;
    if (!plan.home.empty()) out.push_back(plan.home);
    if (!plan.tmp.empty()) out.push_back(plan.tmp);
    return out;
}

const fs::path kTmp = "/tmp";

// The fixed part of every sandbox: the host read-only, devices and processes of its own.
std::vector<std::string> base_argv(const fs::path& program, bool own_network) {
    std::vector<std::string> out = {program.string(),
                                    "--die-with-parent",
                                    "--unshare-pid",
                                    "--unshare-ipc",
                                    "--cap-drop",
                                    "ALL",
                                    "--ro-bind",
                                    "/",
                                    "/",
                                    "--dev",
                                    "/dev",
                                    "--proc",
                                    "/proc"};
    if (own_network) out.push_back("--unshare-net");
    return out;
}

}  // namespace

bool path_within(const fs::path& path, const fs::path& folder) {
    const std::string p = normal_text(path), f = normal_text(folder);
    if (p.empty() || f.empty() || (p.front() == '/') != (f.front() == '/')) return false;
    if (f == "/") return true;
    return p.size() >= f.size() && p.compare(0, f.size(), f) == 0 &&
           (p.size() == f.size() || p[f.size()] == '/');
}

SandboxMaker maker_named(const std::string& recorded) {
    return recorded == kBubblewrap ? SandboxMaker::bubblewrap : SandboxMaker::cocode;
}

fs::path sandbox_program() { return program_beside_us(kCocodeSandbox); }

namespace {

// Whether `program` makes the sandbox here, tried for real.
SandboxProbe probe_with(const fs::path& program, const std::string& maker) {
    SandboxProbe probe;
    probe.program = program;
    if (auto version = run_command({program.string(), "--version"});
        version && version->exit_code == 0)
        probe.version = first_line_of(version->out);
    // What it starts inside is the program itself (`--version`): a program surely there,
    // whatever PATH holds.
    std::vector<std::string> argv = base_argv(program, false);
    argv.insert(argv.end(), {"--", program.string(), "--version"});
    auto tried = run_command(argv);
    if (!tried) {
        probe.why_not = tried.error().message;
        return probe;
    }
    if (tried->exit_code != 0) {
        probe.why_not = maker + " cannot make a sandbox here (" + first_line_of(tried->err) + ")" +
                        userns_advice();
        return probe;
    }
    probe.available = true;
    probe.maker = maker;
    probe.network_why_not = network_namespace_refused(program);
    probe.network = probe.network_why_not.empty();
    return probe;
}

SandboxProbe probe_cocode() {
    const fs::path program = sandbox_program();
    if (program.empty()) {
        SandboxProbe probe;
        probe.why_not = std::string(kCocodeSandbox) +
                        " is not installed beside cocode-dispatch (libexec/cocode/)";
        return probe;
    }
    return probe_with(program, kCocodeSandbox);
}

SandboxProbe probe_bubblewrap() {
    auto bwrap = find_in_path("bwrap");
    if (!bwrap) {
        SandboxProbe probe;
        probe.why_not =
            "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt install bubblewrap)";
        return probe;
    }
    return probe_with(*bwrap, kBubblewrap);
}

}  // namespace

const SandboxProbe& probe_sandbox(SandboxMaker maker) {
    if (maker == SandboxMaker::bubblewrap) {
        static const SandboxProbe bubblewrap = probe_bubblewrap();
        return bubblewrap;
    }
    static const SandboxProbe cocode = probe_cocode();
    if (maker == SandboxMaker::cocode) return cocode;
    // cocode's own, else bubblewrap's where cocode's cannot be made (an older kernel); where
    // neither can, why cocode's cannot (bubblewrap's reason is the same or it is missing).
    // Bubblewrap is tried only then: each of its trials is a sandbox started.
    static const SandboxProbe automatic = [] {
        if (cocode.available || !probe_sandbox(SandboxMaker::bubblewrap).available) return cocode;
        return probe_sandbox(SandboxMaker::bubblewrap);
    }();
    return automatic;
}

std::string network_namespace_refused(const fs::path& program) {
    std::vector<std::string> argv = base_argv(program, true);
    argv.insert(argv.end(), {"--", program.string(), "--version"});
    auto tried = run_command(argv);
    if (!tried) return tried.error().message;
    if (tried->exit_code != 0)
        return "the sandbox cannot have a network namespace here (" + first_line_of(tried->err) +
               ")" + userns_advice();
    return "";
}

std::string plan_refused(const SandboxPlan& plan) {
    // A writable path missing when the child starts (a worktree is made after its command
    // line) is refused then, by bubblewrap's --bind: it is never left out.
    for (const auto& path : writable_folders(plan))
        if (!path.is_absolute()) return "a writable path is not absolute: " + path.string();
    const std::vector<fs::path> writable = writable_folders(plan);
    for (const auto& path : plan.read_only) {
        const bool direct = std::any_of(writable.begin(), writable.end(), [&](const fs::path& w) {
            return path.lexically_normal().parent_path() == w.lexically_normal();
        });
        if (!direct)
            return "a read-only path is not directly inside a writable folder: " + path.string();
    }
    for (const auto& path : plan.hidden)
        if (within_any(path, writable))
            return "a hidden path lies inside a writable folder: " + path.string();
    for (const auto& path : plan.apart)
        if (within_any(path, writable))
            return "a hidden path lies inside a writable folder: " + path.string();
    for (const auto& path : plan.protected_paths)
        if (within_any(path, writable))
            return "a protected path lies inside a writable folder: " + path.string();
    return "";
}

std::vector<std::string> sandboxed_argv(const fs::path& program, const SandboxPlan& plan,
                                        const std::vector<std::string>& argv) {
    std::vector<std::string> out = base_argv(program, plan.own_network);
    // cocode-sandbox makes the kernel's parts of /proc read-only itself; bubblewrap only where
    // it finds them writable by a capability, which /proc/sys is not (its settings are written
    // by user id: root's, with no capability, still writes them).
    if (program.filename() == kBubblewrap)
        for (const char* part : {"/proc/sys", "/proc/sysrq-trigger"})
            out.insert(out.end(), {"--ro-bind-try", part, part});
    std::error_code ec;
    // Folders of the host replaced by folders of its own: its /dev (base_argv) first, so that
    // a repository on the host's /dev/shm comes back too.
    std::vector<fs::path> covered = {"/dev"};
    if (!plan.tmp.empty()) {
        out.insert(out.end(), {"--bind", plan.tmp.string(), kTmp.string()});
        covered.push_back(kTmp);
    }
    // Then the folders hidden first, over its own /tmp too where they lie there (a repository
    // made under /tmp): each an empty folder, made read-only once what comes back inside is
    // bound (below), as the host's folder it covers was: a write there would only seem to land.
    std::vector<fs::path> read_only_covers;
    // A folder before what lies in it (sorted by name), each once: one covered after a folder
    // inside it would leave that one's cover out of sight, and no longer a mount of its own.
    std::vector<fs::path> first_hidden;
    for (const auto& path : plan.hidden_first) first_hidden.emplace_back(normal_text(path));
    std::sort(first_hidden.begin(), first_hidden.end());
    first_hidden.erase(std::unique(first_hidden.begin(), first_hidden.end()), first_hidden.end());
    for (const auto& path : first_hidden)
        if (fs::is_directory(path, ec)) {
            out.insert(out.end(), {"--tmpfs", path.string()});
            covered.push_back(path);
            read_only_covers.push_back(path);
        }
    // What it must read comes back, then what it writes: the writable folders may lie inside.
    // One bind each: none inside another that comes back, or inside a writable folder.
    std::vector<fs::path> back;
    // A device is the sandbox's own (its /dev has null, tty and the rest): one bound back from
    // the host would come read-only, and opening /dev/null to write would fail.
    for (const auto& path : plan.visible) {
        if (!within_any(path, covered) || within_any(path, plan.writable)) continue;
        const fs::file_status there = fs::status(path, ec);  // one stat for the three questions
        if (fs::exists(there) && !fs::is_character_file(there) && !fs::is_block_file(there))
            back.emplace_back(normal_text(path));  // no trailing slash: one spelling each
    }
    std::sort(back.begin(), back.end());
    // What is hidden first stays hidden inside whatever comes back around it (cocode's programs
    // in a build tree that also holds a replay's main repository, both under /tmp): hidden again
    // just after it, and of it only what the plan reads comes back. Sorted, a folder comes
    // before what lies in it, so each path is judged by the deepest of what was done above it.
    std::vector<std::pair<fs::path, bool>> done;  // a folder bound back (true) or hidden again
    const auto shown_already = [&](const fs::path& path) {
        const std::pair<fs::path, bool>* deepest = nullptr;
        for (const auto& step : done)
            if (within(path, step.first) &&
                (!deepest || step.first.native().size() > deepest->first.native().size()))
                deepest = &step;
        return deepest && deepest->second;
    };
    for (const auto& path : back) {
        if (shown_already(path)) continue;
        out.insert(out.end(), {"--ro-bind", path.string(), path.string()});
        done.emplace_back(path, true);
        for (const auto& first : plan.hidden_first)
            if (within(first, path) && fs::path(normal_text(first)) != path &&
                fs::is_directory(first, ec)) {
                out.insert(out.end(), {"--tmpfs", first.string()});
                done.emplace_back(first.lexically_normal(), false);
                read_only_covers.emplace_back(normal_text(first));
            }
    }
    // Out of sight again inside what came back, but for what the plan reads there; what it
    // writes there comes back below.
    std::vector<fs::path> apart;
    for (const auto& path : plan.apart) {
        if (!fs::is_directory(path, ec)) continue;
        out.insert(out.end(), {"--tmpfs", path.string()});
        apart.push_back(path);
        // Bound if it is there when the child starts: one made after its command line (a plan
        // round's own worktree) comes back too.
        for (const auto& read : plan.visible)
            if (within(read, path) && read.lexically_normal() != path.lexically_normal() &&
                !within_any(read, plan.writable))
                out.insert(out.end(), {"--ro-bind-try", read.string(), read.string()});
    }
    for (const auto& path : plan.writable)
        out.insert(out.end(), {"--bind", path.string(), path.string()});
    if (!plan.home.empty())
        out.insert(out.end(), {"--bind", plan.home.string(), plan.home.string()});
    for (const auto& path : plan.read_only)
        out.insert(out.end(), {"--ro-bind", path.string(), path.string()});
    // The folders of its own made there, the empty folder over the others is read-only: the
    // host's is, and a write there would only seem to land.
    for (const auto& path : apart) out.insert(out.end(), {"--remount-ro", path.string()});
    std::vector<fs::path> seen = plan.visible;
    seen.insert(seen.end(), plan.writable.begin(), plan.writable.end());
    for (const auto& path : plan.hidden) {
        // A folder of its own covers the host's files already, unless one came back.
        if (within_any(path, covered) && !within_any(path, seen)) continue;
        if (fs::is_directory(path, ec))
            out.insert(out.end(), {"--tmpfs", path.string()});
        else if (fs::exists(path, ec))
            out.insert(out.end(), {"--ro-bind", "/dev/null", path.string()});
    }
    // The covers last: what is hidden inside one needed its mount point made there.
    // Each once, and not one a writable folder was bound over or around since (its path is no
    // longer its cover's, and the folder is the child's to write).
    std::sort(read_only_covers.begin(), read_only_covers.end());
    read_only_covers.erase(std::unique(read_only_covers.begin(), read_only_covers.end()),
                           read_only_covers.end());
    const std::vector<fs::path> written = writable_folders(plan);
    for (const auto& path : read_only_covers)
        if (!std::any_of(written.begin(), written.end(),
                         [&](const fs::path& w) { return within(path, w); }))
            out.insert(out.end(), {"--remount-ro", path.string()});
    out.push_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

std::vector<std::string> sandbox_environment(std::vector<std::string> environment,
                                             const SandboxPlan& plan, const fs::path& user_home) {
    auto value_of = [&](const std::string& name) -> std::optional<std::string> {
        for (auto it = environment.rbegin(); it != environment.rend(); ++it)
            if (it->size() > name.size() && it->compare(0, name.size(), name) == 0 &&
                (*it)[name.size()] == '=')
                return it->substr(name.size() + 1);
        return std::nullopt;
    };
    auto set = [&](const std::string& name, const std::string& value) {
        const std::string prefix = name + "=";
        std::erase_if(environment, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
        environment.push_back(prefix + value);
    };
    std::error_code ec;
    // Toolchains that find their versions from HOME, found from PATH (where the user runs them
    // from) and kept where they are: pyenv's shims, rustup's proxies.
    const std::string path = value_of("PATH").value_or("");
    for (std::size_t at = 0; at <= path.size();) {
        std::size_t end = path.find(':', at);
        if (end == std::string::npos) end = path.size();
        const fs::path dir = path.substr(at, end - at);
        at = end + 1;
        if (dir.filename() == "shims" && dir.parent_path().filename() == ".pyenv" &&
            !value_of("PYENV_ROOT"))
            set("PYENV_ROOT", dir.parent_path().string());
        if (dir.filename() == "bin" && dir.parent_path().filename() == ".cargo" &&
            !value_of("RUSTUP_HOME") &&
            fs::is_directory(dir.parent_path().parent_path() / ".rustup", ec))
            set("RUSTUP_HOME", (dir.parent_path().parent_path() / ".rustup").string());
    }
    if (!user_home.empty() && !value_of("PYENV_ROOT") && fs::is_directory(user_home / ".pyenv", ec))
        set("PYENV_ROOT", (user_home / ".pyenv").string());
    if (!plan.home.empty()) set("HOME", plan.home.string());
    if (!plan.tmp.empty()) set("TMPDIR", kTmp.string());
    return environment;
}

std::vector<fs::path> host_folders_out_of_sight(const fs::path& user_home) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/", ec)) {
        const std::string name = entry.path().filename().string();
        if (name == "dev" || name == "proc" || name == "tmp" ||
            std::find(std::begin(kSystemFolders), std::end(kSystemFolders), name) !=
                std::end(kSystemFolders))
            continue;
        // A link at the root leads where it leads: into the system's folders, or into one out
        // of sight here. A file there (a swap file) is hidden with the secrets (host_secrets).
        std::error_code status_ec;
        if (entry.symlink_status(status_ec).type() == fs::file_type::directory)
            out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    if (!user_home.empty() && user_home != "/" &&
        std::none_of(out.begin(), out.end(),
                     [&](const fs::path& folder) { return within(user_home, folder); }))
        out.push_back(user_home);
    return out;
}

std::vector<fs::path> host_secrets(const fs::path& user_home) {
    std::vector<fs::path> out;
    std::error_code ec;
    // The files at the root beside the system's folders (a swap file, a container's marks, a
    // socket: a service's door).
    for (const auto& entry : fs::directory_iterator("/", ec)) {
        std::error_code status_ec;
        const fs::file_type type = entry.symlink_status(status_ec).type();
        if (!status_ec && type != fs::file_type::directory && type != fs::file_type::symlink)
            out.push_back(entry.path());
    }
    // A child run as root (its user namespace maps root to root) reads what only root may: of
    // /etc, whatever is not for everyone to read is hidden (shadow passwords, sudo's rules, the
    // host's SSH keys, TLS private keys, apt's credentials). Run as another user, the child
    // cannot read them anyway, and no mount is spent on them.
    if (::geteuid() == 0) {
        static const std::vector<fs::path> root_only = [] {
            std::vector<fs::path> found;
            std::error_code walk_ec;
            for (auto it = fs::recursive_directory_iterator(
                     "/etc", fs::directory_options::skip_permission_denied, walk_ec);
                 !walk_ec && it != fs::recursive_directory_iterator(); it.increment(walk_ec)) {
                std::error_code entry_ec;
                const fs::file_status status = it->symlink_status(entry_ec);
                if (entry_ec || status.type() == fs::file_type::symlink) continue;
                if ((status.permissions() & fs::perms::others_read) == fs::perms::none) {
                    found.push_back(it->path());
                    if (status.type() == fs::file_type::directory) it.disable_recursion_pending();
                }
            }
            return found;
        }();
        out.insert(out.end(), root_only.begin(), root_only.end());
    }
    if (!user_home.empty() && user_home != "/")
        for (const char* secret :
             {".ssh", ".gnupg", ".git-credentials", ".config/git/credentials", ".config/gh",
              ".config/hub", ".netrc", ".aws", ".azure", ".config/gcloud", ".docker", ".kube",
              ".npmrc", ".yarnrc.yml", ".pypirc", ".config/pip", ".cargo/credentials",
              ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
              ".gradle/gradle.properties", ".composer/auth.json", ".config/composer/auth.json",
              ".terraform.d/credentials.tfrc.json", ".password-store", ".local/share/keyrings",
              ".vault-token", ".pgpass", ".my.cnf", ".s3cfg", ".boto",
              ".config/containers/auth.json", ".config/rclone", ".cargo/config.toml",
              ".cargo/config", ".local/share/jupyter/runtime",
              // What was typed at a prompt (a token pasted, a password).
              ".bash_history", ".zsh_history", ".python_history", ".node_repl_history",
              ".psql_history", ".mysql_history", ".local/share/fish/fish_history", ".lesshst",
              ".sqlite_history"})
            out.push_back(user_home / secret);
    // A GitHub App's private key, wherever the dispatcher was told it is (a relative path is
    // the dispatcher's folder's: beside a clone, which is out of sight anyway).
    if (const char* key = std::getenv("COCODE_GITHUB_APP_PRIVATE_KEY_PATH"); key && *key) {
        std::error_code absolute_ec;
        const fs::path named = fs::absolute(key, absolute_ec);
        if (!absolute_ec) out.push_back(named.lexically_normal());
        // And where it leads: a link's target is the key.
        if (const fs::path real = fs::canonical(key, absolute_ec); !absolute_ec)
            out.push_back(real);
    }
    // The host's services a child could ask to run something outside: the user's systemd and
    // D-Bus (systemd-run --user), the system bus, container engines.
    for (const char* socket : {"/run/user", "/run/dbus", "/run/docker.sock", "/run/docker",
                               "/run/containerd", "/run/podman", "/run/snapd.socket"})
        out.emplace_back(socket);
    if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime == '/')
        out.emplace_back(runtime);
    return out;
}

}  // namespace cocode
