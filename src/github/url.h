// The addresses the GitHub client deals in: the API base (which may carry a path, as GitHub
// Enterprise's `/api/v3` does), `Link` headers, query strings, and which proxy a host goes
// through. Pure functions, no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace cocode::github {

// ASCII lower case: host names, header names.
std::string ascii_lower(std::string_view text);

inline constexpr std::string_view kDefaultApiUrl = "https://api.github.com";

// `scheme://host[:port][/path]`, split the way an HTTP client needs it.
struct BaseUrl {
    std::string scheme;  // "https" or "http"
    std::string host;    // without brackets for IPv6
    int port = 443;
    std::string path_prefix;  // "" or "/api/v3": no trailing slash

    // "https://host:port" (the port only when it is not the scheme's default).
    std::string origin() const;
    // origin() + path_prefix: what the user gave, normalised.
    std::string str() const { return origin() + path_prefix; }
};

// Parses an API base URL. `what` names where it came from in the error ("--api-url").
Result<BaseUrl> parse_base_url(std::string_view url, std::string_view what);

// The API base: `flag` if given, else $GITHUB_API_URL, else https://api.github.com.
Result<BaseUrl> resolve_api_url(const std::optional<std::string>& flag);

// The target of `rel="next"` in a Link header, or nullopt.
std::optional<std::string> next_link(std::string_view link_header);

// Splits an absolute URL that GitHub handed us (a Link target) into the path+query to request
// from `base`. Nullopt when it points at a different origin (which we refuse to follow with
// our credentials).
std::optional<std::string> relative_to_origin(const BaseUrl& base, std::string_view url);

// "key=value&..." with values percent-encoded (RFC 3986 unreserved characters kept).
std::string query_string(const std::map<std::string, std::string>& params);
std::string percent_encode(std::string_view text);

struct Proxy {
    std::string host;
    int port = 0;
    std::string user;      // from http://user:password@proxy:port
    std::string password;  // secret: never printed
};

// The proxy for `target`, from HTTPS_PROXY / https_proxy (http: HTTP_PROXY / http_proxy), unless
// NO_PROXY / no_proxy matches it: `*`, a host name (matching itself and its subdomains, with
// or without a leading dot), an IP address, optionally with `:port`. `env` looks a variable up
// (getenv by default); an invalid proxy URL is a usage error naming the variable.
using EnvLookup = std::optional<std::string> (*)(const char* name);
std::optional<std::string> getenv_string(const char* name);
Result<std::optional<Proxy>> proxy_for(const BaseUrl& target, EnvLookup env = getenv_string);

// The web host of the GitHub that `api` belongs to, where git pushes go: $GITHUB_SERVER_URL's
// host when set, github.com for api.github.com, else the API's own host (GitHub Enterprise
// serves both from one).
std::string server_host(const BaseUrl& api, EnvLookup env = getenv_string);

// May a GitHub token go to the git remote at `url`? Only an https:// URL of the GitHub
// server's host: a GitLab, Bitbucket or any other origin never receives it.
bool token_goes_to(std::string_view url, const BaseUrl& api, EnvLookup env = getenv_string);

// True when `host:port` is excluded by a NO_PROXY list.
bool no_proxy_matches(std::string_view no_proxy, std::string_view host, int port);

}  // namespace cocode::github
