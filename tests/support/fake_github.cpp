#include "fake_github.h"

#include <httplib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include "core/files.h"
#include "loopback_server.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const json& examples() {
    static const json all = [] {
        std::ifstream in(fs::path(COCODE_SOURCE_DIR) / "tests/openapi/github-subset.json");
        return json::parse(in)["components"]["examples"];
    }();
    return all;
}

std::string now_text(std::time_t offset = 0) {
    std::time_t now = std::time(nullptr) + offset;
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// An HTTP date (RFC 9110, IMF-fixdate), as GitHub's `Date` header.
std::string http_date(std::time_t when) {
    std::tm tm{};
    gmtime_r(&when, &tm);
    char text[40];
    std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return text;
}

std::string etag_of(const std::string& body) {
    char text[32];
    std::snprintf(text, sizeof text, "W/\"%016zx\"", std::hash<std::string>{}(body));
    return text;
}

}  // namespace

// GitHub's example for `name`, mended where the example itself breaks GitHub's schema (the
// OpenAPI check caught these): team entries without `type`, repositories without `language`,
// a job without `created_at`.
json github_example(const std::string& name) {
    json value = examples().at(name).at("value");
    if (value.is_array()) value = value.at(0);
    if (value.contains("requested_teams")) value["requested_teams"] = json::array();
    if (name == "job" && !value.contains("created_at")) value["created_at"] = value["started_at"];
    if (name == "full-repository-default-response") {
        for (json* repo : {&value, &value["source"], &value["parent"]})
            if (repo->is_object() && !repo->contains("language")) (*repo)["language"] = nullptr;
    }
    return value;
}

struct FakeGitHub::Server {
    std::unique_ptr<httplib::Server> http;
    std::thread thread;
    mutable std::mutex mutex;

    std::map<long, json> issues;
    std::map<long, std::vector<json>> comments;
    std::map<long, std::vector<json>> events;  // labeled / unlabeled, oldest first
    // Who last edited an issue's body and renamed its title ({"at", "by"}), as GitHub's GraphQL
    // API tells (Issue.lastEditedAt and editor; its last RenamedTitleEvent).
    std::map<long, json> body_edits, title_edits;
    std::time_t clock_offset = 0;  // advance_clock()
    // List lag: a comment shows in listings only once `comment_lists` reaches its entry here.
    std::map<long long, long long> visible_at;
    long long comment_lists = 0;
    long long list_lag = 0;
    // … and an edited comment shows as it was before the edit until `comment_lists` reaches
    // the entry's `until`.
    struct Stale {
        json before;
        long long until = 0;
    };
    std::map<long long, Stale> stale;
    // A comment as a listing shows it now.
    const json* listed(const json& c) const {
        auto old = stale.find(c["id"].get<long long>());
        return old != stale.end() && comment_lists < old->second.until ? &old->second.before : &c;
    }
    std::vector<json> statuses, pulls, reactions;
    std::map<long, std::vector<json>> reviews, review_comments;  // by pull request number
    std::vector<json> check_runs;
    std::map<long long, json> jobs;
    std::map<long long, std::string> job_logs;
    std::map<std::string, std::pair<std::string, std::string>>
        permissions;  // login → (permission, role)
    std::vector<Fault> faults;
    // go_down_after(): the request that starts an outage, and whether GitHub is down.
    std::optional<Fault> outage_trigger;
    std::string outage_body;
    bool down = false;
    // delete_between_pages(): the issue, and how many more times.
    long shifting_issue = 0;
    int shifts_left = 0;
    // Requests a `hold` fault holds, until the server ends.
    int held = 0;
    bool ending = false;
    std::condition_variable release;
    std::vector<RecordedRequest> requests;
    std::vector<std::string> installation_tokens;
    std::string last_jwt_claims;
    long long next_id = 1000;
    long remaining = 5000;
    std::time_t reset_at = std::time(nullptr) + 3600;
    std::map<std::string, std::regex> routes;  // compiled once

    std::string now() const { return now_text(clock_offset); }
    // What GitHub does to an issue when anything on it changes (a comment, a label, its text).
    void touch(long number) {
        if (auto issue = issues.find(number); issue != issues.end())
            issue->second["updated_at"] = now();
    }
    // A labeled or unlabeled event on the issue, as GET /issues/{n}/events lists it.
    // A new comment on issue (or pull request) `number`, addressed as GitHub addresses it.
    json new_comment(long number, const std::string& body, const std::string& owner,
                     const std::string& repo) {
        json comment = github_example("issue-comment");
        comment["id"] = ++next_id;
        comment["body"] = body;
        comment["created_at"] = comment["updated_at"] = now();
        touch(number);
        const auto issue = issues.find(number);
        const bool pull = issue != issues.end() && issue->second.contains("pull_request");
        comment["issue_url"] = "https://api.github.com/repos/" + owner + "/" + repo + "/issues/" +
                               std::to_string(number);
        comment["html_url"] = "https://github.com/" + owner + "/" + repo +
                              (pull ? "/pull/" : "/issues/") + std::to_string(number) +
                              "#issuecomment-" + std::to_string(next_id);
        return comment;
    }

    void record_label_event(long number, const std::string& kind, const json& label,
                            const std::string& actor = "") {
        json event = github_example("issue-event-for-issue-items");
        if (!actor.empty()) {
            event["actor"]["login"] = actor;
            const bool bot = actor.size() > 5 && actor.compare(actor.size() - 5, 5, "[bot]") == 0;
            event["actor"]["type"] = bot ? "Bot" : "User";
        }
        event["id"] = ++next_id;
        event["event"] = kind;
        event["created_at"] = now();
        event["label"] = {{"name", label.value("name", "")}, {"color", label.value("color", "")}};
        if (auto issue = issues.find(number); issue != issues.end())
            issue->second["updated_at"] = event["created_at"];  // as GitHub touches the issue
        event["commit_id"] = nullptr;
        event["commit_url"] = nullptr;
        events[number].push_back(event);
    }
};

const LoopbackTls& loopback_tls() {
    static const LoopbackTls tls = [] {
        LoopbackTls made;
        made.dir = fs::temp_directory_path() / ("cocode-tls-" + std::to_string(::getpid()));
        fs::create_directories(made.dir);
        made.files = make_self_signed_certificate(made.dir);
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(fs::temp_directory_path() / ("cocode-tls-" + std::to_string(::getpid())),
                           ec);
        });
        return made;
    }();
    return tls;
}

