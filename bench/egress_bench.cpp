// bench/run egress: what an agent's enclosed network costs (docs/security.md). The same client
// talks to the same server on 127.0.0.1, once directly and once from inside a network
// namespace of its own, through cocode's bridge (`cocode-egress-bridge`, beside cocode-dispatch)
// and the run's egress proxy (net/proxy.h) — the path every connection of an agent takes under
// `network.mode: allowlist`. Three figures, medians: the time to connect and get a first byte
// back, the throughput of a 1 GiB download, short connections a second.
//
//   cocode-bench-egress <cocode-dispatch> <runs> <scratch>   the table
//   cocode-bench-egress client <port> <runs>                 one side's figures (internal)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "net/proxy.h"

namespace {

using namespace cocode;
using bench::Clock;
namespace fs = std::filesystem;

constexpr std::size_t kDownload = std::size_t{1} << 30;

// The server: one byte in; 'p' answers one byte, 'd' sends 1 GiB; then it closes.
void serve(int listener) {
    while (true) {
        const int fd = ::accept(listener, nullptr, nullptr);
        if (fd < 0) return;
        std::thread([fd] {
            char command = 0;
            if (::recv(fd, &command, 1, 0) == 1) {
                if (command == 'p') {
                    (void)::send(fd, "p", 1, MSG_NOSIGNAL);
                } else if (command == 'd') {
                    std::vector<char> block(1 << 20, 'x');
                    for (std::size_t sent = 0; sent < kDownload; sent += block.size())
                        if (!net::send_all(fd, std::string_view(block.data(), block.size()))) break;
                }
            }
            ::close(fd);
        }).detach();
    }
}

int connect_to(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        std::perror("bench: connect");
        std::exit(1);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// One connection: connect, one byte each way, close. Milliseconds.
double ping(int port) {
    const auto start = Clock::now();
    const int fd = connect_to(port);
    char answer = 0;
    if (::send(fd, "p", 1, 0) != 1 || ::recv(fd, &answer, 1, MSG_WAITALL) != 1 || answer != 'p') {
        std::fprintf(stderr, "bench: no answer\n");
        std::exit(1);
    }
    ::close(fd);
    return bench::ms_since(start);
}

// MB/s of one 1 GiB download.
double download(int port) {
    const auto start = Clock::now();
    const int fd = connect_to(port);
    (void)::send(fd, "d", 1, 0);
    std::vector<char> buffer(1 << 20);
    std::size_t got = 0;
    while (true) {
        const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (got != kDownload) {
        std::fprintf(stderr, "bench: downloaded %zu bytes of %zu\n", got, kDownload);
        std::exit(1);
    }
    return static_cast<double>(got) / 1e6 / (bench::ms_since(start) / 1000);
}

// The client's three figures: "latency_ms mb_per_s connections_per_s".
std::string client(int port, int runs) {
    std::vector<double> latencies, speeds, rates;
    for (int i = 0; i < 20; ++i) ping(port);  // warm
    for (int i = 0; i < runs * 20; ++i) latencies.push_back(ping(port));
    for (int i = 0; i < std::max(3, runs / 5); ++i) speeds.push_back(download(port));
    for (int r = 0; r < runs; ++r) {
        const auto start = Clock::now();
        for (int i = 0; i < 200; ++i) ping(port);
        rates.push_back(200 / (bench::ms_since(start) / 1000));
    }
    char line[128];
    std::snprintf(line, sizeof line, "%.4f %.0f %.0f", bench::median(latencies),
                  bench::median(speeds), bench::median(rates));
    return line;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 4 && std::string(argv[1]) == "client") {
        std::printf("%s\n", client(std::atoi(argv[2]), std::atoi(argv[3])).c_str());
        return 0;
    }
    if (argc != 4) {
        std::fprintf(stderr, "usage: cocode-bench-egress <cocode-dispatch> <runs> <scratch>\n");
        return 2;
    }
    const std::string dispatch = argv[1];
    const int runs = std::atoi(argv[2]);
    const fs::path scratch = argv[3];
    fs::create_directories(scratch);

    auto listener = net::listen_tcp("127.0.0.1", 0);
    if (!listener) {
        std::fprintf(stderr, "bench: %s\n", listener.error().message.c_str());
        return 1;
    }
    sockaddr_in bound{};
    socklen_t size = sizeof bound;
    ::getsockname(listener->get(), reinterpret_cast<sockaddr*>(&bound), &size);
    const int port = ntohs(bound.sin_port);
    std::thread([fd = listener->get()] { serve(fd); }).detach();

    net::ProxyOptions options;
    options.socket = scratch / "egress.sock";
    options.record = scratch / "egress.jsonl";
    options.allow.add({"127.0.0.1", port, "bench"});
    auto proxy = net::EgressProxy::start(options);
    if (!proxy) {
        std::fprintf(stderr, "bench: %s\n", proxy.error().message.c_str());
        return 1;
    }
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    const std::string direct = client(port, runs);
    const std::string inside =
        "bwrap --die-with-parent --unshare-net --unshare-pid --bind / / --dev-bind /dev /dev "
        "--proc /proc -- " +
        bench::quote((fs::path(dispatch).parent_path() / "cocode-egress-bridge").string()) +
        " --socket " + bench::quote(options.socket) + " --proxy-port 3128 --forward 127.0.0.1," +
        std::to_string(port) + ",127.0.0.1 -- " + bench::quote(self) + " client " +
        std::to_string(port) + " " + std::to_string(runs);
    FILE* pipe = ::popen(inside.c_str(), "r");
    char line[256] = {0};
    if (!pipe || !std::fgets(line, sizeof line, pipe) || ::pclose(pipe) != 0) {
        std::fprintf(stderr, "bench: the client in the namespace failed: %s\n", inside.c_str());
        return 1;
    }
    double d[3], v[3];
    std::sscanf(direct.c_str(), "%lf %lf %lf", &d[0], &d[1], &d[2]);
    std::sscanf(line, "%lf %lf %lf", &v[0], &v[1], &v[2]);
    std::printf("%-44s %14s %14s %9s\n", "", "direct", "through cocode", "ratio");
    std::printf("%-44s %11.3f ms %11.3f ms %8.2fx   (+%.3f ms)\n",
                "connect + first byte back (median)", d[0], v[0], v[0] / d[0], v[0] - d[0]);
    std::printf("%-44s %9.0f MB/s %9.0f MB/s %8.2fx\n", "1 GiB download (median)", d[1], v[1],
                v[1] / d[1]);
    std::printf("%-44s %11.0f /s %11.0f /s %8.2fx\n", "short connections, 200 in a row (median)",
                d[2], v[2], v[2] / d[2]);
    return 0;
}
