#include "net/allowlist.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace cocode::net {

namespace {

struct Ecosystem {
    std::string_view name;
    std::vector<std::string_view> hosts;
};

// What each ecosystem's package tools fetch from (docs/security.md lists them).
const std::vector<Ecosystem>& ecosystems() {
    static const std::vector<Ecosystem> all = {
        {"npm", {"registry.npmjs.org", "registry.yarnpkg.com"}},
        {"pypi", {"pypi.org", "files.pythonhosted.org"}},
        {"crates", {"crates.io", "index.crates.io", "static.crates.io"}},
        {"go", {"proxy.golang.org", "sum.golang.org", "index.golang.org"}},
        {"debian", {"deb.debian.org", "security.debian.org"}},
        {"ubuntu", {"archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com"}},
        {"maven", {"repo.maven.apache.org", "repo1.maven.org"}},
        {"rubygems", {"rubygems.org", "index.rubygems.org"}},
        {"github",
         {"github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com",
          "raw.githubusercontent.com"}},
    };
    return all;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool valid_name(std::string_view host) {
    if (host.empty() || host.size() > 253) return false;
    std::size_t label = 0;
    for (std::size_t i = 0; i < host.size(); ++i) {
        const char c = host[i];
        if (c == '.') {
            if (label == 0) return false;
            label = 0;
            continue;
        }
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
        if (++label > 63) return false;
    }
    return label > 0;
}

bool is_ipv6(std::string_view host) {
    std::array<unsigned char, 16> out{};
    return inet_pton(AF_INET6, std::string(host).c_str(), out.data()) == 1;
}

// "[::1]" → "::1"; a name or IPv4 address as it is.
std::string bare(std::string_view host) {
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        return lower(host.substr(1, host.size() - 2));
    return lower(host);
}

std::optional<int> parse_port(std::string_view text) {
    if (text.empty() || text.size() > 5) return std::nullopt;
    int port = 0;
    for (char c : text) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return std::nullopt;
    return port;
}

// "host", "host:port", "[v6]", "[v6]:port": the host (bare) and the port (0 when none).
std::optional<std::pair<std::string, int>> split_host_port(std::string_view text) {
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        std::string host = bare(text.substr(0, close + 1));
        if (!is_ipv6(host)) return std::nullopt;
        const auto rest = text.substr(close + 1);
        if (rest.empty()) return std::pair{host, 0};
        if (rest.front() != ':') return std::nullopt;
        auto port = parse_port(rest.substr(1));
        if (!port) return std::nullopt;
        return std::pair{host, *port};
    }
    if (is_ipv6(text)) return std::pair{lower(text), 0};
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::pair{lower(text), 0};
    auto port = parse_port(text.substr(colon + 1));
    if (!port) return std::nullopt;
    return std::pair{lower(text.substr(0, colon)), *port};
}

}  // namespace

const std::vector<std::string_view>& ecosystem_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& e : ecosystems()) out.push_back(e.name);
        return out;
    }();
    return names;
}

std::vector<std::string_view> ecosystem_hosts(std::string_view name) {
    for (const auto& e : ecosystems())
        if (e.name == name) return e.hosts;
    return {};
}

std::vector<std::pair<std::string, std::string>> ecosystems_used(
    const std::filesystem::path& root) {
    static const std::pair<const char*, const char*> signs[] = {
        {"package.json", "npm"}, {"pyproject.toml", "pypi"}, {"requirements.txt", "pypi"},
        {"setup.py", "pypi"},    {"Cargo.toml", "crates"},   {"go.mod", "go"}};
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& sign : signs) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(root / sign.first, ec)) continue;
        const std::string ecosystem = sign.second;
        if (std::none_of(out.begin(), out.end(),
                         [&](const auto& e) { return e.first == ecosystem; }))
            out.emplace_back(ecosystem, sign.first);
    }
    return out;
}

Result<std::vector<AllowEntry>> parse_allow_entry(std::string_view text, std::string_view why) {
    if (auto hosts = ecosystem_hosts(text); !hosts.empty()) {
        std::vector<AllowEntry> out;
        for (auto host : hosts) out.push_back({std::string(host), 0, std::string(text)});
        return out;
    }
    const std::string expected =
        "expected a host, host:port, *.domain or one of npm, pypi, crates, go, debian, ubuntu, "
        "maven, rubygems, github; got '" +
        std::string(text) + "'";
    auto split = split_host_port(text);
    if (!split) return Error::usage(expected);
    auto [host, port] = *split;
    const bool wildcard = host.rfind("*.", 0) == 0;
    const std::string name = wildcard ? host.substr(2) : host;
    if (!is_ipv6(name) && !valid_name(name)) return Error::usage(expected);
    if (wildcard && name.find('.') == std::string::npos)
        return Error::usage("a wildcard needs a domain with a dot (*.example.com); got '" +
                            std::string(text) + "'");
    return std::vector<AllowEntry>{{host, port, std::string(why)}};
}

std::optional<AllowEntry> endpoint_entry(std::string_view url, std::string_view why) {
    int default_port = 0;
    if (url.rfind("https://", 0) == 0) {
        default_port = 443;
        url.remove_prefix(8);
    } else if (url.rfind("http://", 0) == 0) {
        default_port = 80;
        url.remove_prefix(7);
    } else {
        return std::nullopt;
    }
    auto authority = url.substr(0, url.find_first_of("/?#"));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos)
        authority.remove_prefix(at + 1);
    auto split = split_host_port(authority);
    if (!split || split->first.empty()) return std::nullopt;
    return AllowEntry{split->first, split->second ? split->second : default_port, std::string(why)};
}

std::string entry_text(const AllowEntry& entry) {
    const std::string host = is_ipv6(entry.host) ? "[" + entry.host + "]" : entry.host;
    return entry.port ? host + ":" + std::to_string(entry.port) : host;
}

bool is_loopback(std::string_view host_in) {
    const std::string host = bare(host_in);
    if (host == "localhost" || host == "::1") return true;
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    return false;
}

void Allowlist::add(const AllowEntry& entry) {
    if (std::find(entries_.begin(), entries_.end(), entry) == entries_.end())
        entries_.push_back(entry);
}

void Allowlist::add(const std::vector<AllowEntry>& entries) {
    for (const auto& e : entries) add(e);
}

bool is_host_name(std::string_view host) {
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    if (host.empty() || host.size() > 253) return false;
    const bool address = host.find(':') != std::string_view::npos;
    return std::all_of(host.begin(), host.end(), [&](char c) {
        const unsigned char u = static_cast<unsigned char>(c);
        return std::isalnum(u) || c == '.' || (address ? c == ':' : (c == '-' || c == '_'));
    });
}

bool Allowlist::allows(std::string_view host_in, int port) const {
    if (!is_host_name(host_in)) return false;
    const std::string host = bare(host_in);
    for (const auto& e : entries_) {
        const bool port_ok = e.port ? e.port == port : (port == 443 || port == 80);
        if (!port_ok) continue;
        if (e.host == host) return true;
        if (e.host.rfind("*.", 0) == 0) {
            const std::string_view domain = std::string_view(e.host).substr(1);  // ".example.com"
            if (host.size() > domain.size() &&
                host.compare(host.size() - domain.size(), domain.size(), domain) == 0)
                return true;
        }
    }
    return false;
}

}  // namespace cocode::net
