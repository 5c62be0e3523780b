// Text on its way to a terminal: escape sequences shown, never interpreted.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cocode
