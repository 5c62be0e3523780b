// Which commit of a range changed a given line: a round's answer to a review thread ("changed
// in 3f2a1c0", or "left these lines alone"). The line is followed through the range as earlier
// commits move it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace cocode::git {

// In the output of `git log --reverse --format="commit %H" -U0 FROM..TO -- PATH`: the first
// commit whose hunks change line `line` of PATH as it was at FROM (its old side covers the
// line, or the file is deleted), the line moved by the hunks above it in each earlier commit.
// nullopt when no commit does.
std::optional<std::string> first_change_of_line(std::string_view log, int line);

// Runs that log in `dir` and reads it.
Result<std::optional<std::string>> commit_changing_line(const std::filesystem::path& dir,
                                                        const std::string& from,
                                                        const std::string& to,
                                                        const std::string& path, int line);

}  // namespace cocode::git
