#include "proc/sandbox.h"

#include "core/files.h"
#include "proc/command.h"

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

}  // namespace

SandboxProbe probe_sandbox() {
    SandboxProbe probe;
    auto bwrap = find_in_path("bwrap");
    if (!bwrap) {
        probe.why_not =
            "bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt install bubblewrap)";
        return probe;
    }
    probe.bwrap = *bwrap;
    if (auto version = run_command({bwrap->string(), "--version"});
        version && version->exit_code == 0)
        probe.version = first_line_of(version->out);
    auto tried = run_command({bwrap->string(), "--die-with-parent", "--unshare-pid", "--ro-bind",
                              "/", "/", "--proc", "/proc", "true"});
    if (!tried) {
        probe.why_not = tried.error().message;
        return probe;
    }
    if (tried->exit_code != 0) {
        probe.why_not = "bwrap cannot make a PID namespace here (" + first_line_of(tried->err) +
                        ")" + userns_advice();
        return probe;
    }
    probe.available = true;
    probe.network_why_not = network_namespace_refused(*bwrap);
    probe.network = probe.network_why_not.empty();
    return probe;
}

std::string network_namespace_refused(const fs::path& bwrap) {
    auto tried = run_command({bwrap.string(), "--die-with-parent", "--unshare-pid", "--unshare-net",
                              "--ro-bind", "/", "/", "--proc", "/proc", "true"});
    if (!tried) return tried.error().message;
    if (tried->exit_code != 0)
        return "bwrap cannot make a network namespace here (" + first_line_of(tried->err) + ")" +
               userns_advice();
    return "";
}

std::vector<std::string> sandboxed_argv(const fs::path& bwrap, const SandboxPlan& plan,
                                        const std::vector<std::string>& argv) {
    std::vector<std::string> out = {bwrap.string(),
                                    "--die-with-parent",
                                    "--unshare-pid",
                                    "--bind",
                                    "/",
                                    "/",
                                    "--dev-bind",
                                    "/dev",
                                    "/dev",
                                    "--proc",
                                    "/proc"};
    if (plan.own_network) out.push_back("--unshare-net");
    std::error_code ec;
    for (const auto& path : plan.hidden_first)
        if (fs::is_directory(path, ec)) out.insert(out.end(), {"--tmpfs", path.string()});
    // The -try forms skip a path missing when the sandbox starts (a run's worktree is made
    // after its command line, and must exist by then).
    for (const auto& path : plan.read_only)
        out.insert(out.end(), {"--ro-bind-try", path.string(), path.string()});
    for (const auto& path : plan.read_write)
        out.insert(out.end(), {"--bind-try", path.string(), path.string()});
    for (const auto& path : plan.hidden) {
        if (fs::is_directory(path, ec))
            out.insert(out.end(), {"--tmpfs", path.string()});
        else if (fs::exists(path, ec))
            out.insert(out.end(), {"--ro-bind", "/dev/null", path.string()});
    }
    for (const auto& path : plan.read_only_last)
        out.insert(out.end(), {"--ro-bind-try", path.string(), path.string()});
    out.push_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

}  // namespace cocode
