// Where an agent's network may go (docs/security.md, "The agent's network"): hosts,
// `host:port`, `*.domain` wildcards and ecosystem names (npm, pypi, …) that expand to lists
// of hosts. A name without a port allows 443 and 80; an address is allowed only as written
// (an allowed name's address, given directly, is not that name).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace cocode::net {

struct AllowEntry {
    std::string host;  // lower case; "*.example.com" matches every name under example.com
    int port = 0;      // 0: 443 and 80
    std::string why;   // where it came from: "network.allow", "npm", "agent claude's endpoint"
    friend bool operator==(const AllowEntry& a, const AllowEntry& b) {
        return a.host == b.host && a.port == b.port;
    }
};

// The ecosystems an entry may name, in the order the docs list them.
const std::vector<std::string_view>& ecosystem_names();
// The hosts of one (empty for a name that is not one).
std::vector<std::string_view> ecosystem_hosts(std::string_view name);

// The ecosystems a repository shows it uses, by the files at its top (package.json: npm;
// pyproject.toml, requirements.txt, setup.py: pypi; Cargo.toml: crates; go.mod: go), each
// with the file that showed it.
std::vector<std::pair<std::string, std::string>> ecosystems_used(const std::filesystem::path& root);

// One entry as a person writes it: "example.com", "example.com:8443", "*.example.com",
// "127.0.0.1:8080", "[::1]:8080", or an ecosystem name. An error says what was expected.
Result<std::vector<AllowEntry>> parse_allow_entry(std::string_view text, std::string_view why);

// The entry for the endpoint of `url` (http or https; the scheme's port when none is given),
// nullopt when it is not such a URL.
std::optional<AllowEntry> endpoint_entry(std::string_view url, std::string_view why);

// An entry as configuration writes it: "example.com", "example.com:8443", "[::1]:8080".
std::string entry_text(const AllowEntry& entry);

// Whether `host` could name a host at all: a name of letters, digits, `-`, `_` and dots (at
// most 253 bytes), or an address ("[::1]" or "::1"). A NUL or any other byte no host has is
// not one: a resolver reads such a name to its NUL (`evil\0.example.com` reaches `evil`).
bool is_host_name(std::string_view host);

// 127.0.0.0/8, ::1 and "localhost": the host's own loopback.
bool is_loopback(std::string_view host);

class Allowlist {
  public:
    void add(const AllowEntry& entry);
    void add(const std::vector<AllowEntry>& entries);
    // Whether `host` (a name or an address, any case; "[::1]" or "::1") on `port` may be reached:
    // never one that is no host name (is_host_name).
    bool allows(std::string_view host, int port) const;
    const std::vector<AllowEntry>& entries() const { return entries_; }

  private:
    std::vector<AllowEntry> entries_;
};

}  // namespace cocode::net
