#include "core/markdown.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace cocode {
namespace {

bool control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

std::size_t longest_backtick_run(std::string_view text) {
    std::size_t longest = 0, run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

// An ASCII letter or digit. Not a byte beyond ASCII: CommonMark takes Unicode punctuation and
// spaces (。, «, a no-break space) for the edges of emphasis, so an `_` beside one is escaped.
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// What no reader gets raw, in text and in HTML alike: `<`, `>`, `&` (and with `quote`, `"`) as
// entities, line ends and tabs as spaces, other control characters as U+FFFD. False: `c` is
// none of those.
bool put_plain(char c, std::string& out, bool quote = false) {
    if (c == '<')
        out += "&lt;";
    else if (c == '>')
        out += "&gt;";
    else if (c == '&')
        out += "&amp;";
    else if (c == '"' && quote)
        out += "&quot;";
    else if (c == '\n' || c == '\r' || c == '\t')
        out += ' ';
    else if (control(c))
        out += "\ufffd";
    else
        return false;
    return true;
}

}  // namespace

std::string markdown_text(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    // Where a line's own markup could begin: a heading, a list, a quote, a thematic break. The
    // blanks before it go (four would make a code block of a list item or a paragraph).
    const std::size_t lead = text.find_first_not_of(" \t\r\n");
    if (lead == std::string_view::npos) return out;
    // An ordered list's number: the digits at the start, and what follows them.
    const std::size_t after_digits = text.find_first_not_of("0123456789", lead);
    for (std::size_t i = lead; i < text.size(); ++i) {
        const char c = text[i];
        const char before = i > 0 ? text[i - 1] : ' ';
        const char after = i + 1 < text.size() ? text[i + 1] : ' ';
        if (put_plain(c, out)) continue;
        // Markup anywhere in a line: escapes, code, emphasis, links and images, tables,
        // strikethrough, math. An `_` inside a word (snake_case) is no emphasis.
        if (std::strchr("\\`*[]|~$", c) || (c == '_' && !(word_char(before) && word_char(after))))
            out += std::string("\\") + c;
        // At the start: `#`, `-`, `+`, `=` and an ordered list's `1.` or `1)`.
        else if (i == lead && std::strchr("#-+=", c))
            out += std::string("\\") + c;
        else if ((c == '.' || c == ')') && i == after_digits && i > lead)
            out += std::string("\\") + c;
        else
            out += c;
    }
    return out;
}

std::string html_text(std::string_view text) {
    std::string out;
    for (char c : text)
        if (!put_plain(c, out, /*quote=*/true)) out += c;
    return out;
}

std::string markdown_code(std::string_view text, bool in_table) {
    std::string body;
    body.reserve(text.size());
    for (char c : text) {
        if (c == '\n' || c == '\r' || c == '\t')
            body += ' ';
        else if (control(c))
            body += "\ufffd";
        else if (c == '|' && in_table)
            body += "\\|";
        else
            body += c;
    }
    // Nothing in it: one space, never an empty pair of backticks (which a later span's
    // two-backtick fence would close on, leaving its text to be read as Markdown).
    if (body.empty()) body = " ";
    const std::string fence(longest_backtick_run(body) + 1, '`');
    // A backtick in it: a space inside each fence, which CommonMark takes off again.
    const bool pad = body.find('`') != std::string::npos;
    const char* space = pad ? " " : "";
    return fence + space + body + space + fence;
}

std::string markdown_link(std::string_view label, std::string_view url) {
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) return std::string(label);
    std::string target;
    for (char c : url) {
        if (control(c) || std::strchr(" ()<>|`\"\\", c) || static_cast<unsigned char>(c) >= 0x80) {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
            target += hex;
        } else {
            target += c;
        }
    }
    return "[" + std::string(label) + "](" + target + ")";
}

std::string fenced(std::string_view text, std::string_view info) {
    std::string fence(std::max<std::size_t>(3, longest_backtick_run(text) + 1), '`');
    std::string out = fence + std::string(info) + "\n" + std::string(text);
    if (out.back() != '\n') out += '\n';
    return out + fence + "\n";
}

}  // namespace cocode
