#include "github/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace cocode::github {

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

int default_port(std::string_view scheme) { return scheme == "http" ? 80 : 443; }

std::optional<int> parse_port(std::string_view text) {
    int port = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
        return std::nullopt;
    return port;
}

// host[:port] or [v6]:port, as found between "//" (and any userinfo) and the first '/'.
bool split_host_port(std::string_view authority, std::string& host, int& port) {
    if (authority.empty()) return false;
    std::string_view port_text;
    if (authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) return false;
        host = std::string(authority.substr(1, close - 1));
        auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port_text = rest.substr(1);
        }
    } else {
        auto colon = authority.rfind(':');
        host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    }
    if (host.empty()) return false;
    const bool v6 = authority.front() == '[';
    for (unsigned char c : host) {
        const bool ok = v6 ? (std::isxdigit(c) || c == ':' || c == '.')
                           : (std::isalnum(c) || c == '.' || c == '-' || c == '_');
        if (!ok) return false;
    }
    if (!port_text.empty()) {
        auto parsed = parse_port(port_text);
        if (!parsed) return false;
        port = *parsed;
    }
    return true;
}

}  // namespace

std::string BaseUrl::origin() const {
    std::string out = scheme + "://";
    out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
    if (port != default_port(scheme)) out += ":" + std::to_string(port);
    return out;
}

Result<BaseUrl> parse_base_url(std::string_view url, std::string_view what) {
    auto bad = [&](std::string_view why) {
        return Error::usage(std::string(what) + ": '" + std::string(url) + "' is not " +
                            std::string(why));
    };
    auto sep = url.find("://");
    if (sep == std::string_view::npos) return bad("a URL (expected https://host[/path])");
    BaseUrl base;
    base.scheme = ascii_lower(url.substr(0, sep));
    if (base.scheme != "https" && base.scheme != "http") return bad("an http or https URL");
    auto rest = url.substr(sep + 3);
    auto slash = rest.find_first_of("/?#");
    auto authority = rest.substr(0, slash);
    if (authority.find('@') != std::string_view::npos)
        return bad("allowed to carry credentials (use GITHUB_TOKEN)");
    base.port = default_port(base.scheme);
    if (!split_host_port(authority, base.host, base.port)) return bad("a URL with a valid host");
    base.host = ascii_lower(base.host);
    if (slash != std::string_view::npos) {
        auto path = rest.substr(slash);
        if (path.find_first_of("?#") != std::string_view::npos)
            return bad("a base URL (no query or fragment)");
        // What a request line carries as it is: printable ASCII, no spaces, no characters a
        // URL has to escape.
        for (unsigned char c : path)
            if (c <= 0x20 || c >= 0x7f ||
                std::string_view("\"<>\\^`{|}").find(static_cast<char>(c)) !=
                    std::string_view::npos)
                return bad("a base URL (its path has a character a URL must escape)");
        while (!path.empty() && path.back() == '/') path.remove_suffix(1);
        base.path_prefix = std::string(path);
    }
    return base;
}

