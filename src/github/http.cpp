#include "github/http.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/files.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "proc/interrupt.h"

namespace cocode::github {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr std::string_view kAccept = "application/vnd.github.v3+json";
constexpr std::string_view kApiVersion = "2022-11-28";
constexpr int kMaxRedirects = 5;

std::optional<long> header_number(const HttpResponse& response, std::string_view name) {
    std::string value = response.header(name);
    if (value.empty()) return std::nullopt;
    char* end = nullptr;
    long number = std::strtol(value.c_str(), &end, 10);
    if (end == value.c_str() || *end != '\0') return std::nullopt;
    return number;
}

std::string format_clock(std::time_t when) {
    std::tm tm{};
    gmtime_r(&when, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%H:%M:%S UTC", &tm);
    return text;
}

std::string seconds_text(milliseconds delay) {
    auto s = (delay.count() + 999) / 1000;
    return std::to_string(s) + " s";
}

// Transport failures before anything reached the server: safe to replay any request.
bool failed_before_sending(httplib::Error error) {
    switch (error) {
        case httplib::Error::Connection:
        case httplib::Error::ConnectionTimeout:
        case httplib::Error::SSLConnection:
        case httplib::Error::BindIPAddress:
            return true;
        default:
            return false;
    }
}

std::string describe(httplib::Error error) {
    switch (error) {
        case httplib::Error::Connection:
            return "could not connect";
        case httplib::Error::ConnectionTimeout:
            return "connection timed out";
        case httplib::Error::Read:
            return "connection lost while reading the response";
        case httplib::Error::Write:
            return "connection lost while sending the request";
        case httplib::Error::SSLConnection:
            return "TLS handshake failed";
        case httplib::Error::SSLServerVerification:
            return "TLS certificate not trusted (add its CA with --ca-bundle or SSL_CERT_FILE)";
        case httplib::Error::SSLLoadingCerts:
            return "could not load the CA certificates";
        case httplib::Error::Canceled:
            return "request canceled";
        default:
            return "transport error (" + httplib::to_string(error) + ")";
    }
}

// The part of a GitHub error body worth a user's eyes: message, plus each error's details.
std::string github_message(const std::string& body) {
    auto parsed = json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        std::string text = body.substr(0, 200);
        std::replace(text.begin(), text.end(), '\n', ' ');
        return text;
    }
    std::string message = json_value(parsed, "message", std::string{});
    // OpenAI-compatible APIs: {"error": {"message": …}}.
    if (auto error = parsed.find("error"); message.empty() && error != parsed.end())
        message = error->is_object()   ? json_value(*error, "message", std::string{})
                  : error->is_string() ? error->get<std::string>()
                                       : std::string{};
    if (auto errors = parsed.find("errors"); errors != parsed.end() && errors->is_array()) {
        std::string details;
        for (const auto& e : *errors) {
            if (!details.empty()) details += "; ";
            if (e.is_string()) {
                details += e.get<std::string>();
                continue;
            }
            if (!e.is_object()) continue;
            std::string part;
            for (const char* key : {"resource", "field"}) {
                if (e.contains(key) && e[key].is_string())
                    part += (part.empty() ? "" : " ") + e[key].get<std::string>();
            }
            if (e.contains("message") && e["message"].is_string())
                part += (part.empty() ? "" : ": ") + e["message"].get<std::string>();
            else if (e.contains("code") && e["code"].is_string())
                part += (part.empty() ? "" : ": ") + e["code"].get<std::string>();
            details += part;
        }
        if (!details.empty()) message += " (" + details + ")";
    }
    return message;
}

struct CacheEntry {
    std::string etag;
    std::string link;
    std::string body;
};

// A cached page as stored: a header line, the ETag, the Link header, the body's length, then
// the body as it came — no JSON around it to escape on write and scan again on read.
constexpr std::string_view kCacheMagic = "cocode-etag-cache 2\n";

std::string cache_text(const CacheEntry& e) {
    return std::string(kCacheMagic) + e.etag + "\n" + e.link + "\n" +
           std::to_string(e.body.size()) + "\n" + e.body;
}

// Anything torn, foreign or from another version is a miss.
std::optional<CacheEntry> cache_entry(const std::string& text) {
    if (text.compare(0, kCacheMagic.size(), kCacheMagic) != 0) return std::nullopt;
    std::size_t at = kCacheMagic.size();
    std::string lines[3];
    for (auto& line : lines) {
        const auto end = text.find('\n', at);
        if (end == std::string::npos) return std::nullopt;
        line = text.substr(at, end - at);
        at = end + 1;
    }
    if (lines[0].empty() || lines[2].empty() ||
        lines[2].find_first_not_of("0123456789") != std::string::npos || lines[2].size() > 12 ||
        std::stoull(lines[2]) != text.size() - at)
        return std::nullopt;
    return CacheEntry{lines[0], lines[1], text.substr(at)};
}

// The CAs a connection trusts: the system's, plus SSL_CERT_FILE and --ca-bundle, which are
// added rather than replacing them (an unreadable one is an error). The system's are read the
// cheap way: where OpenSSL's certificate folder is hashed (update-ca-certificates, c_rehash:
// Debian, Ubuntu, Alpine, Arch) the store looks there for the one issuer a server presents,
// when it presents it; only where it is not (Fedora, RHEL) is the whole bundle file parsed, as
// OpenSSL's default paths would. Parsing Debian's 140-certificate bundle took a quarter of a
// start's CPU, twice over once httplib loaded it again.
struct TrustStore {
    X509_STORE* store = nullptr;
    std::string system_folders;  // OpenSSL's list: folders separated by ':'
};

bool hashed_folder(const std::filesystem::path& folder) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();  // e.g. 3513523f.0
        const auto dot = name.find('.');
        if (dot == 8 && dot + 1 < name.size() &&
            std::all_of(name.begin(), name.begin() + 8,
                        [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }) &&
            std::all_of(name.begin() + 9, name.end(),
                        [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return true;
    }
    return false;
}

Result<TrustStore> trust_store(const std::optional<std::filesystem::path>& ca_bundle) {
    TrustStore trust;
    trust.system_folders =
        getenv_string(X509_get_default_cert_dir_env()).value_or(X509_get_default_cert_dir());
    trust.store = X509_STORE_new();
    if (trust.store == nullptr) return Error::general("TLS: out of memory");
    X509_STORE_load_path(trust.store, trust.system_folders.c_str());
    bool hashed = false;
    for (std::size_t at = 0; at <= trust.system_folders.size() && !hashed;) {
        auto end = std::min(trust.system_folders.find(':', at), trust.system_folders.size());
        hashed = end > at && hashed_folder(trust.system_folders.substr(at, end - at));
        at = end + 1;
    }
    // SSL_CERT_FILE naming the system bundle itself (CI images often set it) adds nothing
    // the hashed folder does not hold.
    const std::filesystem::path system_bundle = X509_get_default_cert_file();
    std::vector<std::filesystem::path> bundles;
    if (auto env = getenv_string(X509_get_default_cert_file_env())) {
        std::error_code ec, system_ec;
        const auto named = std::filesystem::canonical(*env, ec);
        if (!hashed || ec || named != std::filesystem::canonical(system_bundle, system_ec))
            bundles.emplace_back(*env);
    } else if (!hashed) {
        X509_STORE_load_file(trust.store, system_bundle.c_str());  // may be absent
    }
    if (ca_bundle) bundles.push_back(*ca_bundle);
    for (const auto& bundle : bundles) {
        if (X509_STORE_load_file(trust.store, bundle.c_str()) != 1) {
            X509_STORE_free(trust.store);
            return Error::usage("CA bundle " + bundle.string() +
                                ": no PEM certificates could be read from it");
        }
    }
    return trust;
}

}  // namespace

std::string HttpResponse::header(std::string_view lower_name) const {
    auto it = headers.find(std::string(lower_name));
    return it == headers.end() ? std::string{} : it->second;
}

struct HttpClient::Transport {
    std::unique_ptr<httplib::Client> client;
    std::mt19937_64 random{std::random_device{}()};
};

namespace {

// While a request waits on GitHub (a server that answers nothing holds it a read timeout,
// 30 s), a stop asked of the thread that sent it (Ctrl-C, a person's stop of the run being
// published) cuts it short within a tick: the client's socket is shut down, the only thing
// httplib lets another thread do to a request in flight.
class StopWhileWaiting {
  public:
    // Only a stop asked once it waits: what cocode sends once stopped (the live comment's last
    // word on an interrupted batch) goes as before. Shut down again each tick: a stop that
    // came before the connection was made cut nothing.
    explicit StopWhileWaiting(httplib::Client& client)
        : watcher_([this, &client, asked = stop_asked_here(), before = stop_asked()] {
              std::unique_lock lock(mutex_);
              while (!done_) {
                  if (!before && asked()) client.stop();
                  changed_.wait_for(lock, std::chrono::milliseconds(50));
              }
          }) {}
    ~StopWhileWaiting() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        changed_.notify_all();
        watcher_.join();
    }
    StopWhileWaiting(const StopWhileWaiting&) = delete;
    StopWhileWaiting& operator=(const StopWhileWaiting&) = delete;

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool done_ = false;
    std::thread watcher_;  // last: it starts once the others are made
};

}  // namespace

