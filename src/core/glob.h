// Path globs for the scope check, written as in .gitignore:
//   `*` and `?` match within one path segment, `[a-z]` / `[!a-z]` one character of a class;
//   `**` matches any number of whole segments (`src/**`, `**/test_*.py`, `a/**/b`);
//   a glob without '/' matches the last segment at any depth (`*.lock`);
//   a leading '/' anchors at the repository root; a glob that matches a folder matches
//   everything inside it (`docs`, `docs/`, `/vendor`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cocode {

// `path` is relative to the repository root, with '/' separators.
bool glob_match(std::string_view glob, std::string_view path);

// What is wrong with a glob that could never mean what its writer meant, or nullopt: empty,
// a '[' without ']', a range from high to low, `***`, `**` inside a segment, a `..` segment.
std::optional<std::string> glob_problem(std::string_view glob);

}  // namespace cocode
