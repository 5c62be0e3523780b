#include "core/terminal_text.h"

#include <cstdio>
#include <cstdlib>

#include "core/utf8.h"

namespace cocode {
namespace {

void hex_escape(std::string& out, unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
}

std::string escape(std::string_view text, bool one_line) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c == '\n' || c == '\t') {
            if (one_line)
                out += c == '\n' ? "\\n" : "\\t";
            else
                out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c == 0x1B) {
            out += "\\e";
            ++i;
            continue;
        }
        if (c == '\r') {
            out += "\\r";
            ++i;
            continue;
        }
        if (c < 0x80) {  // the other C0 controls and DEL
            hex_escape(out, c);
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(text, i);
        if (n == 0) {
            hex_escape(out, c);
            ++i;
            continue;
        }
        if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
            char buf[8];  // a C1 control: 8-bit CSI (U+009B) and OSC (U+009D) among them
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
            out += buf;
            i += 2;
            continue;
        }
        out.append(text.substr(i, n));
        i += n;
    }
    return out;
}

// The length of the whitespace character at `i` as .NET's char.IsWhiteSpace (and JavaScript's
// trimStart) see it, or 0: what the runner trims before looking for `::`.
std::size_t whitespace_at(std::string_view text, std::size_t i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
    const std::size_t n = utf8_length(text, i);
    if (n < 2) return 0;
    const std::string_view s = text.substr(i, n);
    static constexpr std::string_view kSpaces[] = {
        "\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003",
        "\u2004", "\u2005", "\u2006", "\u2007", "\u2008", "\u2009", "\u200a",
        "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"};
    for (const auto space : kSpaces)
        if (s == space) return n;
    return 0;
}

constexpr std::string_view kZeroWidthSpace = "\u200b";

}  // namespace

bool in_github_actions() {
    const char* value = std::getenv("GITHUB_ACTIONS");
    return value && std::string_view(value) == "true";
}

std::string workflow_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool line_start = true;
    for (std::size_t i = 0; i < text.size();) {
        if (line_start) {
            std::size_t j = i;
            while (j < text.size()) {
                if (text[j] == '\n' || text[j] == '\r') break;
                const std::size_t n = whitespace_at(text, j);
                if (n == 0) break;
                j += n;
            }
            out.append(text.substr(i, j - i));
            i = j;
            if (text.substr(i, 2) == "::") out += kZeroWidthSpace;
            line_start = false;
            continue;
        }
        const char c = text[i];
        if (c == '\n' || c == '\r') {
            // \r\n is one line end; a bare \r ends a line too, to the runner.
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            out += '\n';
            ++i;
            line_start = true;
            continue;
        }
        if (text.substr(i, 3) == "##[") {
            out += "##";
            out += kZeroWidthSpace;
            out += '[';
            i += 3;
            continue;
        }
        out += c;
        ++i;
    }
    return out;
}

std::string workflow_safe_json(std::string_view json_text) {
    std::string out;
    out.reserve(json_text.size());
    for (std::size_t i = 0; i < json_text.size(); ++i) {
        if (json_text.substr(i, 3) == "##[") {
            out += "##\\u005b";
            i += 2;
            continue;
        }
        out += json_text[i];
    }
    return out;
}

std::string terminal_safe(std::string_view text) {
    std::string safe = escape(text, false);
    return in_github_actions() ? workflow_safe(safe) : safe;
}
std::string terminal_safe_line(std::string_view text) {
    std::string safe = escape(text, true);
    return in_github_actions() ? workflow_safe(safe) : safe;
}

}  // namespace cocode