HttpClient::HttpClient(HttpOptions options, std::unique_ptr<Auth> auth)
    : options_(std::move(options)), auth_(std::move(auth)), transport_(new Transport) {}

HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::create(HttpOptions options,
                                                       std::unique_ptr<Auth> auth) {
    auto proxy = proxy_for(options.base);
    if (!proxy.ok()) return std::move(proxy).error();
    if (options.ca_bundle && !std::filesystem::is_regular_file(*options.ca_bundle))
        return Error::usage("--ca-bundle: " + options.ca_bundle->string() +
                            ": no such file (expected a PEM bundle of CA certificates)");

    std::unique_ptr<HttpClient> self(new HttpClient(std::move(options), std::move(auth)));
    const HttpOptions& o = self->options_;
    auto client = std::make_unique<httplib::Client>(o.base.origin());
    using std::chrono::duration_cast;
    client->set_connection_timeout(duration_cast<std::chrono::microseconds>(o.connect_timeout));
    client->set_read_timeout(duration_cast<std::chrono::microseconds>(o.read_timeout));
    client->set_write_timeout(duration_cast<std::chrono::microseconds>(o.read_timeout));
    client->set_keep_alive(true);
    // As curl and Go do: a request's body, written after its headers, must not wait for the
    // server's delayed ACK of them (Nagle), 40 ms on every POST over a kept-alive connection.
    client->set_tcp_nodelay(true);
    client->set_follow_location(false);  // we follow same-origin redirects ourselves
    if (proxy->has_value()) {
        const Proxy& p = **proxy;
        client->set_proxy(p.host, p.port);
        if (!p.user.empty()) client->set_proxy_basic_auth(p.user, p.password);
    }
    if (o.base.scheme == "https") {
        auto store = trust_store(o.ca_bundle);
        if (!store.ok()) return std::move(store).error();
        client->set_ca_cert_store(store->store);  // the client's SSL context takes it over
        // Without a path of its own, httplib would load OpenSSL's default bundle into that
        // store a second time; the folder it is given is one the store already looks in.
        client->set_ca_cert_path("", store->system_folders);
        client->enable_server_certificate_verification(true);
    }
    self->transport_->client = std::move(client);
    return self;
}

