// Markdown for what cocode posts (comments, the job summary, reports): the one escaper. Text
// cocode did not write — an agent's words, a check's name, a file's path, a person's login, a
// model's plan — goes through it, so that nothing in it can be markup: no link, image, mention,
// heading, list, HTML, hidden comment, table column, code fence or emphasis, and no control
// character (an escape sequence's start) reaches a reader.
#pragma once

#include <string>
#include <string_view>

namespace cocode {

// Text as inline Markdown, shown as it is and read as easily as prose: what can be markup
// anywhere in a line backslash-escaped (`\`, backticks, `*`, `[`, `]`, `|`, `~`, `$`, and
// `_` but inside a word), and at its start what begins a heading, list or break (`#`, `-`,
// `+`, `=`, `1.`), the blanks before it dropped; `<`, `>` and `&` as entities; line ends and
// tabs as spaces; other control characters as U+FFFD. An `_` counts as inside a word only
// between ASCII letters and digits. Safe in a paragraph, a list item, a heading and a table
// cell. A web
// address stays as it is (GitHub shows it as a link, as it does in any comment), and so does
// an `@`: GitHub finds mentions in the text it shows, which no Markdown escape hides.
std::string markdown_text(std::string_view text);

// Text as a code span: the fence longer than any run of backticks in it, line ends as spaces,
// control characters as U+FFFD. In a table cell (`in_table`) a `|` is escaped as GFM's tables
// ask, even inside a code span.
std::string markdown_code(std::string_view text, bool in_table = false);

// A link to `url` labelled `label` (Markdown already): an http(s) URL, with what could end or
// break the link (spaces, parentheses, angle brackets, `|`, backticks, quotes, backslashes,
// control characters, anything not ASCII) percent-encoded; any other URL gives the label alone.
std::string markdown_link(std::string_view label, std::string_view url);

// Text inside an HTML element of a comment (a <summary>, where Markdown is not read): `<`, `>`,
// `&` and `"` as entities, line ends as spaces, control characters as U+FFFD.
std::string html_text(std::string_view text);

// `text` as a fenced code block with info string `info`, the fence longer than any run of
// backticks in the text, so that nothing in it can close the block early.
std::string fenced(std::string_view text, std::string_view info = "text");

}  // namespace cocode
