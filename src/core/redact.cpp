#include "core/redact.h"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace cocode {
namespace {

constexpr std::string_view kRedacted = "[REDACTED]";

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

bool starts_with_nocase(std::string_view text, std::size_t at, std::string_view word) {
    if (text.size() - at < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k) {
        if (std::tolower(static_cast<unsigned char>(text[at + k])) !=
            std::tolower(static_cast<unsigned char>(word[k])))
            return false;
    }
    return true;
}

// Length of the run of characters accepted by `accept` starting at `at`.
template <class Accept>
std::size_t run_length(std::string_view text, std::size_t at, Accept accept) {
    std::size_t n = 0;
    while (at + n < text.size() && accept(text[at + n])) ++n;
    return n;
}

bool token_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }
bool b64_char(char c) { return is_alnum(c) || c == '/' || c == '+' || c == '='; }
bool credential_char(char c) {
    return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' ||
           c == '=';
}

struct Match {
    std::size_t keep = 0;   // characters of the match copied as they are (the public prefix)
    std::size_t total = 0;  // characters consumed
    std::string_view replacement = kRedacted;
};

// A prefixed token: `prefix` then at least `min_body` characters accepted by `body`.
template <class Accept>
bool prefixed_token(std::string_view text, std::size_t at, std::string_view prefix,
                    std::size_t min_body, Accept body, Match& m) {
    if (text.compare(at, prefix.size(), prefix) != 0) return false;
    std::size_t n = run_length(text, at + prefix.size(), body);
    if (n < min_body) return false;
    m = {prefix.size(), prefix.size() + n};
    return true;
}

bool pem_private_key(std::string_view text, std::size_t at, Match& m) {
    constexpr std::string_view begin = "-----BEGIN ";
    if (text.compare(at, begin.size(), begin) != 0) return false;
    std::size_t label_end = text.find("-----", at + begin.size());
    if (label_end == std::string_view::npos) return false;
    std::string_view label = text.substr(at + begin.size(), label_end - at - begin.size());
    if (label.find("PRIVATE") == std::string_view::npos ||
        label.find('\n') != std::string_view::npos)
        return false;
    std::size_t end = text.find("-----END ", label_end);
    std::size_t stop = text.size();
    if (end != std::string_view::npos) {
        std::size_t close = text.find("-----", end + 9);
        stop = close == std::string_view::npos ? text.size() : close + 5;
    }
    m = {0, stop - at, "[REDACTED PRIVATE KEY]"};
    return true;
}

// `Authorization: <scheme> <credential>` or a bare `Bearer <credential>`.
bool auth_credential(std::string_view text, std::size_t at, Match& m) {
    std::size_t i = at;
    if (starts_with_nocase(text, i, "authorization")) {
        i += 13;
        i += run_length(text, i, [](char c) { return is_space(c) || c == '"' || c == '\''; });
        if (i >= text.size() || (text[i] != ':' && text[i] != '=')) return false;
        ++i;
        i += run_length(text, i, [](char c) { return is_space(c) || c == '"' || c == '\''; });
        std::size_t scheme = run_length(text, i, is_alnum);
        std::size_t after_scheme = i + scheme;
        std::size_t gap = run_length(text, after_scheme, is_space);
        std::size_t cred = run_length(text, after_scheme + gap, credential_char);
        if (scheme > 0 && gap > 0 && cred > 0) {
            m = {after_scheme + gap - at, after_scheme + gap + cred - at};
            return true;
        }
        std::size_t bare = run_length(text, i, credential_char);  // `Authorization: <token>`
        if (bare < 8) return false;
        m = {i - at, i + bare - at};
        return true;
    }
    if (starts_with_nocase(text, i, "bearer") && (at == 0 || !is_alnum(text[at - 1]))) {
        i += 6;
        std::size_t gap = run_length(text, i, is_space);
        std::size_t cred = run_length(text, i + gap, credential_char);
        if (gap == 0 || cred < 8) return false;
        m = {i + gap - at, i + gap + cred - at};
        return true;
    }
    return false;
}

bool aws_secret(std::string_view text, std::size_t at, Match& m) {
    constexpr std::string_view name = "aws_secret_access_key";
    if (!starts_with_nocase(text, at, name)) return false;
    std::size_t i = at + name.size();
    std::size_t sep = run_length(text, i, [](char c) {
        return is_space(c) || c == '"' || c == '\'' || c == ':' || c == '=';
    });
    std::size_t value = run_length(text, i + sep, b64_char);
    if (sep == 0 || value < 20) return false;
    m = {i + sep - at, i + sep + value - at};
    return true;
}