Result<void> HttpClient::wait(milliseconds delay, const std::string& why) {
    auto budget = std::chrono::duration_cast<milliseconds>(options_.max_wait) - stats_.waited;
    if (options_.notice && delay <= budget)
        options_.notice(why + "; retrying in " + seconds_text(delay));
    return pause(delay, why);
}

void HttpClient::renew_wait_budget() { stats_.waited = milliseconds(0); }

Result<void> HttpClient::pause(milliseconds delay, const std::string& why) {
    auto budget = std::chrono::duration_cast<milliseconds>(options_.max_wait) - stats_.waited;
    if (delay > budget)
        return Error::general(why + " (gave up: waiting " + seconds_text(delay) +
                              " more would pass the limit of " +
                              std::to_string(options_.max_wait.count()) + " s, --max-wait)");
    if (options_.sleep) {
        options_.sleep(delay);
    } else {
        // A retry's wait or a rate limit's ends at once when a stop is asked (Ctrl-C while a
        // verdict is published: proc/interrupt.h).
        const auto until = std::chrono::steady_clock::now() + delay;
        while (std::chrono::steady_clock::now() < until) {
            if (stop_asked()) return Error{ExitCode::interrupted, why + " (interrupted)"};
            std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                until - std::chrono::steady_clock::now(), milliseconds(50)));
        }
    }
    stats_.waited += delay;
    return {};
}