std::optional<std::string> getenv_string(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

Result<BaseUrl> resolve_api_url(const std::optional<std::string>& flag) {
    if (flag && !flag->empty()) return parse_base_url(*flag, "--api-url");
    if (auto env = getenv_string("GITHUB_API_URL")) return parse_base_url(*env, "GITHUB_API_URL");
    return parse_base_url(kDefaultApiUrl, "default API URL");
}

std::optional<std::string> next_link(std::string_view header) {
    // <url>; rel="next", <url>; rel="last"
    while (!header.empty()) {
        auto open = header.find('<');
        if (open == std::string_view::npos) return std::nullopt;
        auto close = header.find('>', open);
        if (close == std::string_view::npos) return std::nullopt;
        std::string_view target = header.substr(open + 1, close - open - 1);
        auto next_entry = header.find(',', close);
        std::string_view params =
            header.substr(close + 1, next_entry == std::string_view::npos ? std::string_view::npos
                                                                          : next_entry - close - 1);
        // rel may hold several space-separated relation types: rel="next last".
        auto rel = params.find("rel=");
        if (rel != std::string_view::npos) {
            auto value = trim(params.substr(rel + 4));
            if (!value.empty() && value.front() == '"') {
                value.remove_prefix(1);
                value = value.substr(0, value.find('"'));
            } else {
                value = value.substr(0, value.find(';'));
            }
            std::string_view rest = value;
            while (!rest.empty()) {
                auto space = rest.find(' ');
                if (rest.substr(0, space) == "next" && !target.empty()) return std::string(target);
                if (space == std::string_view::npos) break;
                rest.remove_prefix(space + 1);
            }
        }
        if (next_entry == std::string_view::npos) return std::nullopt;
        header.remove_prefix(next_entry + 1);
    }
    return std::nullopt;
}

std::optional<std::string> relative_to_origin(const BaseUrl& base, std::string_view url) {
    auto sep = url.find("://");
    if (sep == std::string_view::npos) {
        if (!url.empty() && url.front() == '/') return std::string(url);
        return std::nullopt;
    }
    auto rest = url.substr(sep + 3);
    auto slash = rest.find('/');
    auto parsed = parse_base_url(url.substr(0, sep + 3 + std::min(slash, rest.size())), "link");
    if (!parsed.ok() || parsed->scheme != base.scheme || parsed->host != base.host ||
        parsed->port != base.port)
        return std::nullopt;
    return slash == std::string_view::npos ? std::string("/") : std::string(rest.substr(slash));
}

std::string percent_encode(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

std::string query_string(const std::map<std::string, std::string>& params) {
    std::string out;
    for (const auto& [key, value] : params) {
        if (!out.empty()) out += '&';
        out += percent_encode(key) + "=" + percent_encode(value);
    }
    return out;
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host, int port) {
    std::string target = ascii_lower(host);
    while (!no_proxy.empty()) {
        auto comma = no_proxy.find_first_of(", ");
        std::string entry = ascii_lower(trim(no_proxy.substr(0, comma)));
        no_proxy =
            comma == std::string_view::npos ? std::string_view{} : no_proxy.substr(comma + 1);
        if (entry.empty()) continue;
        if (entry == "*") return true;
        // An entry may name a port: host:port, [v6]:port.
        std::string entry_host = entry;
        int entry_port = 0;
        if (std::count(entry.begin(), entry.end(), ':') == 1 || entry.front() == '[') {
            std::string h;
            int p = 0;
            if (split_host_port(entry, h, p)) {
                entry_host = h;
                entry_port = p;
            }
        }
        if (entry_port != 0 && entry_port != port) continue;
        if (!entry_host.empty() && entry_host.front() == '.') entry_host.erase(0, 1);
        if (target == entry_host) return true;
        if (target.size() > entry_host.size() &&
            target.compare(target.size() - entry_host.size(), entry_host.size(), entry_host) == 0 &&
            target[target.size() - entry_host.size() - 1] == '.')
            return true;
    }
    return false;
}

std::string server_host(const BaseUrl& api, EnvLookup env) {
    if (auto server = env("GITHUB_SERVER_URL"); server && !server->empty())
        if (auto parsed = parse_base_url(*server, "GITHUB_SERVER_URL")) return parsed->host;
    return api.host == "api.github.com" ? "github.com" : api.host;
}

bool token_goes_to(std::string_view url, const BaseUrl& api, EnvLookup env) {
    auto remote = parse_base_url(url, "remote");
    if (!remote || remote->scheme != "https") return false;
    return remote->host == server_host(api, env);
}

Result<std::optional<Proxy>> proxy_for(const BaseUrl& target, EnvLookup env) {
    const char* upper = target.scheme == "https" ? "HTTPS_PROXY" : "HTTP_PROXY";
    const char* lower_name = target.scheme == "https" ? "https_proxy" : "http_proxy";
    const char* used = lower_name;
    auto value = env(lower_name);
    if (!value) {
        used = upper;
        value = env(upper);
    }
    if (!value) return std::optional<Proxy>{};
    auto no_proxy = env("no_proxy");
    if (!no_proxy) no_proxy = env("NO_PROXY");
    if (no_proxy && no_proxy_matches(*no_proxy, target.host, target.port))
        return std::optional<Proxy>{};

    std::string_view url = *value;
    auto bad = [&](std::string_view why) {
        return Error::usage(std::string(used) + ": not a proxy URL (" + std::string(why) +
                            "; expected http://[user:password@]host:port)");
    };
    if (auto sep = url.find("://"); sep != std::string_view::npos) {
        auto scheme = ascii_lower(url.substr(0, sep));
        if (scheme != "http") return bad("only http:// proxies are supported");
        url.remove_prefix(sep + 3);
    }
    url = url.substr(0, url.find('/'));
    Proxy proxy;
    if (auto at = url.rfind('@'); at != std::string_view::npos) {
        auto userinfo = url.substr(0, at);
        auto colon = userinfo.find(':');
        proxy.user = std::string(userinfo.substr(0, colon));
        if (colon != std::string_view::npos)
            proxy.password = std::string(userinfo.substr(colon + 1));
        url.remove_prefix(at + 1);
    }
    proxy.port = 80;
    if (!split_host_port(url, proxy.host, proxy.port)) return bad("no valid host");
    return std::optional<Proxy>{std::move(proxy)};
}

}  // namespace cocode::github