bool aws_access_key_id(std::string_view text, std::size_t at, Match& m) {
    static constexpr std::string_view prefixes[] = {"AKIA", "ASIA", "ABIA", "ACCA"};
    for (std::string_view p : prefixes) {
        if (text.compare(at, p.size(), p) != 0) continue;
        std::size_t n = run_length(text, at + p.size(), [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        });
        if (n != 16) return false;
        m = {p.size(), p.size() + n};
        return true;
    }
    return false;
}

// `scheme://user:password@host` -> the password.
bool url_password(std::string_view text, std::size_t at, Match& m) {
    if (text.compare(at, 3, "://") != 0) return false;
    std::size_t i = at + 3;
    auto userinfo = [](char c) {
        return c != '/' && c != '@' && c != ':' && !is_space(c) && c != '\n' && c != '\r' &&
               c != '"' && c != '\'' && c != '<' && c != '>';
    };
    std::size_t user = run_length(text, i, userinfo);
    if (i + user >= text.size() || text[i + user] != ':') return false;
    std::size_t pw_start = i + user + 1;
    std::size_t pw = run_length(text, pw_start, userinfo);
    if (pw == 0 || pw_start + pw >= text.size() || text[pw_start + pw] != '@') return false;
    m = {pw_start - at, pw_start + pw - at};
    return true;
}

bool word_start(std::string_view text, std::size_t at) {
    return at == 0 || !token_char(text[at - 1]);
}

bool match_at(std::string_view text, std::size_t at, Match& m) {
    switch (text[at]) {
        case '-':
            return pem_private_key(text, at, m);
        case ':':
            return url_password(text, at, m);
        case 'g':
            if (!word_start(text, at)) return false;
            return prefixed_token(text, at, "ghp_", 20, is_alnum, m) ||
                   prefixed_token(text, at, "gho_", 20, is_alnum, m) ||
                   prefixed_token(text, at, "ghu_", 20, is_alnum, m) ||
                   prefixed_token(text, at, "ghs_", 20, is_alnum, m) ||
                   prefixed_token(text, at, "ghr_", 20, is_alnum, m) ||
                   prefixed_token(text, at, "github_pat_", 20, token_char, m);
        case 's':
            return word_start(text, at) && prefixed_token(text, at, "sk-", 20, token_char, m);
        case 'A':
            if (word_start(text, at) && (aws_access_key_id(text, at, m) ||
                                         prefixed_token(text, at, "AIza", 30, token_char, m)))
                return true;
            [[fallthrough]];
        case 'a':
            return auth_credential(text, at, m) || aws_secret(text, at, m);
        case 'B':
        case 'b':
            return auth_credential(text, at, m);
        default:
            return false;
    }
}

}  // namespace

namespace {

std::mutex& secrets_mutex() {
    static std::mutex mutex;
    return mutex;
}

std::vector<std::string>& known_secrets() {
    static std::vector<std::string> secrets;
    return secrets;
}

std::string without_known_secrets(std::string_view text) {
    std::string out(text);
    std::lock_guard<std::mutex> lock(secrets_mutex());
    for (const std::string& secret : known_secrets()) {
        std::size_t pos = 0;
        while ((pos = out.find(secret, pos)) != std::string::npos) {
            out.replace(pos, secret.size(), kRedacted);
            pos += kRedacted.size();
        }
    }
    return out;
}

std::string redact_patterns(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        Match m;
        if (match_at(text, i, m)) {
            out.append(text.substr(i, m.keep));
            out.append(m.replacement);
            i += m.total;
        } else {
            out.push_back(text[i]);
            ++i;
        }
    }
    return out;
}

}  // namespace

std::string redact(std::string_view text) { return redact_patterns(without_known_secrets(text)); }

void remember_secret(std::string value) {
    if (value.size() < 8) return;
    std::lock_guard<std::mutex> lock(secrets_mutex());
    auto& secrets = known_secrets();
    if (std::find(secrets.begin(), secrets.end(), value) != secrets.end()) return;
    secrets.push_back(std::move(value));
    // Longest first, so that a secret containing another is replaced whole.
    std::sort(secrets.begin(), secrets.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

}  // namespace cocode
