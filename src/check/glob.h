// Path globs for the scope check, written as in .gitignore:
//   `*` and `?` match within one path segment, `[a-z]` / `[!a-z]` one character of a class;
//   `**` matches any number of whole segments (`src/**`, `**/test_*.py`, `a/**/b`);
//   a glob without '/' matches the last segment at any depth (`*.lock`);
//   a leading '/' anchors at the repository root; a glob that matches a folder matches
//   everything inside it (`docs`, `docs/`, `/vendor`).
#pragma once

#include <string_view>

namespace cocode::check {

// `path` is relative to the repository root, with '/' separators.
bool glob_match(std::string_view glob, std::string_view path);

}  // namespace cocode::check
