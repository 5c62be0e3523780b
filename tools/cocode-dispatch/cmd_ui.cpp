// cocode-dispatch ui: the dashboard (dashboard.h, docs/dashboard.md) on its own server, on
// loopback unless told otherwise, until SIGTERM or Ctrl-C.
#include <cstdio>
#include <thread>

#include "core/files.h"
#include "dashboard.h"
#include "listen.h"
#include "ui/web.h"
#include "watching.h"

namespace cocode::dispatch_cli {

namespace {
// Where it listens (HOST:PORT, never the token), for scripts and tests that asked for any port.
constexpr char kListeningFile[] = ".cocode/ui/listening";
}  // namespace

int run_ui(const UiArgs& args) {
    const sigset_t stops = block_stop_signals();
    Workspace ws = open_workspace(false);
    const bool given = std::getenv("COCODE_UI_TOKEN") && *std::getenv("COCODE_UI_TOKEN");
    if (!ui::is_loopback(args.bind) && !given)
        throw Failure(Error::usage(
            "--bind " + args.bind +
            ": a dashboard reachable from other machines needs a token chosen for it: set "
            "COCODE_UI_TOKEN (and put it behind TLS: docs/self-hosted.md)"));
    const std::string token = dashboard_token();
    httplib::Server server;
    // Every open page holds two streams (the races, a log): room for a team.
    server.new_task_queue = [] { return new httplib::ThreadPool(32); };
    server.set_read_timeout(10, 0);
    Dashboard dashboard(ws, {"", token, args.dashboard.read_only});
    dashboard.mount(server);
    const int port = bind_exclusively(server, args.bind, args.port);
    if (port < 0)
        throw Failure(Error::general("cannot listen on " + args.bind + ":" +
                                     std::to_string(args.port) +
                                     ": the port is in use (another dashboard or `serve`?), or "
                                     "this is not an address of this machine"));
    std::thread listener([&] { server.listen_after_bind(); });
    const std::string where = args.bind + ":" + std::to_string(port);
    std::error_code ec;
    std::filesystem::create_directories((ws.root / kListeningFile).parent_path(), ec);
    if (auto written = write_file_atomic(ws.root / kListeningFile, where + "\n"); !written)
        notice("warning: " + written.error().message);
    std::printf("cocode dashboard%s: %s\n", args.dashboard.read_only ? " (read-only)" : "",
                dashboard_url(args.bind, port, "", token).c_str());
    std::fflush(stdout);
    while (!stop_requested(stops, std::chrono::hours(24))) {
    }
    dashboard.close();
    server.stop();
    listener.join();
    return 0;
}

}  // namespace cocode::dispatch_cli