FakeGitHub::Options loopback_options(std::string prefix) {
    FakeGitHub::Options options;
    options.tls = loopback_tls().files;
    options.token = kTestToken;
    options.prefix = std::move(prefix);
    if (const char* scratch = std::getenv("COCODE_TEST_SCRATCH"); scratch && *scratch) {
        fs::create_directories(scratch);
        options.exchanges = fs::path(scratch) / "openapi-exchanges.jsonl";
    }
    return options;
}

FakeGitHub::FakeGitHub(Options options) : options_(std::move(options)), server_(new Server) {
    server_->remaining = options_.rate_limit;
    // The people GitHub's examples act as own their example repositories: they label issues
    // (octocat, in the example issue events) and send the example events (Codertocat).
    for (const char* owner : {"octocat", "Codertocat"})
        server_->permissions[owner] = {"admin", "admin"};
    Server& s = *server_;
    if (options_.tls.certificate.empty())
        s.http = std::make_unique<httplib::Server>();
    else
        s.http = std::make_unique<httplib::SSLServer>(options_.tls.certificate.c_str(),
                                                      options_.tls.private_key.c_str());

    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
        Server& st = *server_;
        std::unique_lock lock(st.mutex);
        const std::string& prefix = options_.prefix;
        std::string path = req.path;
        RecordedRequest record{req.method,
                               path,
                               req.get_header_value("Authorization"),
                               req.get_header_value("If-None-Match"),
                               req.body,
                               0};
        // Answers with `text` as the body (none when empty); `body` is what the exchange log
        // records, parsed from the text only when a log is kept.
        auto finish_text = [&](int status, std::string text, const json* body,
                               const std::string& operation, bool count = true) {
            res.status = status;
            if (!text.empty()) res.set_content(std::move(text), "application/json; charset=utf-8");
            if (count && st.remaining > 0) --st.remaining;
            res.set_header("x-ratelimit-limit", std::to_string(options_.rate_limit));
            res.set_header("x-ratelimit-remaining", std::to_string(st.remaining));
            res.set_header("x-ratelimit-reset", std::to_string(st.reset_at));
            res.set_header("x-ratelimit-resource", "core");
            res.set_header("Date", http_date(std::time(nullptr) + st.clock_offset));
            record.status = status;
            if (!operation.empty() && options_.exchanges) {
                json exchange = {{"operation", operation}, {"status", status}};
                if (!req.body.empty())
                    exchange["request_body"] = json::parse(req.body, nullptr, false);
                if (body != nullptr && !body->is_null())
                    exchange["response_body"] = *body;
                else if (!res.body.empty())
                    exchange["response_body"] = json::parse(res.body);
                (void)append_line_locked(*options_.exchanges, exchange.dump());
            }
        };
        auto finish = [&](int status, const json& body, const std::string& operation = "",
                          bool count = true) {
            finish_text(status, body.is_null() ? std::string() : body.dump(), &body, operation,
                        count);
        };
        struct Recorder {
            Server& st;
            RecordedRequest& record;
            ~Recorder() { st.requests.push_back(record); }
        } recorder{st, record};

        // Where a job's log is stored: another host than the API's (GitHub redirects there),
        // asked with no token. Not an API operation.
        if (req.method == "GET" && path.rfind("/job-logs/", 0) == 0) {
            auto log = st.job_logs.find(std::atoll(path.c_str() + 10));
            if (log == st.job_logs.end()) return finish(404, {{"message", "Not Found"}});
            res.status = 200;
            res.set_content(log->second, "text/plain; charset=utf-8");
            record.status = 200;
            return;
        }
        // GitHub's GraphQL API is beside the REST API: /graphql, or /api/graphql beside /api/v3.
        const std::string graphql =
            (prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/v3") == 0
                 ? prefix.substr(0, prefix.size() - 3)
                 : prefix) +
            "/graphql";
        if (req.method == "POST" && path == graphql) path = prefix + "/graphql";
        if (path.rfind(prefix, 0) != 0) return finish(404, {{"message", "Not Found"}});
        path.erase(0, prefix.size());
        std::string full_path = path;
        if (!req.params.empty()) {
            std::string query;
            for (const auto& [k, v] : req.params)
                query += (query.empty() ? "?" : "&") + k + "=" + v;
            full_path += query;
        }
        record.path = full_path;

        // Rate limit: the reset passes, or every request is refused.
        if (st.remaining == 0 && std::time(nullptr) >= st.reset_at) {
            st.remaining = options_.rate_limit;
            st.reset_at = std::time(nullptr) + 3600;
        }

        // App token exchange, authenticated by a JWT.
        static const std::regex token_route(R"(/app/installations/(\d+)/access_tokens)");
        std::smatch m;
        if (req.method == "POST" && std::regex_match(path, m, token_route)) {
            std::string auth = req.get_header_value("Authorization");
            std::string claims = auth.rfind("Bearer ", 0) == 0 && !options_.app_public_key.empty()
                                     ? verify_rs256_jwt(auth.substr(7), options_.app_public_key)
                                     : "";
            json parsed = json::parse(claims, nullptr, false);
            if (claims.empty() || !parsed.is_object() ||
                parsed.value("iss", "") != options_.app_id ||
                parsed.value("exp", 0LL) <= static_cast<long long>(std::time(nullptr)))
                return finish(401, {{"message", "A JSON web token could not be decoded"},
                                    {"documentation_url", "https://docs.github.com/rest"}});
            st.last_jwt_claims = claims;
            std::string token = "ghs_" + std::string(32, 'a') +
                                std::to_string(1000 + st.installation_tokens.size());
            st.installation_tokens.push_back(token);
            json body = github_example("installation-token");
            body["token"] = token;
            body["expires_at"] = now_text(3600);
            return finish(201, body, "apps/create-installation-access-token");
        }

        std::string auth = req.get_header_value("Authorization");
        bool authorized = auth == "token " + options_.token;
        for (const auto& t : st.installation_tokens)
            authorized = authorized || auth == "token " + t;
        if (!authorized)
            return finish(401, {{"message", "Bad credentials"},
                                {"documentation_url", "https://docs.github.com/rest"}});

        if (st.remaining == 0) {
            return finish(403,
                          {{"message", "API rate limit exceeded for user ID 1."},
                           {"documentation_url",
                            "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}},
                          "", false);
        }

        if (st.down) return finish(502, {{"message", "Server Error"}}, "", false);
        std::optional<Fault> fault;
        for (auto it = st.faults.begin(); it != st.faults.end(); ++it) {
            if ((it->method.empty() || it->method == req.method) &&
                full_path.find(it->path_contains) != std::string::npos) {
                fault = *it;
                if (--it->times <= 0) st.faults.erase(it);
                break;
            }
        }
        if (fault && fault->kind == Fault::Kind::hold) {
            ++st.held;
            st.release.wait(lock, [&] { return st.ending; });
            --st.held;
            return finish(fault->status, json::parse(fault->body), "", false);
        }
        if (fault && fault->kind == Fault::Kind::respond) {
            for (const auto& [k, v] : fault->headers) res.set_header(k, v);
            return finish(fault->status, json::parse(fault->body), "", false);
        }

        const std::string repo_path = "/repos/" + options_.owner + "/" + options_.repo;
        auto route = [&]() -> void {
            std::smatch r;
            auto is = [&](const char* method, const std::string& pattern) {
                if (req.method != method) return false;
                auto [it, added] = st.routes.try_emplace(pattern);
                if (added) it->second = std::regex(repo_path + pattern);
                return std::regex_match(path, r, it->second);
            };
            json body = req.body.empty() ? json() : json::parse(req.body, nullptr, false);
            if (!req.body.empty() && body.is_discarded())
                return finish(400, {{"message", "Problems parsing JSON"}});

            // The user the token acts as; an App's installation token acts as none (403).
            if (req.method == "GET" && path == "/user") {
                if (auth != "token " + options_.token)
                    return finish(403, {{"message", "Resource not accessible by integration"}});
                json user = github_example("private-user-response-with-public-profile-information");
                user["login"] = options_.token_login;
                return finish(200, user, "users/get-authenticated");
            }
            // The one GraphQL query cocode asks (github::GitHub::issue_edits): who last changed
            // an issue's text. Its answer has GraphQL's shape; an unknown issue is null.
            if (req.method == "POST" && path == "/graphql") {
                const json vars =
                    body.is_object() ? body.value("variables", json::object()) : json();
                if (!vars.is_object() || vars.value("owner", "") != options_.owner ||
                    vars.value("name", "") != options_.repo || !vars.contains("number") ||
                    body.value("query", "").find("lastEditedAt") == std::string::npos)
                    return finish(200, {{"errors", {{{"message", "not the query expected"}}}}});
                const long number = vars["number"].get<long>();
                if (!st.issues.count(number))
                    return finish(200, {{"data", {{"repository", {{"issue", nullptr}}}}}});
                auto actor = [](const json& edit) {
                    const std::string by = edit["by"];
                    const bool bot = by.size() > 5 && by.compare(by.size() - 5, 5, "[bot]") == 0;
                    return json{{"login", by}, {"__typename", bot ? "Bot" : "User"}};
                };
                json issue = {{"lastEditedAt", nullptr},
                              {"editor", nullptr},
                              {"timelineItems", {{"nodes", json::array()}}}};
                if (auto e = st.body_edits.find(number); e != st.body_edits.end()) {
                    issue["lastEditedAt"] = e->second["at"];
                    issue["editor"] = actor(e->second);
                }
                if (auto e = st.title_edits.find(number); e != st.title_edits.end())
                    issue["timelineItems"]["nodes"].push_back(
                        {{"createdAt", e->second["at"]}, {"actor", actor(e->second)}});
                return finish(200, {{"data", {{"repository", {{"issue", issue}}}}}});
            }

            // The page `page` (default 1) of `per_page` (default 30) items, as GitHub pages a
            // list: by offset, with a Link header to the next, last, first and previous pages.
            // Written item by item: a copy of 100 issues and a second dump were most of this
            // server's time in bench/run github, charged to both clients.
            auto page_of = [&](const std::vector<const json*>& all) {
                const std::size_t per_page =
                    req.has_param("per_page") ? std::stoul(req.get_param_value("per_page")) : 30;
                const std::size_t page =
                    req.has_param("page") ? std::stoul(req.get_param_value("page")) : 1;
                const std::size_t pages =
                    std::max<std::size_t>(1, (all.size() + per_page - 1) / per_page);
                std::string items = "[";
                for (std::size_t i = (page - 1) * per_page;
                     i < std::min(all.size(), page * per_page); ++i)
                    items += (items.size() > 1 ? "," : "") + all[i]->dump();
                items += "]";
                auto link_to = [&](std::size_t p) {
                    std::string query;
                    for (const auto& [k, v] : req.params)
                        if (k != "page") query += k + "=" + v + "&";
                    return "<" + base_url() + path + "?" + query + "page=" + std::to_string(p) +
                           ">";
                };
                std::string link;
                if (page < pages)
                    link =
                        link_to(page + 1) + "; rel=\"next\", " + link_to(pages) + "; rel=\"last\"";
                if (page > 1)
                    link += std::string(link.empty() ? "" : ", ") + link_to(1) +
                            "; rel=\"first\", " + link_to(page - 1) + "; rel=\"prev\"";
                if (!link.empty()) res.set_header("Link", link);
                return items;
            };

            if (is("GET", "")) {
                json repo = github_example("full-repository-default-response");
                repo["name"] = options_.repo;
                repo["full_name"] = options_.owner + "/" + options_.repo;
                repo["default_branch"] = options_.default_branch;
                return finish(200, repo, "repos/get");
            }
            if (is("GET", "/issues")) {
                std::string state = req.has_param("state") ? req.get_param_value("state") : "open";
                std::vector<std::string> wanted;
                if (req.has_param("labels")) {
                    std::string all = req.get_param_value("labels");
                    for (std::size_t at = 0; at <= all.size();) {
                        auto comma = all.find(',', at);
                        wanted.push_back(all.substr(at, comma - at));
                        if (comma == std::string::npos) break;
                        at = comma + 1;
                    }
                }
                // Updated at or after `since`; newest first by creation (GitHub's default), or
                // by `sort` (updated) in `direction`.
                const std::string since =
                    req.has_param("since") ? req.get_param_value("since") : "";
                std::vector<const json*> matching;
                for (auto it = st.issues.rbegin(); it != st.issues.rend(); ++it) {
                    const json& issue = it->second;
                    if (state != "all" && issue["state"] != state) continue;
                    if (issue["updated_at"].get<std::string>() < since) continue;
                    bool ok = true;
                    for (const auto& label : wanted) {
                        ok = ok && std::any_of(issue["labels"].begin(), issue["labels"].end(),
                                               [&](const json& l) { return l["name"] == label; });
                    }
                    if (ok) matching.push_back(&issue);
                }
                if (req.has_param("sort") && req.get_param_value("sort") == "updated") {
                    const bool ascending =
                        req.has_param("direction") && req.get_param_value("direction") == "asc";
                    std::stable_sort(matching.begin(), matching.end(),
                                     [&](const json* a, const json* b) {
                                         const auto x = (*a)["updated_at"].get<std::string>(),
                                                    y = (*b)["updated_at"].get<std::string>();
                                         return ascending ? x < y : y < x;
                                     });
                }
                const std::string items = page_of(matching);
                std::string etag = etag_of(items + res.get_header_value("Link"));
                res.set_header("ETag", etag);
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish_text(200, std::move(items), nullptr, "issues/list-for-repo");
            }
            if (is("GET", R"(/issues/(\d+))")) {
                auto it = st.issues.find(std::stol(r[1]));
                if (it == st.issues.end()) return finish(404, {{"message", "Not Found"}});
                std::string etag = etag_of(it->second.dump());
                res.set_header("ETag", etag);
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish(200, it->second, "issues/get");
            }
            if (is("GET", R"(/issues/(\d+)/comments)")) {
                const long number = std::stol(r[1]);
                std::vector<const json*> visible;
                ++st.comment_lists;
                for (const auto& c : st.comments[number]) {
                    auto lag = st.visible_at.find(c["id"].get<long long>());
                    if (lag != st.visible_at.end() && lag->second > st.comment_lists) continue;
                    visible.push_back(st.listed(c));
                }
                std::string items = page_of(visible);
                std::string etag = etag_of(items + res.get_header_value("Link"));
                res.set_header("ETag", etag);
                // A comment of page 1 deleted once the page is served, before the next is
                // asked for: the next page's first comment moves onto page 1.
                const bool first_page =
                    !req.has_param("page") || req.get_param_value("page") == "1";
                if (number == st.shifting_issue && st.shifts_left > 0 && first_page &&
                    res.has_header("Link")) {
                    auto& list = st.comments[number];
                    auto filler = std::find_if(list.begin(), list.end(), [](const json& c) {
                        return c["body"].get<std::string>().rfind("<!-- cocode:claim", 0) != 0;
                    });
                    if (filler != list.end()) {
                        list.erase(filler);
                        --st.shifts_left;
                    }
                }
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish_text(200, std::move(items), nullptr, "issues/list-comments");
            }
            if (is("GET", R"(/issues/(\d+)/events)")) {
                const long number = std::stol(r[1]);
                if (!st.issues.count(number)) return finish(404, {{"message", "Not Found"}});
                std::vector<const json*> all;
                for (const auto& e : st.events[number]) all.push_back(&e);
                std::string items = page_of(all);
                std::string etag = etag_of(items + res.get_header_value("Link"));
                res.set_header("ETag", etag);
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish_text(200, std::move(items), nullptr, "issues/list-events");
            }
            if (is("POST", R"(/issues/(\d+)/comments)")) {
                long number = std::stol(r[1]);
                if (!st.issues.count(number)) return finish(404, {{"message", "Not Found"}});
                json comment =
                    st.new_comment(number, body.value("body", ""), options_.owner, options_.repo);
                if (st.list_lag > 0)
                    st.visible_at[comment["id"].get<long long>()] = st.comment_lists + st.list_lag;
                st.comments[number].push_back(comment);
                return finish(201, comment, "issues/create-comment");
            }
            if (is("GET", R"(/issues/comments)")) {
                // The repository's comments, by creation, updated at or after `since`; a
                // conditional request, as GitHub answers one (304 when the page is the same).
                const std::string since =
                    req.has_param("since") ? req.get_param_value("since") : "";
                std::vector<const json*> all;
                ++st.comment_lists;
                for (const auto& [number, list] : st.comments)
                    for (const auto& c : list) {
                        auto v = st.visible_at.find(c["id"].get<long long>());
                        if (v != st.visible_at.end() && st.comment_lists < v->second) continue;
                        const json* shown = st.listed(c);
                        if ((*shown)["updated_at"].get<std::string>() >= since)
                            all.push_back(shown);
                    }
                const bool newest_first =
                    req.has_param("direction") && req.get_param_value("direction") == "desc";
                std::sort(all.begin(), all.end(), [&](const json* a, const json* b) {
                    const auto x = (*a)["id"].get<long long>(), y = (*b)["id"].get<long long>();
                    return newest_first ? y < x : x < y;
                });
                const std::string items = page_of(all);
                const std::string etag = etag_of(items + res.get_header_value("Link"));
                res.set_header("ETag", etag);
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish_text(200, std::move(items), nullptr, "issues/list-comments-for-repo");
            }
            if (is("GET", R"(/issues/comments/(\d+))")) {
                // One comment by its id is as it is now: only lists lag.
                long long id = std::stoll(r[1]);
                for (const auto& [number, list] : st.comments)
                    for (const auto& c : list)
                        if (c["id"] == id) return finish(200, c, "issues/get-comment");
                return finish(404, {{"message", "Not Found"}});
            }
            if (is("PATCH", R"(/issues/comments/(\d+))")) {
                long long id = std::stoll(r[1]);
                for (auto& [number, list] : st.comments)
                    for (auto& c : list)
                        if (c["id"] == id) {
                            if (st.list_lag > 0) {
                                auto old = st.stale.find(id);
                                if (old == st.stale.end() || st.comment_lists >= old->second.until)
                                    st.stale[id] = {c, st.comment_lists + st.list_lag};
                                else
                                    old->second.until = st.comment_lists + st.list_lag;
                            }
                            c["body"] = body.value("body", "");
                            c["updated_at"] = st.now();
                            st.touch(number);
                            return finish(200, c, "issues/update-comment");
                        }
                return finish(404, {{"message", "Not Found"}});
            }
            if (is("DELETE", R"(/issues/comments/(\d+))")) {
                long long id = std::stoll(r[1]);
                for (auto& [number, list] : st.comments) {
                    auto it = std::find_if(list.begin(), list.end(),
                                           [&](const json& c) { return c["id"] == id; });
                    if (it == list.end()) continue;
                    list.erase(it);
                    st.touch(number);
                    return finish(204, json(), "issues/delete-comment");
                }
                return finish(404, {{"message", "Not Found"}});
            }
            if (is("POST", R"(/issues/(\d+)/labels)")) {
                auto it = st.issues.find(std::stol(r[1]));
                if (it == st.issues.end()) return finish(404, {{"message", "Not Found"}});
                for (const auto& name : body.value("labels", std::vector<std::string>{})) {
                    auto& labels = it->second["labels"];
                    if (std::none_of(labels.begin(), labels.end(),
                                     [&](const json& l) { return l["name"] == name; })) {
                        json label = github_example("label");
                        label["name"] = name;
                        label["id"] = ++st.next_id;
                        labels.push_back(label);
                        st.record_label_event(it->first, "labeled", label);
                    }
                }
                return finish(200, it->second["labels"], "issues/add-labels");
            }
            if (is("DELETE", R"(/issues/(\d+)/labels/([^/]+))")) {
                auto it = st.issues.find(std::stol(r[1]));
                std::string name = httplib::detail::decode_url(r[2], false);
                if (it == st.issues.end()) return finish(404, {{"message", "Not Found"}});
                auto& labels = it->second["labels"];
                auto found = std::find_if(labels.begin(), labels.end(),
                                          [&](const json& l) { return l["name"] == name; });
                if (found == labels.end())
                    return finish(404, {{"message", "Label does not exist"}});
                st.record_label_event(it->first, "unlabeled", *found);
                labels.erase(found);
                return finish(200, labels, "issues/remove-label");
            }
            if (is("POST", R"(/issues/comments/(\d+)/reactions)")) {
                const long long comment_id = std::stoll(r[1]);
                bool found = false;
                for (const auto& [number, list] : st.comments)
                    for (const auto& c : list) found = found || c["id"] == comment_id;
                if (!found) return finish(404, {{"message", "Not Found"}});
                std::string content = body.value("content", "");
                for (const auto& existing : st.reactions)
                    if (existing["content"] == content &&
                        existing.value("comment_id", 0LL) == comment_id)
                        return finish(200, existing, "reactions/create-for-issue-comment");
                json reaction = github_example("reaction");
                reaction["id"] = ++st.next_id;
                reaction["content"] = content;
                json stored = reaction;
                stored["comment_id"] = comment_id;  // ours, for the test; not in the response
                st.reactions.push_back(stored);
                return finish(201, reaction, "reactions/create-for-issue-comment");
            }
            if (is("GET", R"(/collaborators/([^/]+)/permission)")) {
                const std::string login = httplib::detail::decode_url(r[1], false);
                auto it = st.permissions.find(login);
                if (it == st.permissions.end()) return finish(404, {{"message", "Not Found"}});
                json answer = github_example(
                    "repository-collaborator-permission-response-if-user-has-admin-permissions");
                answer["permission"] = it->second.first;
                answer["role_name"] = it->second.second;
                answer["user"]["login"] = login;
                // GitHub's example leaves out user.role_name, which its schema requires.
                answer["user"]["role_name"] = it->second.second;
                return finish(200, answer, "repos/get-collaborator-permission-level");
            }
            if (is("POST", R"(/issues/(\d+)/reactions)")) {
                std::string content = body.value("content", "");
                for (const auto& existing : st.reactions)
                    if (existing["content"] == content)
                        return finish(200, existing, "reactions/create-for-issue");
                json reaction = github_example("reaction");
                reaction["id"] = ++st.next_id;
                reaction["content"] = content;
                st.reactions.push_back(reaction);
                return finish(201, reaction, "reactions/create-for-issue");
            }
            if (is("POST", R"(/statuses/([0-9a-f]{40}))")) {
                json status = github_example("status");
                status["id"] = ++st.next_id;
                for (const char* key : {"state", "context", "description", "target_url"})
                    if (body.contains(key)) status[key] = body[key];
                json stored = status;
                stored["sha"] = r[1].str();  // ours, to answer the list; not in the response
                st.statuses.push_back(stored);
                return finish(201, status, "repos/create-commit-status");
            }
            if (is("GET", R"(/commits/([0-9a-f]{40})/statuses)")) {
                json items = json::array();
                for (auto it = st.statuses.rbegin(); it != st.statuses.rend(); ++it)
                    if ((*it)["sha"] == r[1].str()) {
                        json item = *it;
                        item.erase("sha");
                        items.push_back(item);
                    }
                return finish(200, items, "repos/list-commit-statuses-for-ref");
            }
            if (is("POST", "/labels")) {
                json label = github_example("label");
                label["id"] = ++st.next_id;
                label["name"] = body.value("name", "");
                label["color"] = body.value("color", "");
                return finish(201, label, "issues/create-label");
            }
            if (is("GET", "/pulls")) {
                json items = json::array();
                std::string head = req.has_param("head") ? req.get_param_value("head") : "";
                const std::string state =
                    req.has_param("state") ? req.get_param_value("state") : "open";
                // Newest first, as GitHub lists them unless asked otherwise.
                for (auto it = st.pulls.rbegin(); it != st.pulls.rend(); ++it) {
                    const json& pr = *it;
                    if (!head.empty() &&
                        options_.owner + ":" + pr["head"]["ref"].get<std::string>() != head)
                        continue;
                    if (state != "all" && pr["state"] != state) continue;
                    json item = github_example("pull-request-simple-items");
                    for (const char* key :
                         {"id", "number", "title", "state", "draft", "html_url", "head", "base",
                          "created_at", "updated_at", "closed_at", "merged_at", "merge_commit_sha"})
                        item[key] = pr[key];
                    items.push_back(item);
                }
                const std::string etag = etag_of(items.dump());
                res.set_header("ETag", etag);
                if (req.get_header_value("If-None-Match") == etag)
                    return finish(304, json(), "", false);
                return finish(200, items, "pulls/list");
            }
            if (is("GET", R"(/pulls/(\d+)/reviews)")) {
                std::vector<const json*> all;
                for (const auto& review : st.reviews[std::stol(r[1])]) all.push_back(&review);
                return finish_text(200, page_of(all), nullptr, "pulls/list-reviews");
            }
            if (is("GET", R"(/pulls/(\d+)/comments)")) {
                std::vector<const json*> all;
                for (const auto& comment : st.review_comments[std::stol(r[1])])
                    all.push_back(&comment);
                return finish_text(200, page_of(all), nullptr, "pulls/list-review-comments");
            }
            if (is("POST", R"(/pulls/(\d+)/comments/(\d+)/replies)")) {
                auto& thread = st.review_comments[std::stol(r[1])];
                const long long to = std::stoll(r[2]);
                auto parent = std::find_if(thread.begin(), thread.end(),
                                           [&](const json& c) { return c["id"] == to; });
                if (parent == thread.end()) return finish(404, {{"message", "Not Found"}});
                json reply = *parent;
                reply["id"] = ++st.next_id;
                reply["in_reply_to_id"] = to;
                reply["body"] = body.value("body", "");
                reply["user"]["login"] = "cocode[bot]";
                reply["created_at"] = reply["updated_at"] = st.now();
                thread.push_back(reply);
                return finish(201, reply, "pulls/create-reply-for-review-comment");
            }
            if (is("GET", R"(/commits/([0-9a-f]{40})/check-runs)")) {
                json runs = json::array();
                for (const auto& run : st.check_runs)
                    if (run["head_sha"] == r[1].str()) runs.push_back(run);
                return finish(200, {{"total_count", runs.size()}, {"check_runs", runs}},
                              "checks/list-for-ref");
            }
            if (is("GET", R"(/actions/jobs/(\d+))")) {
                auto job = st.jobs.find(std::stoll(r[1]));
                if (job == st.jobs.end()) return finish(404, {{"message", "Not Found"}});
                return finish(200, job->second, "actions/get-job-for-workflow-run");
            }
            if (is("GET", R"(/actions/jobs/(\d+)/logs)")) {
                if (!st.job_logs.count(std::stoll(r[1]))) return finish(410, {{"message", "Gone"}});
                res.set_header("Location", "https://localhost:" + std::to_string(port_) +
                                               "/job-logs/" + r[1].str() + ".txt");
                return finish(302, json(), "actions/download-job-logs-for-workflow-run");
            }
            if (is("POST", "/pulls")) {
                for (const auto& pr : st.pulls)
                    if (pr["head"]["ref"] == body.value("head", ""))
                        return finish(
                            422,
                            {{"message", "Validation Failed"},
                             {"errors",
                              {{{"resource", "PullRequest"},
                                {"code", "custom"},
                                {"message", "A pull request already exists for " + options_.owner +
                                                ":" + body.value("head", "") + "."}}}}});
                return finish(201,
                              put_pull(body.value("title", ""), body.value("body", ""),
                                       body.value("draft", false), body.value("head", ""),
                                       body.value("base", "")),
                              "pulls/create");
            }
            if (is("GET", R"(/pulls/(\d+))")) {
                for (const auto& pr : st.pulls)
                    if (pr["number"] == std::stol(r[1])) return finish(200, pr, "pulls/get");
                return finish(404, {{"message", "Not Found"}});
            }
            if (is("POST", R"(/pulls/comments/(\d+)/reactions)")) {
                const long long comment_id = std::stoll(r[1]);
                bool found = false;
                for (const auto& [number, list] : st.review_comments)
                    for (const auto& c : list) found = found || c["id"] == comment_id;
                if (!found) return finish(404, {{"message", "Not Found"}});
                const std::string content = body.value("content", "");
                for (const auto& existing : st.reactions)
                    if (existing["content"] == content &&
                        existing.value("review_comment_id", 0LL) == comment_id)
                        return finish(200, existing,
                                      "reactions/create-for-pull-request-review-comment");
                json reaction = github_example("reaction");
                reaction["id"] = ++st.next_id;
                reaction["content"] = content;
                json stored = reaction;
                stored["review_comment_id"] = comment_id;  // ours, for the test
                st.reactions.push_back(stored);
                return finish(201, reaction, "reactions/create-for-pull-request-review-comment");
            }
            if (is("PATCH", R"(/pulls/(\d+))")) {
                for (auto& pr : st.pulls)
                    if (pr["number"] == std::stol(r[1])) {
                        for (const char* key : {"title", "body"})
                            if (body.contains(key)) pr[key] = body[key];
                        return finish(200, pr, "pulls/update");
                    }
                return finish(404, {{"message", "Not Found"}});
            }
            return finish(404, {{"message", "Not Found"}});
        };
        route();

        // The request that starts an outage is answered as usual; every one after it is not.
        if (st.outage_trigger &&
            (st.outage_trigger->method.empty() || st.outage_trigger->method == req.method) &&
            full_path.find(st.outage_trigger->path_contains) != std::string::npos &&
            req.body.find(st.outage_body) != std::string::npos && res.status < 400) {
            st.outage_trigger.reset();
            st.down = true;
        }

        if (fault && fault->kind == Fault::Kind::apply_then_respond) {
            res.headers.clear();
            for (const auto& [k, v] : fault->headers) res.set_header(k, v);
            res.status = fault->status;
            res.set_content(fault->body, "application/json");
            record.status = fault->status;
        } else if (fault && fault->kind == Fault::Kind::reset_mid_body) {
            auto content = std::make_shared<std::string>(res.body);
            res.body.clear();
            res.set_content_provider(
                content->size(), "application/json",
                [content](std::size_t, std::size_t, httplib::DataSink& sink) {
                    sink.write(content->data(), content->size() / 2);
                    return false;  // abort: the client sees the connection end mid-body
                });
        }
    };
    const std::string any = ".*";
    // As GitHub's front ends (and nginx's defaults): no Nagle delay on small answers, and
    // many requests on one kept-alive connection (httplib's own defaults are Nagle and 5).
    // With Nagle a short answer written while the TLS session tickets are unacknowledged
    // waits out the client's 40 ms delayed ACK.
    s.http->set_tcp_nodelay(true);
    s.http->set_keep_alive_max_count(100);
    s.http->Get(any, handler);
    s.http->Post(any, handler);
    s.http->Patch(any, handler);
    s.http->Delete(any, handler);
    s.http->Put(any, handler);

    port_ = start_on_loopback(*s.http, s.thread, "fake GitHub");
}

FakeGitHub::~FakeGitHub() {
    {
        std::lock_guard lock(server_->mutex);
        server_->ending = true;
    }
    server_->release.notify_all();
    server_->http->stop();
    if (server_->thread.joinable()) server_->thread.join();
}

int FakeGitHub::held() const {
    std::lock_guard lock(server_->mutex);
    return server_->held;
}

std::string FakeGitHub::origin() const {
    return std::string(options_.tls.certificate.empty() ? "http" : "https") +
           "://127.0.0.1:" + std::to_string(port_);
}

std::string FakeGitHub::base_url() const { return origin() + options_.prefix; }

void FakeGitHub::add_issue(long number, const std::string& title, const std::string& body,
                           const std::vector<std::string>& labels, const std::string& state,
                           bool pull_request, const std::string& author) {
    std::lock_guard lock(server_->mutex);
    put_issue(number, title, body, labels, state, pull_request);
    if (!author.empty()) {
        json& user = server_->issues[number]["user"];
        user["login"] = author;
        const bool bot = author.size() > 5 && author.compare(author.size() - 5, 5, "[bot]") == 0;
        user["type"] = bot ? "Bot" : "User";
    }
}

long FakeGitHub::add_pull(const std::string& title, const std::string& head,
                          const std::string& head_repository) {
    std::lock_guard lock(server_->mutex);
    json pr = put_pull(title, "", true, head, "main");
    if (!head_repository.empty())
        server_->pulls.back()["head"]["repo"]["full_name"] = head_repository;
    return pr["number"].get<long>();
}

// A pull request opened, with the lock held: numbered from 100 and, as on GitHub, where issues
// and pull requests share one sequence, never with an issue's number.
json FakeGitHub::put_pull(const std::string& title, const std::string& body, bool draft,
                          const std::string& head, const std::string& base) {
    json pr = github_example("pull-request");
    pr["id"] = ++server_->next_id;
    long number = static_cast<long>(server_->pulls.size()) + 100;
    if (!server_->issues.empty()) number = std::max(number, server_->issues.rbegin()->first + 1);
    pr["number"] = number;
    pr["title"] = title;
    pr["body"] = body;
    pr["draft"] = draft;
    pr["head"]["ref"] = head;
    pr["head"]["repo"]["full_name"] = options_.owner + "/" + options_.repo;
    pr["base"]["ref"] = base;
    pr["state"] = "open";
    pr["created_at"] = pr["updated_at"] = server_->now();
    pr["closed_at"] = pr["merged_at"] = pr["merge_commit_sha"] = nullptr;
    pr["merged"] = false;
    pr["html_url"] = "https://github.com/" + options_.owner + "/" + options_.repo + "/pull/" +
                     std::to_string(pr["number"].get<long>());
    server_->pulls.push_back(pr);
    // On GitHub a pull request is an issue too: labels and comments go through the issues API.
    put_issue(pr["number"].get<long>(), title, body, {}, "open", true);
    return pr;
}

// add_issue with the lock held (a pull request opened through the API is an issue too).
void FakeGitHub::put_issue(long number, const std::string& title, const std::string& body,
                           const std::vector<std::string>& labels, const std::string& state,
                           bool pull_request) {
    json issue = github_example("issue");
    const std::string repo_url =
        "https://api.github.com/repos/" + options_.owner + "/" + options_.repo;
    issue["id"] = ++server_->next_id;
    issue["number"] = number;
    issue["title"] = title;
    issue["body"] = body;
    issue["state"] = state;
    issue["url"] = repo_url + "/issues/" + std::to_string(number);
    issue["html_url"] = "https://github.com/" + options_.owner + "/" + options_.repo + "/issues/" +
                        std::to_string(number);
    issue["created_at"] = issue["updated_at"] = server_->now();
    issue["labels"] = json::array();
    for (const auto& name : labels) {
        json label = github_example("label");
        label["name"] = name;
        label["id"] = ++server_->next_id;
        issue["labels"].push_back(label);
        server_->record_label_event(number, "labeled", label);
    }
    if (pull_request) {
        issue["pull_request"] = {{"url", repo_url + "/pulls/" + std::to_string(number)},
                                 {"html_url", issue["html_url"]},
                                 {"diff_url", issue["html_url"].get<std::string>() + ".diff"},
                                 {"patch_url", issue["html_url"].get<std::string>() + ".patch"}};
    } else {
        issue.erase("pull_request");
    }
    server_->issues[number] = issue;
}

long long FakeGitHub::add_comment(long number, const std::string& body, const std::string& author,
                                  const std::string& association) {
    std::lock_guard lock(server_->mutex);
    json comment = server_->new_comment(number, body, options_.owner, options_.repo);
    if (!author.empty()) comment["user"]["login"] = author;
    if (!association.empty()) comment["author_association"] = association;
    server_->comments[number].push_back(comment);
    return comment["id"].get<long long>();
}

void FakeGitHub::set_label(long number, const std::string& name, bool on,
                           const std::string& actor) {
    std::lock_guard lock(server_->mutex);
    json& labels = server_->issues.at(number)["labels"];
    auto found = std::find_if(labels.begin(), labels.end(),
                              [&](const json& l) { return l["name"] == name; });
    if (on && found == labels.end()) {
        json label = github_example("label");
        label["name"] = name;
        label["id"] = ++server_->next_id;
        labels.push_back(label);
        server_->record_label_event(number, "labeled", label, actor);
    } else if (!on && found != labels.end()) {
        server_->record_label_event(number, "unlabeled", *found, actor);
        labels.erase(found);
    }
}

void FakeGitHub::edit_issue(long number, const std::optional<std::string>& title,
                            const std::optional<std::string>& body, const std::string& editor) {
    std::lock_guard lock(server_->mutex);
    json& issue = server_->issues.at(number);
    const json edit = {{"at", server_->now()}, {"by", editor}};
    if (title && *title != issue["title"].get<std::string>()) {
        issue["title"] = *title;
        server_->title_edits[number] = edit;
    }
    if (body && *body != issue.value("body", std::string())) {
        issue["body"] = *body;
        server_->body_edits[number] = edit;
    }
    issue["updated_at"] = edit["at"];
}

void FakeGitHub::advance_clock(std::chrono::seconds by) {
    std::lock_guard lock(server_->mutex);
    server_->clock_offset += static_cast<std::time_t>(by.count());
}

void FakeGitHub::inject(Fault fault) {
    std::lock_guard lock(server_->mutex);
    server_->faults.push_back(std::move(fault));
}

void FakeGitHub::go_down_after(const std::string& method, const std::string& path_contains,
                               const std::string& body_contains) {
    std::lock_guard lock(server_->mutex);
    Fault trigger;
    trigger.method = method;
    trigger.path_contains = path_contains;
    server_->outage_trigger = trigger;
    server_->outage_body = body_contains;
}

bool FakeGitHub::down() const {
    std::lock_guard lock(server_->mutex);
    return server_->down;
}

void FakeGitHub::come_back() {
    std::lock_guard lock(server_->mutex);
    server_->down = false;
}

void FakeGitHub::delete_between_pages(long number, int times) {
    std::lock_guard lock(server_->mutex);
    server_->shifting_issue = number;
    server_->shifts_left = times;
}

int FakeGitHub::shifts_left() const {
    std::lock_guard lock(server_->mutex);
    return server_->shifts_left;
}

void FakeGitHub::lag_comment_lists(int lists) {
    std::lock_guard lock(server_->mutex);
    server_->list_lag = lists;
}

void FakeGitHub::exhaust_rate_limit(std::chrono::seconds reset_in) {
    std::lock_guard lock(server_->mutex);
    server_->remaining = 0;
    server_->reset_at = std::time(nullptr) + static_cast<std::time_t>(reset_in.count());
}

std::vector<json> FakeGitHub::comments_of(long number) const {
    std::lock_guard lock(server_->mutex);
    auto it = server_->comments.find(number);
    return it == server_->comments.end() ? std::vector<json>{} : it->second;
}

std::vector<std::string> FakeGitHub::labels_of(long number) const {
    std::lock_guard lock(server_->mutex);
    std::vector<std::string> names;
    for (const auto& l : server_->issues.at(number)["labels"]) names.push_back(l["name"]);
    return names;
}

std::vector<json> FakeGitHub::events_of(long number) const {
    std::lock_guard lock(server_->mutex);
    auto it = server_->events.find(number);
    return it == server_->events.end() ? std::vector<json>{} : it->second;
}

std::vector<json> FakeGitHub::statuses() const {
    std::lock_guard lock(server_->mutex);
    return server_->statuses;
}
long long FakeGitHub::add_review(long pull, const std::string& login, const std::string& state,
                                 const std::string& body, const std::string& commit_id, bool bot) {
    std::lock_guard lock(server_->mutex);
    json review = github_example("pull-request-review-items");
    review["id"] = ++server_->next_id;
    review["user"]["login"] = login;
    review["user"]["type"] = bot ? "Bot" : "User";
    review["state"] = state;
    review["body"] = body;
    review["submitted_at"] = server_->now();
    if (!commit_id.empty()) review["commit_id"] = commit_id;
    server_->reviews[pull].push_back(review);
    return review["id"].get<long long>();
}

long long FakeGitHub::add_review_comment(long pull, long long review, const std::string& login,
                                         const std::string& path, int line,
                                         const std::string& diff_hunk, const std::string& body,
                                         long long in_reply_to) {
    std::lock_guard lock(server_->mutex);
    json comment = github_example("pull-request-review-comment-items");
    comment["id"] = ++server_->next_id;
    comment["pull_request_review_id"] = review;
    comment["user"]["login"] = login;
    comment["path"] = path;
    comment["original_line"] = line > 0 ? line : 1;
    if (line > 0) {
        comment["line"] = line;
    } else {  // outdated: GitHub's schema leaves out where the comment no longer is
        comment.erase("line");
        comment.erase("position");
    }
    comment["diff_hunk"] = diff_hunk;
    comment["body"] = body;
    comment["created_at"] = comment["updated_at"] = server_->now();
    if (in_reply_to)
        comment["in_reply_to_id"] = in_reply_to;
    else
        comment.erase("in_reply_to_id");
    server_->review_comments[pull].push_back(comment);
    return comment["id"].get<long long>();
}

long long FakeGitHub::add_check_run(const std::string& sha, const std::string& name,
                                    const std::string& conclusion,
                                    const std::vector<std::pair<std::string, std::string>>& steps,
                                    const std::string& log) {
    std::lock_guard lock(server_->mutex);
    const long long id = ++server_->next_id;
    json run = examples().at("check-run-paginated").at("value").at("check_runs").at(0);
    run["id"] = id;
    run["head_sha"] = sha;
    run["name"] = name;
    run["status"] = "completed";
    run["conclusion"] = conclusion;
    run["app"]["slug"] = "github-actions";
    server_->check_runs.push_back(run);
    json job = github_example("job");
    job["id"] = id;
    job["head_sha"] = sha;
    job["name"] = name;
    job["conclusion"] = conclusion;
    job["steps"] = json::array();
    int number = 0;
    for (const auto& [step, outcome] : steps)
        job["steps"].push_back({{"name", step},
                                {"status", "completed"},
                                {"conclusion", outcome},
                                {"number", ++number},
                                {"started_at", server_->now()},
                                {"completed_at", server_->now()}});
    server_->jobs[id] = job;
    if (!log.empty()) server_->job_logs[id] = log;  // none: expired, as GitHub's do
    return id;
}

void FakeGitHub::set_pull_head(long number, const std::string& sha) {
    std::lock_guard lock(server_->mutex);
    for (auto& pr : server_->pulls)
        if (pr["number"] == number) pr["head"]["sha"] = sha;
}

void FakeGitHub::merge_pull(long number, const std::string& merge_commit) {
    std::lock_guard lock(server_->mutex);
    for (auto& pr : server_->pulls)
        if (pr["number"] == number) {
            pr["state"] = "closed";
            pr["merged"] = true;
            pr["closed_at"] = pr["merged_at"] = pr["updated_at"] = server_->now();
            pr["merge_commit_sha"] = merge_commit;
            server_->issues[number]["state"] = "closed";
        }
}

void FakeGitHub::close_pull(long number) {
    std::lock_guard lock(server_->mutex);
    for (auto& pr : server_->pulls)
        if (pr["number"] == number) {
            pr["state"] = "closed";
            pr["closed_at"] = pr["updated_at"] = server_->now();
            server_->issues[number]["state"] = "closed";
        }
}

std::vector<json> FakeGitHub::review_comments_of(long pull) const {
    std::lock_guard lock(server_->mutex);
    auto it = server_->review_comments.find(pull);
    return it == server_->review_comments.end() ? std::vector<json>{} : it->second;
}

std::vector<json> FakeGitHub::pulls() const {
    std::lock_guard lock(server_->mutex);
    return server_->pulls;
}
void FakeGitHub::set_permission(const std::string& login, const std::string& permission,
                                const std::string& role_name) {
    std::lock_guard<std::mutex> lock(server_->mutex);
    server_->permissions[login] = {permission, role_name};
}

std::vector<json> FakeGitHub::reactions() const {
    std::lock_guard lock(server_->mutex);
    return server_->reactions;
}
std::vector<RecordedRequest> FakeGitHub::requests() const {
    std::lock_guard lock(server_->mutex);
    return server_->requests;
}
long FakeGitHub::rate_remaining() const {
    std::lock_guard lock(server_->mutex);
    return server_->remaining;
}
int FakeGitHub::tokens_minted() const {
    std::lock_guard lock(server_->mutex);
    return static_cast<int>(server_->installation_tokens.size());
}
std::string FakeGitHub::last_jwt_claims() const {
    std::lock_guard lock(server_->mutex);
    return server_->last_jwt_claims;
}

}  // namespace cocode::test
