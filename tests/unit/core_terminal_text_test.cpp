// Text on its way to a terminal: escape sequences shown, never interpreted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/terminal_text.h"

namespace cocode {
namespace {

TEST(TerminalText, EscapeAndOscSequencesAreShownNotInterpreted) {
    // Clear the screen, set the window title, write the clipboard, a hyperlink.
    EXPECT_EQ(terminal_safe("\x1b[2J\x1b[H"), "\\e[2J\\e[H");
    EXPECT_EQ(terminal_safe("\x1b]0;pwned\x07"), "\\e]0;pwned\\x07");
    EXPECT_EQ(terminal_safe("\x1b]52;c;Y3VybCB4IHwgc2g=\x1b\\"), "\\e]52;c;Y3VybCB4IHwgc2g=\\e\\");
    EXPECT_EQ(terminal_safe("a\rb\bc\x7f"), "a\\rb\\x08c\\x7f");
}

TEST(TerminalText, C1ControlsAndBrokenUtf8AreEscaped) {
    EXPECT_EQ(terminal_safe("\xc2\x9b"
                            "31m"),
              "\\u009b31m");  // 8-bit CSI, UTF-8 encoded
    EXPECT_EQ(terminal_safe("\x9b"
                            "31m"),
              "\\x9b31m");                                        // 8-bit CSI, a lone byte
    EXPECT_EQ(terminal_safe("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");  // overlong '/'
    EXPECT_EQ(terminal_safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(TerminalText, PrintableTextAndUtf8AreKept) {
    const std::string text = "héllo ✓ 🙂 \\e stays\n\tindented";
    EXPECT_EQ(terminal_safe(text), text);
    EXPECT_EQ(terminal_safe_line("one\ntwo\tthree"), "one\\ntwo\\tthree");
}

// In a GitHub Actions step, text from agents and issues is never a workflow command: where the
// runner would read one (a line starting with `::` once its whitespace, Unicode's included, is
// trimmed; `##[` anywhere; a bare \r ending a line) a zero-width space breaks it; the rest is
// left as it is. tests/e2e/action_test.cpp runs the runner's own parsing on a job's output.
TEST(TerminalText, NothingFromAnAgentReadsAsAWorkflowCommand) {
    const std::string zw = "\u200b";
    EXPECT_EQ(workflow_safe("::set-output name=verdict::PASS"),
              zw + "::set-output name=verdict::PASS");
    EXPECT_EQ(workflow_safe("  \t::add-mask::secret"), "  \t" + zw + "::add-mask::secret");
    EXPECT_EQ(workflow_safe("\u3000\u00a0::error file=a.c::x"),
              "\u3000\u00a0" + zw + "::error file=a.c::x");
    EXPECT_EQ(workflow_safe("ok\n::stop-commands::t\r::warning::w\r\n  ::notice::n"),
              "ok\n" + zw + "::stop-commands::t\n" + zw + "::warning::w\n  " + zw + "::notice::n");
    EXPECT_EQ(workflow_safe("src/##[set-output name=a]b.c and ##[error]x"),
              "src/##" + zw + "[set-output name=a]b.c and ##" + zw + "[error]x");
    for (const std::string plain : {"hello :: world", "std::string", "# [x] ## done", "", "\n\n"})
        EXPECT_EQ(workflow_safe(plain), plain) << plain;
    const std::string hostile = " ::add-path::/tmp\r##[set-env name=A]b\n::group::g";
    EXPECT_EQ(workflow_safe(workflow_safe(hostile)), workflow_safe(hostile)) << "idempotent";

    // JSON for a program: the same value, `##[` written as `##\u005b`.
    const std::string json_text = R"({"tail":"##[error]x","ok":"a"})";
    EXPECT_EQ(workflow_safe_json(json_text), R"({"tail":"##\u005berror]x","ok":"a"})");
    EXPECT_EQ(nlohmann::json::parse(workflow_safe_json(json_text)),
              nlohmann::json::parse(json_text));

    // terminal_safe does it inside a step, and only there.
    ::setenv("GITHUB_ACTIONS", "true", 1);
    EXPECT_EQ(terminal_safe("a\r::error::x"), "a\\r::error::x") << "\\r is shown, not a line end";
    EXPECT_EQ(terminal_safe("::error::x"), zw + "::error::x");
    EXPECT_EQ(terminal_safe_line("t ##[error]x"), "t ##" + zw + "[error]x");
    ::unsetenv("GITHUB_ACTIONS");
    EXPECT_EQ(terminal_safe("::error::x"), "::error::x");
}

}  // namespace
}  // namespace cocode
