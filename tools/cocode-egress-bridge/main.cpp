// cocode-egress-bridge: the first program in an agent's enclosed network when bubblewrap makes
// its sandbox (bridge.h; cocode-sandbox runs the same bridge in its own first process). It
// listens, starts the agent and ends with it, with its exit code. A program of its own, small:
// it loads none of cocode-dispatch's libraries.
//
//   cocode-egress-bridge --socket S --proxy-port P [--forward ADDRESS,PORT,HOST]... -- ARGV
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "bridge.h"
#include "core/terminal_text.h"
#include "proc/spawn.h"

namespace cocode {
namespace {

int run_bridge(const std::vector<std::string>& args) {
    auto parsed = bridge::parse_bridge(args);
    if (!parsed) {
        std::fprintf(stderr, "cocode: %s\n", terminal_safe_line(parsed.error().message).c_str());
        return 2;
    }
    // The supervisor ends the run's processes as a group; the bridge stays until its agent
    // has gone, so that the agent's last requests still get out.
    for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) std::signal(signal, SIG_IGN);
    auto listeners = bridge::listen_all(*parsed);
    if (!listeners) {
        std::fprintf(stderr, "cocode: egress bridge: %s\n",
                     terminal_safe_line(listeners.error().message).c_str());
        return 3;
    }
    ChildOptions child;
    child.argv = parsed->argv;
    child.in = ChildStream::descriptor(0);
    child.out = ChildStream::descriptor(1);
    child.err = ChildStream::descriptor(2);
    auto pid = start_child(child);
    if (!pid) {
        std::fprintf(stderr, "cocode: %s\n", terminal_safe_line(pid.error().message).c_str());
        return pid.error().code == ExitCode::missing_dependency ? 3 : 1;
    }
    bridge::serve(std::move(listeners).value(), parsed->socket);
    int status = 0;
    if (wait_child(*pid, &status) != *pid) return 1;
    std::fflush(nullptr);
    ::_exit(cocode::exit_code_of(status));
}

}  // namespace
}  // namespace cocode

int main(int argc, char** argv) {
    return cocode::run_bridge(std::vector<std::string>(argv + 1, argv + argc));
}