Result<void> HttpClient::back_off(int attempt, const std::string& failure) {
    auto delay = std::min<long long>(options_.max_backoff.count(),
                                     options_.backoff.count() * (1LL << std::min(attempt - 1, 20)));
    // Jitter in [delay/2, delay]: clients that failed together retry apart.
    std::uniform_int_distribution<long long> jitter(delay / 2, delay);
    ++stats_.retries;
    return wait(milliseconds(jitter(transport_->random)), failure);
}

Result<HttpResponse> HttpClient::request(std::string_view method, const std::string& path,
                                         const std::optional<json>& body, Replay replay) {
    return send(method, path, body, replay, std::nullopt);
}

Result<HttpResponse> HttpClient::request_with_authorization(std::string_view method,
                                                            const std::string& path,
                                                            const std::optional<json>& body,
                                                            const std::string& authorization) {
    return send(method, path, body, Replay::safe, authorization);
}

Result<HttpResponse> HttpClient::request_streamed(std::string_view method, const std::string& path,
                                                  const json& body, const Receiver& receive) {
    return send(method, path, body, Replay::safe, std::nullopt, &receive);
}

namespace {

// How long GitHub asks to be left alone by a 403 or 429, and why: Retry-After; an exhausted
// rate limit until its reset (and a second); a secondary limit without a header, a minute,
// doubling on repeats (`secondary_hits`) up to 16. nullopt: it named no time.
std::optional<milliseconds> rate_limit_delay(const HttpResponse& response,
                                             const std::string& credential, int& secondary_hits,
                                             std::string& reason) {
    auto retry_after = header_number(response, "retry-after");
    auto remaining = header_number(response, "x-ratelimit-remaining");
    auto reset = header_number(response, "x-ratelimit-reset");
    const std::string message = ascii_lower(github_message(response.body));
    if (retry_after) {
        reason = "rate limited (" + std::to_string(response.status) + ", retry-after " +
                 std::to_string(*retry_after) + ")";
        return seconds(std::max(1L, *retry_after));
    }
    if (remaining && *remaining == 0 && reset) {
        auto now = std::chrono::system_clock::now();
        auto reset_at = std::chrono::system_clock::from_time_t(*reset);
        reason = "rate limit exhausted for " + credential + "; it resets at " +
                 format_clock(static_cast<std::time_t>(*reset));
        return std::max(
            milliseconds(1000),
            std::chrono::duration_cast<milliseconds>(reset_at - now) + milliseconds(1000));
    }
    if (message.find("secondary rate limit") != std::string::npos ||
        message.find("abuse") != std::string::npos) {
        reason = "secondary rate limit";
        return seconds(60) * (1 << std::min(secondary_hits++, 4));
    }
    return std::nullopt;
}

// A page kept with its ETag, for the next conditional GET. A cache that cannot be written, or
// is lost to a crash, only costs the next poll its 304: nothing is flushed.
void keep_in_cache(const std::filesystem::path& file, const HttpResponse& response) {
    const std::string etag = response.header("etag");
    if (etag.empty() || etag.find('\n') != std::string::npos ||
        response.header("link").find('\n') != std::string::npos)
        return;
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    (void)write_file_atomic(file, cache_text({etag, response.header("link"), response.body}), 0600,
                            Durability::none);
}

// The request as sent: headers for GitHub's API (or a plain JSON one), the credential,
// If-None-Match for a cached page (`etag`), the body.
httplib::Request request_for(const HttpOptions& options, std::string_view method,
                             const std::string& path, const std::optional<json>& body,
                             const std::string& authorization, const std::string& etag,
                             bool streamed) {
    httplib::Request req;
    req.method = std::string(method);
    req.path = options.base.path_prefix + path;
    // GitHub's GraphQL API is beside its REST API: /graphql, or /api/graphql beside /api/v3.
    if (options.github_api && path == "/graphql" && options.base.path_prefix.size() >= 3 &&
        options.base.path_prefix.compare(options.base.path_prefix.size() - 3, 3, "/v3") == 0)
        req.path = options.base.path_prefix.substr(0, options.base.path_prefix.size() - 3) + path;
    if (options.github_api) {
        req.headers.emplace("Accept", std::string(kAccept));
        req.headers.emplace("X-GitHub-Api-Version", std::string(kApiVersion));
    } else {
        req.headers.emplace("Accept",
                            streamed ? "text/event-stream, application/json" : "application/json");
    }
    req.headers.emplace("User-Agent", "cocode/" COCODE_VERSION);
    if (!authorization.empty()) req.headers.emplace("Authorization", authorization);
    if (!etag.empty()) req.headers.emplace("If-None-Match", etag);
    if (body) {
        req.body = body->dump();
        req.headers.emplace("Content-Type", "application/json; charset=utf-8");
    }
    return req;
}

// The ETag cache's file for a page: named by a hash of the credential and the URL, so
// neither shows.
std::filesystem::path cache_path(const HttpOptions& options, const std::string& authorization,
                                 const std::string& path) {
    return *options.cache_dir / (sha256_hex(authorization + "\n" + options.base.origin() +
                                            options.base.path_prefix + path) +
                                 ".page");
}

// What came back, its header names lower-cased; the rate limit left and GitHub's clock noted.
HttpResponse response_from(const httplib::Response& result, std::string body, HttpStats& stats) {
    HttpResponse response;
    response.status = result.status;
    response.body = std::move(body);
    for (const auto& [name, value] : result.headers)
        response.headers.emplace(ascii_lower(name), value);
    if (auto remaining = header_number(response, "x-ratelimit-remaining"))
        stats.rate_remaining = *remaining;
    if (auto date = response.header("date"); !date.empty()) stats.server_date = date;
    return response;
}

// A 304: the cached page, as if GitHub had sent it again.
HttpResponse from_cache(HttpResponse response, const CacheEntry& cached) {
    response.status = 200;
    response.body = cached.body;
    response.headers.erase("link");
    if (!cached.link.empty()) response.headers.emplace("link", cached.link);
    response.from_cache = true;
    return response;
}

// A streamed answer: its 2xx body goes to the receiver as it comes, anything else is kept
// whole in `error_body`, to be read as an error.
void stream_into(httplib::Request& req, const HttpClient::Receiver& receive, int attempt,
                 int& status, std::string& error_body) {
    req.response_handler = [&status](const httplib::Response& r) {
        status = r.status;
        return true;
    };
    req.content_receiver = [&, attempt](const char* data, std::size_t size, std::uint64_t,
                                        std::uint64_t) {
        if (status >= 200 && status < 300) return receive(std::string_view(data, size), attempt);
        error_body.append(data, size);
        return true;
    };
}

}  // namespace

