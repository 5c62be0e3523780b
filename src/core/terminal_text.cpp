#include "core/terminal_text.h"

#include <cstdio>

namespace cocode {
namespace {

void hex_escape(std::string& out, unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
}

// Length of the well-formed UTF-8 sequence starting at `i` (2–4), or 0.
std::size_t utf8_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t n = lead >= 0xF0 && lead <= 0xF4   ? 4
                    : lead >= 0xE0                 ? (lead <= 0xEF ? 3 : 0)
                    : lead >= 0xC2 && lead <= 0xDF ? 2
                                                   : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    // Overlong three- and four-byte forms, surrogates and code points past U+10FFFF.
    if (lead == 0xE0 && byte(i + 1) < 0xA0) return 0;
    if (lead == 0xED && byte(i + 1) >= 0xA0) return 0;
    if (lead == 0xF0 && byte(i + 1) < 0x90) return 0;
    if (lead == 0xF4 && byte(i + 1) >= 0x90) return 0;
    return n;
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

}  // namespace

std::string terminal_safe(std::string_view text) { return escape(text, false); }
std::string terminal_safe_line(std::string_view text) { return escape(text, true); }

}  // namespace cocode
