// The sandbox an agent runs in: bubblewrap (`bwrap`), with a PID namespace of its own so that
// when the run ends — or the dispatcher dies — every process it started is gone, whatever it
// did (setsid, double fork, `env -i`, ignoring SIGTERM). The file system is the host's, with
// what the plan says made read-only or hidden; the network is shared (agents need their
// model, unless the run's network is enclosed: then it has a namespace of its own, see
// agent/egress.h). Without bubblewrap (not installed, or user namespaces restricted, as
// Ubuntu 24.04's AppArmor does) cocode falls back to process-group tracking and says so
// (docs/security.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cocode {

struct SandboxProbe {
    bool available = false;
    std::filesystem::path bwrap;  // the program, when found
    std::string version;          // "bubblewrap 0.8.0"
    std::string why_not;          // when not available: what failed, and what would fix it
    // Whether it can give a network namespace too (an enclosed network: agent/egress.h), and
    // when not, why.
    bool network = false;
    std::string network_why_not;
};

// Whether a PID-namespace sandbox can be made here: bwrap is on PATH and starts `true` in one;
// then whether a network namespace can be made too.
SandboxProbe probe_sandbox();

// Whether bwrap can also give a network namespace here (an agent's enclosed network,
// agent/egress.h): "" when it can, else what failed and what would fix it.
std::string network_namespace_refused(const std::filesystem::path& bwrap);

// What the agent sees of the file system. Applied in this order: everything read-write as on
// the host; `read_only` made read-only; `read_write` made writable again inside those;
// `hidden` replaced by an empty folder (or, for a file, by an empty file). Paths that do not
// exist when the sandbox starts are skipped (hidden ones: when the command line is made).
struct SandboxPlan {
    // Hidden before anything is bound (an empty folder over each): what is bound below comes
    // back, the rest of it stays out of sight (a replay's main repository around its own).
    std::vector<std::filesystem::path> hidden_first;
    std::vector<std::filesystem::path> read_only;
    std::vector<std::filesystem::path> read_write;
    std::vector<std::filesystem::path> hidden;
    // Made read-only last, inside a writable folder (the run's record of its network).
    std::vector<std::filesystem::path> read_only_last;
    // A network namespace of its own: its loopback, nothing else (agent/egress.h).
    bool own_network = false;
};

// The command line that runs `argv` inside the sandbox.
std::vector<std::string> sandboxed_argv(const std::filesystem::path& bwrap, const SandboxPlan& plan,
                                        const std::vector<std::string>& argv);

}  // namespace cocode
