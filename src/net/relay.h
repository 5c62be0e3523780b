// The sockets both sides of an agent's network use: the proxy outside its namespace
// (net/proxy.h) and the bridge inside it (agent/egress.h) — a Unix socket between them, the
// request head a connection starts with, and the copying of bytes both ways.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/files.h"
#include "core/result.h"

namespace cocode::net {

// A listening Unix socket at `path`, whatever the length of its folder's path (bound through
// the folder's descriptor); mode 0600.
Result<UniqueFd> listen_unix(const std::filesystem::path& path);
Result<UniqueFd> connect_unix(const std::filesystem::path& path);
// A listening TCP socket on `address` (an IPv4 or IPv6 address) and `port`.
Result<UniqueFd> listen_tcp(const std::string& address, int port);
// A connection to `host` (a name or an address) on `port`, every address the name resolves
// to tried in turn, each within `limit`. The error says what failed.
Result<UniqueFd> connect_tcp(const std::string& host, int port, std::chrono::milliseconds limit);

// Reads up to the end of a request or response head ("\r\n\r\n"), at most 16 KiB, within
// `limit`: the head (ending with its blank line) and in `rest` what came after it. nullopt on
// a close, a timeout, or a head too long.
std::optional<std::string> read_head(int fd, std::string& rest, std::chrono::milliseconds limit);

// Writes all of `data`; false when the other end is gone.
bool send_all(int fd, std::string_view data);

struct Relayed {
    std::uint64_t up = 0;    // client → server
    std::uint64_t down = 0;  // server → client
};
// Copies bytes both ways until both ends have closed (a half close is passed on), or
// `stop_fd` (-1: none) becomes readable.
Relayed relay(int client, int server, int stop_fd);

}  // namespace cocode::net
