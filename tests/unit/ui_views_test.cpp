// What the dashboard shows of a run (src/ui/views.h), from what an agent could have written.
#include <gtest/gtest.h>

#include "ui/views.h"

namespace cocode::ui {
namespace {

bool full_id(std::string_view text) {
    return (text.size() == 40 || text.size() == 64) &&
           text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

TEST(UiViews, ARunIdIsLettersDigitsDashesAndUnderscores) {
    EXPECT_TRUE(safe_run_id("20261128-101500-3f2a-1-claude"));
    for (const char* bad : {"", "../etc", "a/b", "a b", "id%2F", "a.b", "<x>"})
        EXPECT_FALSE(safe_run_id(bad)) << bad;
    EXPECT_FALSE(safe_run_id(std::string(128, 'a')));
}

TEST(UiViews, OnlyThisRepositorysAddressesFromTheLastPublishAreLinked) {
    const std::string project = "octo/demo";
    auto event = [](const std::string& comment, const std::string& pull) {
        return R"({"type":"PUBLISH","comment":")" + comment + R"(","pull_request":")" + pull +
               "\"}\n";
    };
    const std::string ours = "https://github.com/octo/demo/issues/1#issuecomment-9";
    const std::string pr = "https://github.com/octo/demo/pull/2";
    // The last PUBLISH wins; earlier ones and other events do not count.
    const std::string events = event("https://github.com/octo/demo/issues/1#old", pr) +
                               R"({"type":"READY","comment":"https://evil.invalid/octo/demo/"})"
                               "\n" +
                               event(ours, pr);
    EXPECT_EQ(published_links(events, project),
              (nlohmann::json{{"comment", ours}, {"pull_request", pr}}));
    // Elsewhere, another scheme, a quote or an angle bracket: not shown.
    for (const std::string& bad :
         {std::string("https://evil.invalid/x"), std::string("javascript:alert(1)//octo/demo/"),
          std::string("https://github.com/octo/demo/\\\" onclick=\\\"x"),
          std::string("https://github.com/octo/demo/<script>"),
          std::string("file:///octo/demo/")}) {
        SCOPED_TRACE(bad);
        EXPECT_EQ(published_links(event(bad, pr), project), (nlohmann::json{{"pull_request", pr}}));
    }
    EXPECT_EQ(published_links("not json\n{\"type\":\"PUBLISH\"", project),
              nlohmann::json::object());
}

TEST(UiViews, ADiffCoversTheSealedBaseToTheBranchOrItsReadyCommit) {
    const std::string base(40, 'a'), branch(40, 'b'), ready(40, 'c');
    EXPECT_EQ(diff_range(base, branch, ready, full_id), (DiffRange{base, branch}));
    EXPECT_EQ(diff_range(base, "", ready, full_id), (DiffRange{base, ready}));
    // Nothing that is not a full id reaches git: not an option, not a short or a named rev.
    EXPECT_FALSE(diff_range("--output=/tmp/x", branch, ready, full_id));
    EXPECT_FALSE(diff_range(base, "", "--output=/tmp/x", full_id));
    EXPECT_FALSE(diff_range(base, "", "HEAD", full_id));
    EXPECT_FALSE(diff_range("", branch, ready, full_id));
    EXPECT_FALSE(diff_range(base.substr(0, 7), branch, ready, full_id));
}

}  // namespace
}  // namespace cocode::ui
