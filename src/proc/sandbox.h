// The sandbox everything runs in that runs what an agent wrote — the agent itself, verify,
// setup and key commands, environment builds, the critic, replay — described as data
// (SandboxPlan), then made by cocode's own program, tools/cocode-sandbox, which takes
// bubblewrap's options with bubblewrap's meaning (so the same command line runs under Debian's
// bubblewrap when the configuration says `"sandbox": "bwrap"`). It denies by default: the host's
// files are read-only; the child writes what the plan lists as writable, a HOME of its own and a
// /tmp of its own, and nothing else; what the plan hides (credentials, other CLIs' logins, the
// host's service sockets) is out of its sight. It gets a PID namespace of its own (the host's
// processes are out of sight, and every process it starts is gone when it ends or the
// dispatcher dies: setsid, double forks and `env -i` included), an IPC namespace of its own,
// no capability, and, when asked, a network namespace of its own (agent/egress.h). A plan that
// cannot be made as written is refused, never made weaker (docs/security.md, "The sandbox").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cocode {

// Which program makes the sandbox: cocode's own (tools/cocode-sandbox, beside this program or in
// ../libexec/cocode/), or Debian's bubblewrap given the same command line. `automatic`:
// cocode's, else bubblewrap's where cocode's cannot be made here (a kernel before 5.12).
enum class SandboxMaker { automatic, cocode, bubblewrap };

// How a run records the program that made its sandbox (run-info's `sandbox`), and back.
inline constexpr const char* kCocodeSandbox = "cocode-sandbox";
inline constexpr const char* kBubblewrap = "bwrap";
SandboxMaker maker_named(const std::string& recorded);

struct SandboxProbe {
    bool available = false;
    std::filesystem::path program;  // what makes it, when found: cocode-sandbox or bwrap
    std::string maker;              // kCocodeSandbox or kBubblewrap, when available
    std::string version;            // "cocode-sandbox 0.1.0", "bubblewrap 0.8.0"
    std::string why_not;            // when not available: what failed, and what would fix it
    // Whether it can give a network namespace too (an enclosed network: agent/egress.h), and
    // when not, why.
    bool network = false;
    std::string network_why_not;
};

// Whether the sandbox can be made here by `maker`: its program is found and starts a program
// in one as sandboxed_argv makes it (read-only root, PID and IPC namespaces, no capability);
// then whether a network namespace can be made too. Probed once per process and maker.
const SandboxProbe& probe_sandbox(SandboxMaker maker = SandboxMaker::automatic);

// cocode's own sandbox program (tools/cocode-sandbox): beside this program (the build tree) or
// in ../libexec/cocode/ (installed), else as PATH finds it.
std::filesystem::path sandbox_program();

// What a sandboxed child may write and see. Everything not listed is the host's, read-only.
struct SandboxPlan {
    // Bound read-write where they are. Each must exist when the child starts (else bubblewrap
    // refuses to start it).
    std::vector<std::filesystem::path> writable;
    // Read-only, as the whole host is, and bound back where the child's own /tmp or
    // `hidden_first` would cover them: what it must read (its repository, the environments'
    // store, cocode's own programs), wherever they are (a repository made under /tmp).
    std::vector<std::filesystem::path> visible;
    // Bound read-only again: each must exist when the child starts and lie directly in a
    // writable folder (a mount point cannot be renamed or replaced; a deeper one could be moved
    // with its parent).
    std::vector<std::filesystem::path> read_only;
    // Out of sight: an empty folder over a folder, an empty file over a file; one that does not
    // exist stays so (the root is read-only). Never inside a writable folder.
    std::vector<std::filesystem::path> hidden;
    // Hidden before anything is bound: what the plan binds below them comes back, the rest of
    // them stays out of sight (a replay's main repository around its own).
    std::vector<std::filesystem::path> hidden_first;
    // Hidden after what it must read came back (they lie inside it: other runs' folders in the
    // repository), before what it writes: of each, only what the plan lists inside it — its
    // own folders, writable or visible — comes back. Never inside a writable folder.
    std::vector<std::filesystem::path> apart;
    // What must never be writable, whether or not it exists yet (the environments' store, the
    // seals): none may lie inside a writable folder, where a missing one could be made.
    std::vector<std::filesystem::path> protected_paths;
    // The child's own HOME and /tmp: folders of ours, writable, made beforehand. `home` is
    // bound where it is (HOME names it: sandbox_environment), `tmp` at /tmp.
    std::filesystem::path home;
    std::filesystem::path tmp;
    // A network namespace of its own: its loopback, nothing else (agent/egress.h).
    bool own_network = false;
};

// Whether `path` is `folder` or lies below it (both absolute, or both relative), by their
// names alone: no file system asked, `.`, `..` and doubled slashes taken as they read.
bool path_within(const std::filesystem::path& path, const std::filesystem::path& folder);

// Why `plan` cannot be made as written ("" when it can): a writable path that is not absolute,
// a read-only path not directly inside a writable folder, a hidden or protected path inside a
// writable one.
std::string plan_refused(const SandboxPlan& plan);

// The command line that runs `argv` inside the sandbox `plan` describes (plan_refused says ""
// of it), made by `program` (a probe's: cocode-sandbox or bwrap, which take the same options).
std::vector<std::string> sandboxed_argv(const std::filesystem::path& program,
                                        const SandboxPlan& plan,
                                        const std::vector<std::string>& argv);

// The environment a child gets inside: `environment` with HOME its own, TMPDIR /tmp, and the
// toolchains that find themselves from HOME (pyenv's shims, rustup's proxies) pointed at the
// user's (`user_home`), which stay readable.
std::vector<std::string> sandbox_environment(std::vector<std::string> environment,
                                             const SandboxPlan& plan,
                                             const std::filesystem::path& user_home);

// What of the host no sandboxed child may see (besides what a plan hides for its own reasons):
// the user's credentials (ssh, gpg, git, gh, cloud CLIs, package registries' tokens) under
// `user_home`, and the sockets of the host's services a child could ask to run a command
// outside (the user's systemd and D-Bus, container engines). A socket on a read-only mount can
// still be connected to, so these are hidden, not made read-only.
std::vector<std::filesystem::path> host_secrets(const std::filesystem::path& user_home);

// What of the host's root every sandboxed child sees, read-only, by either maker: the system's
// programs, libraries and settings (/usr with the links into it, /etc but for its secrets,
// /sys; a Nix, Guix or snap store). Its /dev, /proc and /tmp are its own. Everything else at the
// root (/home, /root, /opt, /srv, /mnt, /media, /var, /run, a runner's work folder) is out of
// sight unless a plan brings part of it back (docs/security.md, "The sandbox").
inline constexpr const char* kSystemFolders[] = {"usr",    "bin", "sbin", "lib", "lib32", "lib64",
                                                 "libx32", "etc", "sys",  "nix", "gnu",   "snap"};

// The folders of the host no sandboxed child sees unless its plan brings part back: every folder
// at the root but the system's and the sandbox's own (kSystemFolders, /dev, /proc, /tmp), and
// `user_home` wherever it is. Asked of the root as it is now.
std::vector<std::filesystem::path> host_folders_out_of_sight(
    const std::filesystem::path& user_home);

// Whether `program` (a probe's) can also give a network namespace here (an agent's enclosed
// network, agent/egress.h): "" when it can, else what failed and what would fix it.
std::string network_namespace_refused(const std::filesystem::path& program);

}  // namespace cocode
