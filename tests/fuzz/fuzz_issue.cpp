// An issue as GitHub or a local store (.cocode/issues/<n>.json) hands it over: read or
// refused with an error naming where it came from; what is read has a number. The same text
// as a page of GitHub's list (simdjson, keeping kIssueKeys): refused, or items that keep no
// other key and are read or refused the same way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_text.h"
#include "fuzz_support.h"
#include "github/http.h"
#include "github/types.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto page = github::parse_list_page(std::string(text), github::kIssueKeys)) {
        FUZZ_CHECK(page->is_array());
        for (const auto& item : *page) {
            if (item.is_object())
                for (const auto& [key, value] : item.items())
                    FUZZ_CHECK(std::find(std::begin(github::kIssueKeys),
                                         std::end(github::kIssueKeys),
                                         key) != std::end(github::kIssueKeys));
            auto issue = github::issue_from_json(item, "GET /page");
            FUZZ_CHECK(issue ? issue->number > 0 : fuzz::names_where(issue.error(), "GET /page"));
        }
    }
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
