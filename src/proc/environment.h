// The environment a child gets when it must not see our secrets: agents, and the verify
// commands that run code an agent wrote.
#pragma once

#include <string>
#include <vector>

namespace cocode {

// Keeps `names`' values (the GitHub token) out of the reach of other processes of the same
// user (an agent without the sandbox): this process is made non-dumpable — its /proc files
// (environ, mem) become root's, and no same-user ptrace attaches — and the values' bytes in
// the environment it was started with (what /proc/<pid>/environ shows) are wiped, the values
// kept in a copy of its own for getenv and for the children it starts. Called first in main.
void hold_secrets(const std::vector<const char*>& names);

// The variables that hold cocode's own secrets (the GitHub token, the webhook secret, the
// dashboard's token): held by hold_secrets, and given to no child (git included).
const std::vector<const char*>& secret_variables();

// `environment` without secret_variables().
std::vector<std::string> without_secrets(std::vector<std::string> environment);

// Our own environment as "NAME=value" entries.
std::vector<std::string> current_environment();

// The entries of `ours` whose names are in the base allowlist or in `extra`; nothing else,
// whatever it holds. The base: HOME, PATH, USER, LANG, LC_*, TERM, TZ, TMPDIR, SHELL; the
// proxies and CA bundles (HTTPS_PROXY, HTTP_PROXY, NO_PROXY in both cases, SSL_CERT_FILE,
// SSL_CERT_DIR, NODE_EXTRA_CA_CERTS); the commit identity (GIT_AUTHOR_*, GIT_COMMITTER_*).
std::vector<std::string> allowlisted_environment(const std::vector<std::string>& ours,
                                                 const std::vector<std::string>& extra);

}  // namespace cocode