// GitHub asked for no requests until a time (Retry-After, an exhausted rate limit): none is
// sent before it, however many calls come; waited for within the budget, or refused at once.
Result<void> HttpClient::wait_for_quiet(std::string_view method, const std::string& path) {
    if (!stats_.quiet_until) return {};
    const auto left =
        std::chrono::ceil<milliseconds>(*stats_.quiet_until - std::chrono::system_clock::now());
    if (left.count() > 0) {
        auto waited = wait(left, options_.service + ": " + std::string(method) + " " +
                                     options_.base.path_prefix + path + ": " + quiet_why_);
        if (!waited.ok()) return waited;
    }
    stats_.quiet_until.reset();
    return {};
}

Result<HttpResponse> HttpClient::send(std::string_view method, const std::string& path_in,
                                      const std::optional<json>& body, Replay replay,
                                      const std::optional<std::string>& fixed_authorization,
                                      const Receiver* receive) {
    const std::lock_guard one_at_a_time(sending_);
    std::string path = path_in;
    const bool is_get = method == "GET";
    int redirects = 0;
    int secondary_hits = 0;

    for (int attempt = 1;; ++attempt) {
        if (auto quiet = wait_for_quiet(method, path); !quiet.ok()) return std::move(quiet).error();
        auto header = fixed_authorization ? Result<std::string>(*fixed_authorization)
                                          : auth_->authorization(*this);
        if (!header.ok()) return std::move(header).error();
        const std::string authorization = std::move(header).value();
        std::optional<std::filesystem::path> cache_file;
        std::optional<CacheEntry> cached;
        if (is_get && options_.cache_dir && !fixed_authorization) {
            cache_file = cache_path(options_, authorization, path);
            if (auto text = read_file(*cache_file); text.ok()) cached = cache_entry(*text);
        }

        httplib::Request req =
            request_for(options_, method, path, body, authorization,
                        cached ? cached->etag : std::string(), receive != nullptr);

        int streamed_status = 0;
        std::string streamed_error_body;
        if (receive) stream_into(req, *receive, attempt, streamed_status, streamed_error_body);

        ++stats_.requests;
        auto result = [&] {
            StopWhileWaiting stoppable(*transport_->client);
            return transport_->client->send(req);
        }();
        const std::string what = std::string(method) + " " + options_.base.path_prefix + path;

        if (!result) {
            httplib::Error error = result.error();
            std::string failure = options_.service + ": " + what + ": " + describe(error);
            // Cut short by a stop, whether or not GitHub took it: said as one (exit 130).
            if (stop_asked()) return Error{ExitCode::interrupted, failure + " (interrupted)"};
            if (error == httplib::Error::SSLServerVerification ||
                error == httplib::Error::SSLLoadingCerts)
                return Error::general(failure);
            if (replay == Replay::unless_sent && !failed_before_sending(error)) {
                HttpResponse unknown;
                unknown.outcome_unknown = true;
                unknown.failure = failure;
                return unknown;
            }
            if (attempt >= options_.max_attempts)
                return Error::general(failure + " (gave up after " + std::to_string(attempt) +
                                      " attempts)");
            if (auto waited = back_off(attempt, failure); !waited.ok())
                return std::move(waited).error();
            continue;
        }

        HttpResponse response = response_from(
            *result, receive ? std::move(streamed_error_body) : std::move(result->body), stats_);
        if (response.status == 304 && cached) {
            ++stats_.not_modified;
            return from_cache(std::move(response), *cached);
        }

        // Rate limits. A rejected request was not processed: any request may be replayed.
        if (response.status == 403 || response.status == 429) {
            std::string reason;
            const auto delay = rate_limit_delay(response, auth_->source(), secondary_hits, reason);
            // A 429 that says nothing of when: backed off like a 5xx.
            if (!delay && response.status == 429 && attempt < options_.max_attempts) {
                if (auto waited = back_off(attempt, options_.service + ": " + what + ": 429 " +
                                                        github_message(response.body));
                    !waited.ok())
                    return std::move(waited).error();
                continue;
            }
            if (delay) {
                ++stats_.retries;
                stats_.quiet_until = std::chrono::system_clock::now() + *delay;
                quiet_why_ = reason;
                continue;  // waited at the top, as for any request while GitHub asks for quiet
            }
        }

        if (response.status >= 500 && response.status <= 599) {
            std::string failure = options_.service + ": " + what + ": " +
                                  std::to_string(response.status) + " " +
                                  github_message(response.body);
            if (replay == Replay::unless_sent) {
                response.outcome_unknown = true;
                response.failure = failure;
                return response;
            }
            if (attempt < options_.max_attempts) {
                if (auto waited = back_off(attempt, failure); !waited.ok())
                    return std::move(waited).error();
                continue;
            }
            return response;
        }

        // Same-origin redirects of reads (a renamed or transferred repository).
        if (is_get && (response.status == 301 || response.status == 302 || response.status == 307 ||
                       response.status == 308)) {
            auto target = relative_to_origin(options_.base, response.header("location"));
            if (target && ++redirects <= kMaxRedirects) {
                if (target->rfind(options_.base.path_prefix, 0) == 0)
                    target->erase(0, options_.base.path_prefix.size());
                path = *target;
                attempt = 0;
                continue;
            }
        }

        if (cache_file && response.status == 200) keep_in_cache(*cache_file, response);
        return response;
    }
}

