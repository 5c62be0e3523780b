// Who we are to GitHub. A token from the environment or `gh auth token`, or a GitHub App whose
// installation token we mint and refresh. Tokens live only in memory: they never appear in an
// error, a log line or a file we write (the cache is keyed by a hash of the credential).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "github/url.h"

namespace cocode::github {

class HttpClient;

class Auth {
  public:
    virtual ~Auth() = default;
    // The value of the Authorization header for the next request ("" for none). May make a
    // request of its own through `client` (an App minting its installation token).
    virtual Result<std::string> authorization(HttpClient& client) = 0;
    // Where the credential came from, for messages: "GITHUB_TOKEN", "gh auth token", ...
    virtual std::string source() const = 0;
    // Every secret this Auth holds, for redaction of anything we echo.
    virtual std::vector<std::string> secrets() const = 0;
};

// A fixed token, sent as `token <value>` (or `Bearer <value>` when `bearer`).
std::unique_ptr<Auth> token_auth(std::string token, std::string source, bool bearer = false);

// No credentials at all: anonymous requests (60 an hour on github.com).
std::unique_ptr<Auth> anonymous_auth();

struct AppCredentials {
    std::string app_id;                      // COCODE_GITHUB_APP_ID
    std::string installation_id;             // COCODE_GITHUB_APP_INSTALLATION_ID
    std::filesystem::path private_key_path;  // COCODE_GITHUB_APP_PRIVATE_KEY_PATH (PEM)
};

// GitHub App auth: a JWT signed RS256 with the App's key is exchanged for an installation
// token (POST /app/installations/{id}/access_tokens), reused until five minutes before it
// expires, then minted again. Fails early (usage) when the key cannot be read or parsed.
Result<std::unique_ptr<Auth>> app_auth(const AppCredentials& credentials);

// A JWT for the App, `iat` 60 s in the past (clock drift), `exp` 9 minutes ahead of `now`.
// Exposed for tests, which verify the signature with the public key.
Result<std::string> make_app_jwt(const std::string& app_id, const std::string& private_key_pem,
                                 std::chrono::system_clock::time_point now);

// The credentials to use, in this order:
//   1. a GitHub App, when COCODE_GITHUB_APP_ID is set (with _INSTALLATION_ID and
//      _PRIVATE_KEY_PATH, else a usage error naming the missing one);
//   2. GITHUB_TOKEN, 3. GH_TOKEN;
//   4. `gh auth token --hostname <host>` when gh is installed and logged in;
//   5. anonymous.
Result<std::unique_ptr<Auth>> resolve_auth(const BaseUrl& api);

}  // namespace cocode::github
