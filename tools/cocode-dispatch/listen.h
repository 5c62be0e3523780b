// Where `ui` and `serve` listen: a port of their own. cpp-httplib's default socket options set
// SO_REUSEPORT, which lets a second dashboard listen on a port in use and the kernel split the
// connections between the two; SO_REUSEADDR alone rebinds a port its last owner left in
// TIME_WAIT, and a port another process listens on stays refused.
#pragma once

#include <httplib.h>
#include <sys/socket.h>

#include <string>

namespace cocode::dispatch_cli {

// The port `server` now holds on `host` (`port` 0: any free one); -1 when it cannot have it.
inline int bind_exclusively(httplib::Server& server, const std::string& host, int port) {
    server.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    if (port == 0) return server.bind_to_any_port(host);
    return server.bind_to_port(host, port) ? port : -1;
}

}  // namespace cocode::dispatch_cli
