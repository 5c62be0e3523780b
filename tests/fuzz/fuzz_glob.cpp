// Globs in a configuration (allowed and read-only paths) against the paths a commit touched:
// a glob is either refused with the reason or matches without blowing up on any path (a
// backtracking matcher is exponential on `*a*a*a…`); a path without special characters
// matches itself, and everything inside it.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/glob.h"
#include "fuzz_support.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::string glob = input.ConsumeRandomLengthString(256);
    const std::string path = input.ConsumeRemainingBytesAsString();
    if (auto problem = glob_problem(glob)) {
        FUZZ_CHECK(!problem->empty());
        return 0;
    }
    (void)glob_match(glob, path);

    // A literal relative path, made of segments git could hold: itself and what is inside.
    const bool literal = !path.empty() && path.front() != '/' && path.back() != '/' &&
                         path.find_first_of("*?[]\\!\n") == std::string::npos &&
                         path.find("//") == std::string::npos &&
                         ("/" + path + "/").find("/./") == std::string::npos &&
                         ("/" + path + "/").find("/../") == std::string::npos;
    if (literal && !glob_problem(path)) {
        FUZZ_CHECK(glob_match(path, path));
        FUZZ_CHECK(glob_match(path, path + "/inner.txt"));
    }
    return 0;
}
