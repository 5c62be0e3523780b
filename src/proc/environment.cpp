#include "proc/environment.h"

#include <sys/prctl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace cocode {

void hold_secrets(const std::vector<const char*>& names) {
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    for (const char* name : names) {
        char* value = std::getenv(name);
        if (!value || !*value) continue;
        const std::string kept(value);
        ::setenv(name, kept.c_str(), 1);  // a copy of our own; `value` is the start block's
        std::memset(value, 0, std::strlen(value));
    }
}

const std::vector<const char*>& secret_variables() {
    static const std::vector<const char*> names = {"GITHUB_TOKEN", "GH_TOKEN",
                                                   "COCODE_WEBHOOK_SECRET", "COCODE_UI_TOKEN"};
    return names;
}

std::vector<std::string> without_secrets(std::vector<std::string> environment) {
    std::erase_if(environment, [](const std::string& entry) {
        const std::string name = entry.substr(0, entry.find('='));
        return std::any_of(secret_variables().begin(), secret_variables().end(),
                           [&](const char* secret) { return name == secret; });
    });
    return environment;
}

std::vector<std::string> current_environment() {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
    return out;
}

std::vector<std::string> allowlisted_environment(const std::vector<std::string>& ours,
                                                 const std::vector<std::string>& extra) {
    static const std::vector<std::string> kBase = {
        "HOME", "PATH", "USER", "LANG", "TERM", "TZ", "TMPDIR", "SHELL",
        // How the network is reached, as cocode itself honours it: proxies and extra CAs.
        "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
        // Who commits: an agent's git may not read the user's config (gemini's does not).
        "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"};
    auto wanted = [&](const std::string& name) {
        return std::find(kBase.begin(), kBase.end(), name) != kBase.end() ||
               name.rfind("LC_", 0) == 0 ||
               std::find(extra.begin(), extra.end(), name) != extra.end();
    };
    std::vector<std::string> out;
    for (const auto& entry : ours)
        if (wanted(entry.substr(0, entry.find('=')))) out.push_back(entry);
    return out;
}

}  // namespace cocode
