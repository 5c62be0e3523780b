// cocode-dispatch egress <run|issue>: every host the runs' agents connected to through their
// proxies (allowed, blocked, or let through by `network.mode: audit`), as the `network`
// configuration that allows exactly them (docs/security.md, "Audit, then allow").
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/terminal_text.h"
#include "net/proxy.h"
#include "workspace.h"

namespace cocode::dispatch_cli {

int run_egress(const EgressArgs& args) {
    Workspace ws = open_workspace(false);
    const auto runs = select_runs(ws, args.which);
    if (runs.empty()) throw Failure(Error::usage("no run matches '" + args.which + "'"));
    std::vector<std::string> entries;
    int recorded = 0;
    for (const auto& r : runs) {
        const auto events = net::read_egress(r.folder / "egress.jsonl");
        recorded += !events.empty();
        for (const auto& e : events) {
            // What no host is called (a NUL inside) was refused, in an audit too: never proposed.
            if (!net::is_host_name(e.host)) continue;
            // A name allows 443 and 80 without a port: the entry a person would write.
            const int port = e.port == 443 || e.port == 80 ? 0 : e.port;
            const std::string entry = net::entry_text({e.host, port, ""});
            if (std::find(entries.begin(), entries.end(), entry) == entries.end())
                entries.push_back(entry);
        }
    }
    std::sort(entries.begin(), entries.end());
    // The hosts are what agents asked for: shown as JSON strings, escaped for the terminal.
    const nlohmann::json network = {{"network", {{"mode", "allowlist"}, {"allow", entries}}}};
    std::printf("%s\n", terminal_safe(network.dump(2)).c_str());
    notice(std::to_string(entries.size()) + (entries.size() == 1 ? " host" : " hosts") + " from " +
           std::to_string(recorded) + " of " + std::to_string(runs.size()) +
           (runs.size() == 1 ? " run" : " runs") +
           " with a record (runs with network open have none); paste into .cocode/config.json");
    return 0;
}

}  // namespace cocode::dispatch_cli
