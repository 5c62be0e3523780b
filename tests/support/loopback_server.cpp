#include "loopback_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace cocode::test {

int start_on_loopback(httplib::Server& server, std::thread& thread, const char* what) {
    const int port = server.bind_to_any_port("127.0.0.1");
    if (port <= 0) throw std::runtime_error(std::string(what) + ": cannot bind 127.0.0.1");
    thread = std::thread([&server] { server.listen_after_bind(); });
    for (int i = 0; i < 500; ++i) {
        if (server.is_running()) {
            int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            sockaddr_in addr{};
            addr.sin_family = AF_INET;
            addr.sin_port = htons(static_cast<uint16_t>(port));
            addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
            ::close(fd);
            if (connected) return port;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error(std::string(what) + ": the server did not start");
}

}  // namespace cocode::test
