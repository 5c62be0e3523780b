// GitHub on loopback: a cpp-httplib SSLServer on 127.0.0.1 that serves the REST operations
// cocode uses, from state the test sets up, with responses built from GitHub's own OpenAPI
// examples (tests/openapi/github-subset.json). It injects the faults GitHub really produces
// (5xx, resets mid-body, primary and secondary rate limits, mutations that land but whose
// answer is lost) and records every exchange for the OpenAPI check.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tls.h"

namespace cocode::test {

// The token the loopback GitHub accepts. The suite's last test scans everything the tests
// wrote for it (and for the fixtures server's token): it must never appear.
inline constexpr char kTestToken[] = "ghp_cocodeLoopbackTestToken0123456789abc";

struct Fault {
    enum class Kind {
        respond,             // answer with status/headers/body; nothing is processed
        reset_mid_body,      // process, then cut the connection halfway through the body
        apply_then_respond,  // process (a mutation lands), then answer status instead
        hold,                // answer nothing until the server ends (a GitHub that hangs)
    };
    std::string method;         // "" = any
    std::string path_contains;  // matched against the path after the API prefix
    Kind kind = Kind::respond;
    int status = 502;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body = R"({"message":"Server Error"})";
    int times = 1;
};

struct RecordedRequest {
    std::string method;
    std::string path;  // after the prefix, with the query
    std::string authorization;
    std::string if_none_match;
    std::string body;
    int status = 0;
    std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();  // received
};

class FakeGitHub {
  public:
    struct Options {
        CertificateFiles tls;  // empty certificate: plain HTTP
        std::string token;     // accepted as `Authorization: token <token>`
        std::string prefix;    // "" or "/api/v3" (GitHub Enterprise)
        std::string owner = "octo-org";
        std::string repo = "demo";
        std::string default_branch = "main";
        std::string app_public_key;  // PEM; enables installation token minting
        std::string app_id;
        std::optional<std::filesystem::path> exchanges;  // JSONL for tests/openapi/validate.mjs
        long rate_limit = 5000;  // requests an hour (a token's; an App's installation has more)
        std::string token_login = "octocat";  // whom `token` acts as (GET /user)
    };

    explicit FakeGitHub(Options options);
    ~FakeGitHub();
    FakeGitHub(const FakeGitHub&) = delete;
    FakeGitHub& operator=(const FakeGitHub&) = delete;

    std::string origin() const;    // https://127.0.0.1:<port>
    std::string base_url() const;  // origin() + prefix
    int port() const { return port_; }

    // `author` opened it (GitHub's example's user, octocat, otherwise).
    void add_issue(long number, const std::string& title, const std::string& body,
                   const std::vector<std::string>& labels, const std::string& state = "open",
                   bool pull_request = false, const std::string& author = "");
    // Returns the comment's id; `author` is its user's login (GitHub's example's otherwise),
    // `association` its author_association (the example's, COLLABORATOR, otherwise).
    long long add_comment(long number, const std::string& body, const std::string& author = "",
                          const std::string& association = "");
    // A person adds (on) or removes a label: the issue's labels and its events change. `actor`
    // is who did it (GitHub's example's, octocat, an admin here, otherwise; a login ending in
    // [bot] is a Bot's account).
    void set_label(long number, const std::string& name, bool on, const std::string& actor = "");
    // `editor` changes the issue's title and/or body, as on GitHub's page: its REST issue says
    // the new text, its GraphQL Issue who edited the body (editor, lastEditedAt) and renamed
    // the title (a RenamedTitleEvent), and when.
    void edit_issue(long number, const std::optional<std::string>& title,
                    const std::optional<std::string>& body, const std::string& editor);
    // GitHub's clock (its `Date` header, the times it stamps on comments and events) moves
    // ahead by `by`: leases expire without the test waiting for them.
    void advance_clock(std::chrono::seconds by);
    void inject(Fault fault);
    // Listings of comments lag behind writes: a new comment shows only from the `lists`-th
    // listing after it was made (as GitHub's replicas can), never before an older one, and an
    // edited one shows as it was before its first lagging edit until the `lists`-th listing
    // after its last.
    void lag_comment_lists(int lists);
    // An outage: the first request matching `method`, a path containing `path_contains` and a
    // body containing `body_contains` is processed and answered as usual, and every request
    // after it is answered 502 until come_back().
    void go_down_after(const std::string& method, const std::string& path_contains,
                       const std::string& body_contains);
    bool down() const;
    void come_back();
    // Comment lists shift under a reader, as GitHub's offset paging does: the next `times`
    // times page 1 of issue `number`'s comments is served (with a page after it), its oldest
    // comment that is not a claim is deleted before the next page is asked for.
    void delete_between_pages(long number, int times);
    int shifts_left() const;
    // x-ratelimit-remaining drops to 0 until `reset_in` has passed.
    void exhaust_rate_limit(std::chrono::seconds reset_in);

