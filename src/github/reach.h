// Can an endpoint be reached from here? Asked without spending a request: a TCP connection
// to its host and port — through the proxy the environment names for it (HTTPS_PROXY,
// NO_PROXY…), with an HTTP CONNECT — and nothing sent beyond that. For `doctor` and the
// check's diagnosis of a silent agent: a model endpoint that cannot be reached is the usual
// reason a coding CLI prints nothing until it is killed.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "core/files.h"
#include "core/result.h"
#include "github/url.h"

namespace cocode::github {

// A TCP connection to the endpoint of `url` (blocking, TCP_NODELAY), through the proxy the
// environment names for it; `how` says which way ("127.0.0.1:443", "… through proxy …").
struct Connection {
    UniqueFd fd;
    std::string how;
};
Result<Connection> open_connection(std::string_view url, std::chrono::milliseconds timeout,
                                   EnvLookup env = getenv_string);

// On success, how it was reached: "127.0.0.1:443" or "api.example:443 through proxy
// 127.0.0.1:3128". An error says why not ("connection refused", "proxy answered 403",
// "timed out after 3 s"); a malformed URL or proxy variable is a usage error.
Result<std::string> probe_endpoint(std::string_view url, std::chrono::milliseconds timeout,
                                   EnvLookup env = getenv_string);

}  // namespace cocode::github
