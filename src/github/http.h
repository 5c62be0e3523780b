// The HTTPS client every GitHub call goes through, behaving the way GitHub's REST
// best-practice guide asks: TLS verified against the system CAs (plus a bundle), proxies from
// the environment, timeouts, retries with exponential backoff and jitter, primary and
// secondary rate limits honoured within one bounded wait, conditional GETs with ETags cached
// on disk, and pagination that follows `Link: rel="next"` to the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "github/auth.h"
#include "github/url.h"

namespace cocode::github {

struct HttpOptions {
    BaseUrl base;
    // Who answers, for messages ("GitHub: GET /repos/o/r: 404 …"); GitHub's own headers
    // (Accept, X-GitHub-Api-Version) go only to GitHub. The chat client (llm/) uses this client
    // for another service: same TLS, proxies, retries and Retry-After.
    std::string service = "GitHub";
    bool github_api = true;
    std::optional<std::filesystem::path> ca_bundle;  // added to the system CAs (and SSL_CERT_FILE)
    std::chrono::milliseconds connect_timeout{10'000};
    std::chrono::milliseconds read_timeout{30'000};
    int max_attempts = 5;                      // per request, for failures worth retrying
    std::chrono::milliseconds backoff{1'000};  // first retry after ~1 s, then ~2, ~4 …
    std::chrono::milliseconds max_backoff{30'000};
    std::chrono::seconds max_wait{300};              // all waiting of this client, added up
    std::optional<std::filesystem::path> cache_dir;  // ETag cache for GETs (.cocode/cache/http)
    std::function<void(std::string_view)> notice;    // "retrying in 2 s: 502 Bad Gateway"
    // How this client waits (backoff, rate limits, Retry-After): a test hands in its own, to
    // see the waits without spending them.
    std::function<void(std::chrono::milliseconds)> sleep;
};

// How a request may be sent again after a failure.
enum class Replay {
    // GET, PATCH, PUT, DELETE, and POSTs whose repetition changes nothing: retried after
    // connection errors, resets and 5xx.
    safe,
    // POSTs that create something: replayed only when the request surely did not reach
    // GitHub (connection refused, rate-limit rejection). Otherwise the response comes back
    // with outcome_unknown set, for the caller to find out (see upsert_comment).
    unless_sent,
};

struct HttpResponse {
    int status = 0;
    std::string body;
    std::multimap<std::string, std::string> headers;  // names in lower case
    bool from_cache = false;                          // a 304 answered from our ETag cache
    bool outcome_unknown = false;  // a non-replayable request failed after it was sent
    std::string failure;           // what went wrong when outcome_unknown

    std::string header(std::string_view lower_name) const;
    bool ok() const { return status >= 200 && status < 300; }
};

struct HttpStats {
    std::uint64_t requests = 0;      // requests put on the wire
    std::uint64_t not_modified = 0;  // of which answered 304
    std::uint64_t retries = 0;
    std::chrono::milliseconds waited{0};
    std::optional<long> rate_remaining;  // x-ratelimit-remaining of the last response
    std::string server_date;             // its Date header: GitHub's clock, for leases
    // Until when GitHub asked for no requests (Retry-After, an exhausted rate limit); none is
    // sent before then. Set only while that time is ahead, as far as this client knows.
    std::optional<std::chrono::system_clock::time_point> quiet_until;
};

class HttpClient {
  public:
    static Result<std::unique_ptr<HttpClient>> create(HttpOptions options,
                                                      std::unique_ptr<Auth> auth);
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // One request to `path` (relative to the base, starting with '/', query included). Any
    // HTTP status comes back as a response; an Error means no usable answer (TLS refused,
    // retries or wait budget exhausted, rate limit resetting too late).
    Result<HttpResponse> request(std::string_view method, const std::string& path,
                                 const std::optional<nlohmann::json>& body = std::nullopt,
                                 Replay replay = Replay::safe);

    // Like request(), with the Authorization header given rather than taken from the Auth,
    // and no ETag cache: for the App's token exchange.
    Result<HttpResponse> request_with_authorization(std::string_view method,
                                                    const std::string& path,
                                                    const std::optional<nlohmann::json>& body,
                                                    const std::string& authorization);

    // A request whose 2xx answer is handed to `receive` as it arrives (server-sent events),
    // with the attempt it belongs to: a retry after a broken stream starts again at a higher
    // attempt. Any other answer comes back whole in the response's body.
    using Receiver = std::function<bool(std::string_view chunk, int attempt)>;
    Result<HttpResponse> request_streamed(std::string_view method, const std::string& path,
                                          const nlohmann::json& body, const Receiver& receive);

    // GET that must succeed and return JSON.
    Result<nlohmann::json> get_json(const std::string& path);
    // GET of every page of a list, following Link rel="next" to the end: one array. Given
    // `fields` (and `inner`), each item keeps only those keys (see parse_list_page); given
    // `pages`, it is set to the number of pages read; given `more`, the next page is read only
    // when `more` says so of the page just read (its items).
    Result<nlohmann::json> get_all_pages(
        const std::string& path, std::span<const std::string_view> fields = {},
        int* pages = nullptr, const std::function<bool(const nlohmann::json& items)>& more = {},
        std::span<const std::string_view> inner = {});

    // Waits `delay` within what is left of the wait budget (max_wait), or fails saying why:
    // for callers that must give GitHub time (a list that lags behind a write).
    Result<void> pause(std::chrono::milliseconds delay, const std::string& why);

    // The wait budget (max_wait) whole again: a client that lives on (watch, serve) gives each
    // of its passes the budget a command has.
    void renew_wait_budget();

    const HttpStats& stats() const { return stats_; }
    const BaseUrl& base() const { return options_.base; }
    const HttpOptions& options() const { return options_; }
    const std::string& service() const { return options_.service; }
    const Auth& auth() const { return *auth_; }

  private:
    struct Transport;
    HttpClient(HttpOptions options, std::unique_ptr<Auth> auth);
    Result<HttpResponse> send(std::string_view method, const std::string& path,
                              const std::optional<nlohmann::json>& body, Replay replay,
                              const std::optional<std::string>& authorization,
                              const Receiver* receive = nullptr);
    // Sleeps `delay` within what is left of options_.max_wait, or fails saying why.
    Result<void> wait(std::chrono::milliseconds delay, const std::string& why);
    // Waits out the quiet GitHub asked for, if any (see send).
    Result<void> wait_for_quiet(std::string_view method, const std::string& path);

    // Exponential backoff with jitter before attempt `attempt + 1`.
    Result<void> back_off(int attempt, const std::string& failure);

    HttpOptions options_;
    std::unique_ptr<Auth> auth_;
    std::unique_ptr<Transport> transport_;
    // One request at a time, its retries included: threads that share a client (the judges
    // publishing, the live comments) take turns, so that a stop of one thread's request cuts
    // that request and no other's. Recursive: a token's exchange is a request of its own.
    std::recursive_mutex sending_;
    HttpStats stats_;
    std::string quiet_why_;  // "rate limited (403, retry-after 2)", for a request held back
};

// The JSON of a 2xx answer (null for an empty body); for anything else, response_error().
Result<nlohmann::json> json_body(std::string_view method, const std::string& path,
                                 Result<HttpResponse> response, const Auth& auth);

// One page of a list, a JSON array, parsed by simdjson; each item becomes nlohmann::json with
// only the top-level keys in `fields` (all of them when empty), and the objects nested in
// those (a user, a label) with only the keys in `inner` (all of them when empty). A page of 100
// issues is 600 KB of which cocode reads a tenth: nlohmann's parser took 80 ms over ten such
// pages, simdjson takes 3 (docs/performance.md). nullopt when the body is not a JSON array.
std::optional<nlohmann::json> parse_list_page(const std::string& body,
                                              std::span<const std::string_view> fields,
                                              std::span<const std::string_view> inner = {});

// An Error for a response GitHub did not answer with 2xx: "GitHub: POST /repos/o/r/labels:
// 422 Validation Failed (Label color: invalid)". 401/403/404 say which credential was used.
Error response_error(std::string_view method, const std::string& path, const HttpResponse& response,
                     const Auth& auth, std::string_view service = "GitHub");

}  // namespace cocode::github