    // What GET /collaborators/{login}/permission answers; a login never set is 404.
    void set_permission(const std::string& login, const std::string& permission,
                        const std::string& role_name);
    // A review of pull request `pull` (state APPROVED, CHANGES_REQUESTED, COMMENTED), and a
    // comment of it on `path` at `line` (0: outdated, its lines changed since) with its diff
    // hunk, replying to `in_reply_to` (a thread) when given: their ids.
    // `bot`: its user is of GitHub's type Bot whatever its login (Copilot's reviews are).
    long long add_review(long pull, const std::string& login, const std::string& state,
                         const std::string& body, const std::string& commit_id = "",
                         bool bot = false);
    long long add_review_comment(long pull, long long review, const std::string& login,
                                 const std::string& path, int line, const std::string& diff_hunk,
                                 const std::string& body, long long in_reply_to = 0);
    // A GitHub Actions job on commit `sha`, as its check run: its steps (name, conclusion) and
    // its log, which GitHub serves from another host (here localhost rather than 127.0.0.1);
    // an empty log is one that has expired (410).
    long long add_check_run(const std::string& sha, const std::string& name,
                            const std::string& conclusion,
                            const std::vector<std::pair<std::string, std::string>>& steps,
                            const std::string& log);
    // A pull request from `head` (a branch of `head_repository`, default this repository)
    // into main, as if opened: its number.
    long add_pull(const std::string& title, const std::string& head,
                  const std::string& head_repository = "");
    // Where pull request `number`'s branch is, as GitHub would know it after a push.
    void set_pull_head(long number, const std::string& sha);
    // Pull request `number` merged now as `merge_commit` (a commit the test put on the base),
    // or closed unmerged; both close it, as GitHub does.
    void merge_pull(long number, const std::string& merge_commit);
    void close_pull(long number);
    std::vector<nlohmann::json> review_comments_of(long pull) const;  // replies included
    std::vector<nlohmann::json> comments_of(long number) const;
    std::vector<std::string> labels_of(long number) const;
    std::vector<nlohmann::json> events_of(long number) const;  // labeled / unlabeled
    std::vector<nlohmann::json> statuses() const;
    std::vector<nlohmann::json> pulls() const;
    std::vector<nlohmann::json> reactions() const;
    std::vector<RecordedRequest> requests() const;
    // How many requests a `hold` fault holds now.
    int held() const;
    long rate_remaining() const;
    int tokens_minted() const;
    std::string last_jwt_claims() const;  // the verified claims of the last App JWT

  private:
    void put_issue(long number, const std::string& title, const std::string& body,
                   const std::vector<std::string>& labels, const std::string& state,
                   bool pull_request);
    nlohmann::json put_pull(const std::string& title, const std::string& body, bool draft,
                            const std::string& head, const std::string& base);
    struct Server;
    Options options_;
    std::unique_ptr<Server> server_;
    int port_ = 0;
};

// Options for a loopback GitHub over TLS that accepts kTestToken and, under
// COCODE_TEST_SCRATCH, records its exchanges for the OpenAPI check.
FakeGitHub::Options loopback_options(std::string prefix = "");

// The loopback GitHub's TLS material, made once per test program.
struct LoopbackTls {
    std::filesystem::path dir;
    CertificateFiles files;
};
const LoopbackTls& loopback_tls();

// GitHub's own example of `name` from its OpenAPI description (tests/openapi/github-subset.json,
// components/examples; the first item of a list), mended where it breaks GitHub's schema.
nlohmann::json github_example(const std::string& name);

}  // namespace cocode::test
