// An HTTP CONNECT proxy on 127.0.0.1, for tests of HTTPS_PROXY / NO_PROXY: a thread per
// tunnel (clients keep connections open), tunnels only to 127.0.0.1 — any other target is
// answered 403, so nothing a test starts leaves the machine through it — and a record of
// every target asked for.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cocode::test {

class ConnectProxy {
  public:
    ConnectProxy();
    ~ConnectProxy();
    ConnectProxy(const ConnectProxy&) = delete;
    ConnectProxy& operator=(const ConnectProxy&) = delete;

    int port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    int tunnels() const { return tunnels_; }  // opened to 127.0.0.1
    std::string last_target() const;
    std::vector<std::string> targets() const;  // every CONNECT target, refused ones too

  private:
    void serve();
    void tunnel(int client);

    int listener_ = -1;
    int port_ = 0;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    std::atomic<int> tunnels_{0};
    mutable std::mutex mutex_;
    std::vector<std::string> targets_;
    std::vector<int> clients_;  // open client sockets, shut down when the proxy stops
    std::vector<std::thread> workers_;
};

}  // namespace cocode::test
