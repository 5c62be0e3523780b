// An issue as GitHub or a local store (.cocode/issues/<n>.json) hands it over: read or
// refused with an error naming where it came from; what is read has a number.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/json_text.h"
#include "fuzz_support.h"
#include "github/types.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto json = parse_json_text(text, "fuzz/7.json", "an issue object in GitHub's shape");
    if (!json) {
        FUZZ_CHECK(fuzz::names_where(json.error(), "fuzz/7.json"));
        return 0;
    }
    auto issue = github::issue_from_json(*json, "fuzz/7.json");
    if (!issue)
        FUZZ_CHECK(fuzz::names_where(issue.error(), "fuzz/7.json"));
    else
        FUZZ_CHECK(issue->number > 0);
    return 0;
}