Result<json> HttpClient::get_json(const std::string& path) {
    return json_body("GET", path, request("GET", path), *auth_);
}

Result<json> json_body(std::string_view method, const std::string& path,
                       Result<HttpResponse> response, const Auth& auth) {
    if (!response.ok()) return std::move(response).error();
    if (!response->ok()) return response_error(method, path, response.value(), auth);
    if (response->body.empty()) return json();
    auto parsed = json::parse(response->body, nullptr, false);
    if (parsed.is_discarded())
        return Error::general("GitHub: " + std::string(method) + " " + path +
                              ": the response is not JSON");
    return parsed;
}

namespace {

// Pages parsed on a thread of their own, in the order they came, while the next is asked for:
// the requests stay one at a time (GitHub asks clients for serial requests), and a page's
// parsing overlaps the wait for the next one.
class PageParser {
  public:
    PageParser(std::span<const std::string_view> fields, std::span<const std::string_view> inner)
        : fields_(fields), inner_(inner), thread_([this] { work(); }) {}
    ~PageParser() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    PageParser(const PageParser&) = delete;
    PageParser& operator=(const PageParser&) = delete;

    void add(std::string path, std::string body) {
        {
            std::lock_guard lock(mutex_);
            queue_.emplace_back(std::move(path), std::move(body));
        }
        wake_.notify_all();
    }
    // Every page added, parsed, in order: the items, or the path of the first page that was
    // not a JSON array.
    Result<json> items() {
        std::unique_lock lock(mutex_);
        finished_.wait(lock, [&] { return queue_.empty() && !busy_; });
        return failed_.empty() ? Result<json>(std::move(all_))
                               : Result<json>(Error::general("GitHub: GET " + failed_ +
                                                             ": expected a JSON array"));
    }

