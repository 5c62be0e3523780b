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
// In GitHub Actions (GITHUB_ACTIONS=true) both also keep the text from being read as a workflow
// command (workflow_safe): a step's output is read by the runner line by line, and an agent's
// `::add-mask::…` or `##[set-output …]` would be carried out.

// Whether this process runs in a GitHub Actions step.
bool in_github_actions();

// Text no GitHub Actions runner reads as a workflow command, changed only where it would: as
// actions/runner reads a step's output, a line (ended by \n, \r\n or a bare \r) is a command
// when, its leading whitespace trimmed (Unicode's too), it starts with `::`, or when it holds
// `##[` anywhere. A zero-width space (U+200B, not whitespace to the runner) goes before such a
// line's `::` and into each `##[` (`##\u200b[`); a bare \r is made \n, which it is to the runner
// anyway. What is left reads the same to a person.
std::string workflow_safe(std::string_view text);

// The same for JSON text printed for a program: `##[` (only ever inside a string) written as
// `##\u005b`, the same JSON value. Lines of pretty-printed JSON never start with `::`.
std::string workflow_safe_json(std::string_view json_text);

}  // namespace cocode
