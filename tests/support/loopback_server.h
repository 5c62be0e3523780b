// Starting a test server of cpp-httplib's on 127.0.0.1 and knowing it is up: httplib 0.11 has
// no wait_until_ready, so "running, and a connect succeeds".
#pragma once

#include <httplib.h>

#include <thread>

namespace cocode::test {

// Binds `server` to a free port of 127.0.0.1, serves it from `thread` and returns the port
// once a connection is accepted. Throws when it does not come up.
int start_on_loopback(httplib::Server& server, std::thread& thread, const char* what);

}  // namespace cocode::test