  private:
    void work() {
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return done_ || !queue_.empty(); });
            if (queue_.empty()) return;
            auto [path, body] = std::move(queue_.front());
            queue_.pop_front();
            busy_ = true;
            lock.unlock();
            auto items = parse_list_page(body, fields_, inner_);
            lock.lock();
            busy_ = false;
            if (!items && failed_.empty()) failed_ = path;
            if (items)
                for (auto& item : *items) all_.push_back(std::move(item));
            if (queue_.empty()) finished_.notify_all();
        }
    }

    std::span<const std::string_view> fields_, inner_;
    std::mutex mutex_;
    std::condition_variable wake_, finished_;
    std::deque<std::pair<std::string, std::string>> queue_;
    bool done_ = false, busy_ = false;
    json all_ = json::array();
    std::string failed_;
    std::thread thread_;
};

}  // namespace

Result<json> HttpClient::get_all_pages(const std::string& first,
                                       std::span<const std::string_view> fields, int* pages,
                                       const std::function<bool(const json& items)>& more,
                                       std::span<const std::string_view> inner) {
    json all = json::array();
    // Without `more`, a list of more than one page is parsed on a thread of its own as the
    // next page is asked for; a list of one page is parsed here.
    std::optional<PageParser> parser;
    std::optional<std::string> path = first;
    std::set<std::string> seen;  // a server whose next page is one already read would loop
    while (path) {
        if (pages) *pages = static_cast<int>(seen.size()) + 1;
        if (!seen.insert(*path).second)
            return Error::general("GitHub: GET " + first + ": the next page link returns to " +
                                  *path + ", a page already read");
        auto page = request("GET", *path);
        if (!page.ok()) return std::move(page).error();
        if (!page->ok()) return response_error("GET", *path, page.value(), *auth_);
        const auto link = next_link(page->header("link"));
        if (!more && (parser || link)) {
            if (!parser) parser.emplace(fields, inner);
            parser->add(*path, std::move(page->body));
        } else {
            auto items = parse_list_page(page->body, fields, inner);
            if (!items) return Error::general("GitHub: GET " + *path + ": expected a JSON array");
            const bool go_on = !more || more(*items);
            for (auto& item : *items) all.push_back(std::move(item));
            if (!go_on) break;
        }
        path.reset();
        if (link) {
            auto relative = relative_to_origin(options_.base, *link);
            if (!relative)
                return Error::general("GitHub: GET " + first +
                                      ": the next page is on another host; not following it "
                                      "with our credentials");
            if (relative->rfind(options_.base.path_prefix, 0) == 0)
                relative->erase(0, options_.base.path_prefix.size());
            path = std::move(relative);
        }
    }
    if (parser) return parser->items();
    return all;
}

