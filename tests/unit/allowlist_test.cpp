// The agent's network allowlist (net/allowlist.h): what each entry lets through, as tables of
// cases.
#include "net/allowlist.h"

#include <gtest/gtest.h>

namespace cocode::net {
namespace {

Allowlist list_of(std::initializer_list<const char*> texts) {
    Allowlist allow;
    for (const char* text : texts) allow.add(parse_allow_entry(text, "test").value_or_throw());
    return allow;
}

TEST(Allowlist, LetsThroughExactlyWhatItsEntriesSay) {
    const Allowlist allow = list_of({"api.example.com", "git.example.com:8443", "*.cdn.example",
                                     "127.0.0.1:41000", "[::1]:41001", "localhost:41002", "npm"});
    struct Case {
        const char* host;
        int port;
        bool allowed;
    };
    const Case cases[] = {
        {"api.example.com", 443, true},     // a name: 443 and 80
        {"API.Example.COM", 80, true},      // any case
        {"api.example.com", 22, false},     // not another port
        {"x.api.example.com", 443, false},  // a name is not its subdomains
        {"git.example.com", 8443, true},    // host:port: that port only
        {"git.example.com", 443, false},
        {"a.cdn.example", 443, true},  // a wildcard: names below the domain
        {"a.b.cdn.example", 443, true},
        {"cdn.example", 443, false},      // not the domain itself
        {"evilcdn.example", 443, false},  // nor a name that only ends the same
        {"127.0.0.1", 41000, true},
        {"127.0.0.1", 41001, false},
        {"::1", 41001, true},
        {"[::1]", 41001, true},
        {"localhost", 41002, true},
        {"127.0.0.1", 41002, false},        // an allowed name's address is not the name
        {"registry.npmjs.org", 443, true},  // an ecosystem's hosts
        {"93.184.216.34", 443, false},
    };
    for (const auto& c : cases)
        EXPECT_EQ(allow.allows(c.host, c.port), c.allowed) << c.host << ":" << c.port;
}

// A name no host has is refused whatever the entries say: with a NUL, a resolver reaches what
// comes before it (`evil\0.cdn.example` ends like an allowed name and reaches `evil`).
TEST(Allowlist, ANameNoHostHasIsNeverLetThrough) {
    const Allowlist allow = list_of({"*.cdn.example", "api.example.com"});
    using namespace std::string_literals;
    for (const std::string& host :
         {"evil\0.cdn.example"s, "api.example.com\0"s, "evil .cdn.example"s, "evil\n.cdn.example"s,
          "evil/x.cdn.example"s, "evil@a.cdn.example"s, "\xc3\xa9vil.cdn.example"s, ""s,
          std::string(300, 'a') + ".cdn.example"}) {
        EXPECT_FALSE(is_host_name(host)) << host;
        EXPECT_FALSE(allow.allows(host, 443)) << host;
    }
    for (const char* host : {"a.cdn.example", "a_b.cdn.example", "[::1]", "::1", "127.0.0.1"})
        EXPECT_TRUE(is_host_name(host)) << host;
    EXPECT_TRUE(allow.allows("a.cdn.example", 443));
}

TEST(Allowlist, EntriesAreReadAsWrittenAndEndpointsAsTheirUrlsSay) {
    struct Case {
        const char* text;
        const char* written;  // "" when refused
    };
    const Case cases[] = {
        {"example.com", "example.com"},
        {"example.com:8080", "example.com:8080"},
        {"*.example.com", "*.example.com"},
        {"[::1]:9", "[::1]:9"},
        {"::1", "[::1]"},
        {"10.0.0.1:5432", "10.0.0.1:5432"},
        {"http://example.com", ""},
        {"example.com:0", ""},
        {"example.com:65536", ""},
        {"exa mple.com", ""},
        {"*.com", ""},
        {"", ""},
        {"a..b", ""},
        {"[::1", ""},
    };
    for (const auto& c : cases) {
        auto entries = parse_allow_entry(c.text, "test");
        if (*c.written == '\0') {
            EXPECT_FALSE(entries.ok()) << c.text;
            continue;
        }
        ASSERT_TRUE(entries.ok()) << c.text << ": " << entries.error().message;
        ASSERT_EQ(entries->size(), 1u);
        EXPECT_EQ(entry_text(entries->front()), c.written);
    }
    EXPECT_EQ(parse_allow_entry("pypi", "test")->size(), 2u);
    EXPECT_EQ(entry_text(*endpoint_entry("https://api.example.com/v1", "")), "api.example.com:443");
    EXPECT_EQ(entry_text(*endpoint_entry("http://127.0.0.1:8080/v1", "")), "127.0.0.1:8080");
    EXPECT_EQ(entry_text(*endpoint_entry("http://user@[::1]:9/", "")), "[::1]:9");
    EXPECT_FALSE(endpoint_entry("ftp://example.com", ""));
    for (const char* loopback : {"localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"})
        EXPECT_TRUE(is_loopback(loopback)) << loopback;
    for (const char* other : {"10.0.0.1", "example.com", "::2"})
        EXPECT_FALSE(is_loopback(other)) << other;
}

}  // namespace
}  // namespace cocode::net
