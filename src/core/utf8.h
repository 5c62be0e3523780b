#pragma once
// UTF-8 as the files and terminals cocode writes need it: which bytes form a well-formed
// sequence, and the code point they encode.
#include <cstddef>
#include <string_view>

namespace cocode {

// Length of the well-formed UTF-8 sequence of two to four bytes starting at `i`, or 0 (a
// stray continuation byte, a truncated sequence, an overlong form, a surrogate, past U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i);

// The code point of the well-formed sequence of `n` bytes (from utf8_length) at `i`.
char32_t utf8_code_point(std::string_view text, std::size_t i, std::size_t n);

}  // namespace cocode