namespace {

// `value` as nlohmann::json; its objects keep only the keys in `kept` (all when empty).
json from_simdjson(simdjson::dom::element value, std::span<const std::string_view> kept = {}) {
    using Type = simdjson::dom::element_type;
    switch (value.type()) {
        case Type::ARRAY: {
            simdjson::dom::array items;
            if (value.get(items) != simdjson::SUCCESS) break;
            json array = json::array();
            for (simdjson::dom::element item : items) array.push_back(from_simdjson(item, kept));
            return array;
        }
        case Type::OBJECT: {
            simdjson::dom::object fields;
            if (value.get(fields) != simdjson::SUCCESS) break;
            json object = json::object();
            for (simdjson::dom::key_value_pair field : fields)
                if (kept.empty() || std::find(kept.begin(), kept.end(), field.key) != kept.end())
                    object[std::string(field.key)] = from_simdjson(field.value, kept);
            return object;
        }
        case Type::INT64:
            return value.get_int64().value_unsafe();
        case Type::UINT64:
            return value.get_uint64().value_unsafe();
        case Type::DOUBLE:
            return value.get_double().value_unsafe();
        case Type::STRING:
            return std::string(value.get_string().value_unsafe());
        case Type::BOOL:
            return value.get_bool().value_unsafe();
        case Type::NULL_VALUE:
            break;
    }
    return nullptr;
}

}  // namespace

std::optional<json> parse_list_page(const std::string& body,
                                    std::span<const std::string_view> fields,
                                    std::span<const std::string_view> inner) {
    thread_local simdjson::dom::parser parser;  // keeps its buffers from page to page
    simdjson::dom::array items;
    if (parser.parse(body).get(items) != simdjson::SUCCESS) return std::nullopt;
    json out = json::array();
    for (simdjson::dom::element item : items) {
        simdjson::dom::object object;
        if (fields.empty() || item.get(object) != simdjson::SUCCESS) {
            out.push_back(from_simdjson(item));
            continue;
        }
        json kept = json::object();
        for (simdjson::dom::key_value_pair field : object)
            if (std::find(fields.begin(), fields.end(), field.key) != fields.end())
                kept[std::string(field.key)] = from_simdjson(field.value, inner);
        out.push_back(std::move(kept));
    }
    return out;
}

Error response_error(std::string_view method, const std::string& path, const HttpResponse& response,
                     const Auth& auth, std::string_view service) {
    if (response.outcome_unknown) return Error::general(response.failure);
    std::string message = std::string(service) + ": " + std::string(method) + " " + path + ": " +
                          std::to_string(response.status);
    std::string detail = github_message(response.body);
    if (!detail.empty()) message += " " + detail;
    if (response.status == 401 || response.status == 403 || response.status == 404) {
        message +=
            auth.source() == "anonymous"
                ? (service == "GitHub"
                       ? " (no credentials: set GITHUB_TOKEN or GH_TOKEN, or run gh auth login)"
                       : " (no key sent)")
                : " (as " + auth.source() + ")";
    }
    return Error::general(message);
}

}  // namespace cocode::github
