#pragma once
// "Did you mean": the known word a mistyped one was most likely meant to be.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cocode {

// Edits between `a` and `b`: insertions, deletions, substitutions and swaps of two
// neighbours ("rnu" is one edit from "run"), each costing 1 (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest of `known` to `word` when it is a plausible typo (at most max(2, length/3)
// edits away), for "did you mean"; nullopt when none is.
std::optional<std::string> closest_word(std::string_view word,
                                        const std::vector<std::string>& known);

}  // namespace cocode
