// Text from issues, agents and GitHub on its way to a terminal: control and escape sequences
// are shown, never interpreted. An issue body or an agent's output may carry ESC [ … (colours,
// cursor moves, screen clears), OSC (window titles, hyperlinks, clipboard writes), or C1
// controls that some terminals act on; anyone who can open an issue could otherwise rewrite
// a maintainer's terminal.
#pragma once

#include <string>
#include <string_view>

namespace cocode {

// Every C0 control but tab and newline, DEL, the C1 controls (U+0080–U+009F) and bytes that
// are not UTF-8 are written as visible escapes: ESC as `\e`, CR as `\r`, others as `\xNN`
// (C1 as `\u0080`). A backslash stays a backslash. Printable text, UTF-8 included, is kept.
std::string terminal_safe(std::string_view text);

// The same for one line of a table or a message: newlines and tabs escaped too (`\n`, `\t`).
std::string terminal_safe_line(std::string_view text);

}  // namespace cocode
