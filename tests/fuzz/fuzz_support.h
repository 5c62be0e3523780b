// What every fuzz target shares: a check that stops the fuzzer with the broken promise (a
// crash libFuzzer saves the input of), and the promise every error of cocode's keeps. (That
// it is shown on one line, escaped, is tool::run's part: tools/common/tool_main.h.)
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"

#define FUZZ_CHECK(condition)                                                            \
    do {                                                                                 \
        if (!(condition)) {                                                              \
            std::fprintf(stderr, "%s:%d: broken: %s\n", __FILE__, __LINE__, #condition); \
            std::abort();                                                                \
        }                                                                                \
    } while (false)

namespace cocode::fuzz {

// An error says something, and names `where` (the file, the flag) it came from.
inline bool names_where(const Error& error, std::string_view where) {
    return !error.message.empty() && error.message.find(where) != std::string::npos;
}

}  // namespace cocode::fuzz
