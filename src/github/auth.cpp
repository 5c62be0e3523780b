#include "github/auth.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/files.h"
#include "core/redact.h"
#include "github/http.h"
#include "proc/command.h"

namespace cocode::github {
namespace {

using json = nlohmann::json;

class TokenAuth final : public Auth {
  public:
    TokenAuth(std::string token, std::string source, bool bearer)
        : token_(std::move(token)), source_(std::move(source)), bearer_(bearer) {
        remember_secret(token_);
    }
    Result<std::string> authorization(HttpClient&) override {
        return std::string(bearer_ ? "Bearer " : "token ") + token_;
    }
    std::string source() const override { return source_; }
    std::vector<std::string> secrets() const override { return {token_}; }

  private:
    std::string token_;
    std::string source_;
    bool bearer_;
};

class AnonymousAuth final : public Auth {
  public:
    Result<std::string> authorization(HttpClient&) override { return std::string{}; }
    std::string source() const override { return "anonymous"; }
    std::vector<std::string> secrets() const override { return {}; }
};

class AppAuth final : public Auth {
  public:
    AppAuth(AppCredentials credentials, std::string key_pem)
        : credentials_(std::move(credentials)), key_pem_(std::move(key_pem)) {}

    Result<std::string> authorization(HttpClient& client) override {
        auto now = std::chrono::system_clock::now();
        if (token_.empty() || now + std::chrono::minutes(5) >= expires_) {
            auto minted = mint(client, now);
            if (!minted.ok()) return std::move(minted).error();
        }
        return "token " + token_;
    }
    std::string source() const override {
        return "GitHub App " + credentials_.app_id + " (installation " +
               credentials_.installation_id + ")";
    }
    std::vector<std::string> secrets() const override {
        return token_.empty() ? std::vector<std::string>{} : std::vector<std::string>{token_};
    }

  private:
    Result<void> mint(HttpClient& client, std::chrono::system_clock::time_point now) {
        auto jwt = make_app_jwt(credentials_.app_id, key_pem_, now);
        if (!jwt.ok()) return std::move(jwt).error();
        const std::string path =
            "/app/installations/" + credentials_.installation_id + "/access_tokens";
        auto response =
            client.request_with_authorization("POST", path, std::nullopt, "Bearer " + jwt.value());
        if (!response.ok()) return std::move(response).error();
        if (response->status != 201 && response->status != 200)
            return response_error("POST", path, response.value(), *this);
        auto body = json::parse(response->body, nullptr, false);
        if (!body.is_object() || !body.contains("token") || !body["token"].is_string())
            return Error::general("GitHub: POST " + path + ": no token in the response");
        token_ = body["token"].get<std::string>();
        remember_secret(token_);
        // expires_at is an ISO 8601 UTC time; without one, assume GitHub's hour.
        expires_ = now + std::chrono::minutes(60);
        if (body.contains("expires_at") && body["expires_at"].is_string()) {
            std::tm tm{};
            const std::string text = body["expires_at"].get<std::string>();
            if (strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr)
                expires_ = std::chrono::system_clock::from_time_t(timegm(&tm));
        }
        return {};
    }

    AppCredentials credentials_;
    std::string key_pem_;
    std::string token_;
    std::chrono::system_clock::time_point expires_{};
};

}  // namespace

std::unique_ptr<Auth> token_auth(std::string token, std::string source, bool bearer) {
    return std::make_unique<TokenAuth>(std::move(token), std::move(source), bearer);
}

std::unique_ptr<Auth> anonymous_auth() { return std::make_unique<AnonymousAuth>(); }

Result<std::string> make_app_jwt(const std::string& app_id, const std::string& private_key_pem,
                                 std::chrono::system_clock::time_point now) {
    using std::chrono::seconds;
    long long iat = std::chrono::duration_cast<seconds>(now.time_since_epoch()).count() - 60;
    json header = {{"alg", "RS256"}, {"typ", "JWT"}};
    json claims = {{"iat", iat}, {"exp", iat + 60 + 540}, {"iss", app_id}};
    std::string signing_input = base64url(header.dump()) + "." + base64url(claims.dump());

    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())),
        BIO_free);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
        EVP_PKEY_free);
    if (!key || EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA)
        return Error::usage("GitHub App private key: not an RSA private key in PEM form");
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    std::size_t size = 0;
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &size,
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) != 1)
        return Error::general("GitHub App JWT: signing failed");
    std::string signature(size, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                       reinterpret_cast<const unsigned char*>(signing_input.data()),
                       signing_input.size()) != 1)
        return Error::general("GitHub App JWT: signing failed");
    signature.resize(size);
    return signing_input + "." + base64url(signature);
}

Result<std::unique_ptr<Auth>> app_auth(const AppCredentials& credentials) {
    auto pem = read_file(credentials.private_key_path, 1 << 20);
    if (!pem.ok())
        return Error::usage("COCODE_GITHUB_APP_PRIVATE_KEY_PATH: " + pem.error().message);
    // Sign once now, so that a bad key is reported before any request.
    auto probe = make_app_jwt(credentials.app_id, pem.value(), std::chrono::system_clock::now());
    if (!probe.ok())
        return Error::usage("COCODE_GITHUB_APP_PRIVATE_KEY_PATH: " +
                            credentials.private_key_path.string() + ": " + probe.error().message);
    return std::unique_ptr<Auth>(std::make_unique<AppAuth>(credentials, std::move(pem).value()));
}

Result<std::unique_ptr<Auth>> resolve_auth(const BaseUrl& api) {
    if (auto app_id = getenv_string("COCODE_GITHUB_APP_ID")) {
        AppCredentials app{*app_id, {}, {}};
        auto installation = getenv_string("COCODE_GITHUB_APP_INSTALLATION_ID");
        auto key = getenv_string("COCODE_GITHUB_APP_PRIVATE_KEY_PATH");
        if (!installation)
            return Error::usage(
                "COCODE_GITHUB_APP_ID is set but COCODE_GITHUB_APP_INSTALLATION_ID is not");
        if (!key)
            return Error::usage(
                "COCODE_GITHUB_APP_ID is set but COCODE_GITHUB_APP_PRIVATE_KEY_PATH is not");
        app.installation_id = *installation;
        app.private_key_path = *key;
        return app_auth(app);
    }
    for (const char* name : {"GITHUB_TOKEN", "GH_TOKEN"}) {
        if (auto token = getenv_string(name)) return token_auth(*token, name);
    }
    if (find_in_path("gh")) {
        // gh keeps one login per host; api.github.com is github.com's.
        std::string host = api.host == "api.github.com" ? "github.com" : api.host;
        auto gh = run_command({"gh", "auth", "token", "--hostname", host});
        if (gh.ok() && gh->exit_code == 0) {
            std::string token = gh->out;
            while (!token.empty() && (token.back() == '\n' || token.back() == '\r'))
                token.pop_back();
            if (!token.empty()) return token_auth(token, "gh auth token");
        }
    }
    return anonymous_auth();
}

}  // namespace cocode::github
