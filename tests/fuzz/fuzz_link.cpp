// What a GitHub answer or a user's remote hands cocode as text: the Link header that pages
// lists (the next page is one of the header's own URLs), API base URLs, remote URLs and
// owner/name references.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "github/types.h"
#include "github/url.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto next = github::next_link(text)) {
        FUZZ_CHECK(!next->empty());
        FUZZ_CHECK(text.find(*next) != std::string_view::npos);
    }
    if (auto base = github::parse_base_url(text, "--api-url"); !base) {
        FUZZ_CHECK(fuzz::names_where(base.error(), "--api-url"));
    } else {  // what it prints, it reads back as itself
        auto again = github::parse_base_url(base->str(), "--api-url");
        FUZZ_CHECK(again && again->str() == base->str() && again->port == base->port);
    }
    if (auto ref = github::parse_repo_ref(text, "--repo"); ref) {
        FUZZ_CHECK(!ref->owner.empty() && !ref->name.empty());
        FUZZ_CHECK(ref->owner.find('/') == std::string::npos);
    } else {
        FUZZ_CHECK(fuzz::names_where(ref.error(), "--repo"));
    }
    if (auto remote = github::parse_remote_url(text))
        FUZZ_CHECK(!remote->host.empty() && !remote->repo.owner.empty());
    return 0;
}
