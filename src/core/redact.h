// Redaction of secrets in any text we echo, log or write.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cocode {

// Replaces the secrets remembered (below) and what looks like a secret with a `[REDACTED]`
// placeholder, keeping a public prefix
// where it helps a reader (`ghp_[REDACTED]`, `Authorization: Bearer [REDACTED]`):
//   GitHub tokens (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), `sk-…` API keys, Google `AIza…`
//   keys, Authorization / Bearer credentials, AWS access key ids and secret keys, PEM private
//   key blocks, and passwords in URLs (`https://user:pw@host`).
// A hand-written scanner, linear in the text: no regex engine that can blow the stack on a
// megabyte of agent output.
std::string redact(std::string_view text);

// Secret values known at run time (every token cocode resolved or hands an agent): from then
// on redact() replaces each wherever it appears, whatever it looks like. Values shorter than
// 8 characters are ignored: they would blank out ordinary words. Safe from any thread.
void remember_secret(std::string value);

}  // namespace cocode
