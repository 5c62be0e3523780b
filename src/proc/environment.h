// The environment a child gets when it must not see our secrets: agents, and the verify
// commands that run code an agent wrote.
#pragma once

#include <string>
#include <vector>

namespace cocode {

// Our own environment as "NAME=value" entries.
std::vector<std::string> current_environment();

// The entries of `ours` whose names are in the base allowlist (HOME, PATH, USER, LANG, LC_*,
// TERM, TZ, TMPDIR, SHELL) or in `extra`; nothing else, whatever it holds.
std::vector<std::string> allowlisted_environment(const std::vector<std::string>& ours,
                                                 const std::vector<std::string>& extra);

}  // namespace cocode
