#include "core/terminal_text.h"

#include <cstdio>

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

}  // namespace

std::string terminal_safe(std::string_view text) { return escape(text, false); }
std::string terminal_safe_line(std::string_view text) { return escape(text, true); }

}  // namespace cocode
