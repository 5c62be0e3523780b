#include "core/visible_text.h"

#include <set>
#include <sstream>
#include <vector>

#include "core/utf8.h"

namespace cocode {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The label of a link reference definition line (`   [label]: destination "title"`), or "".
std::string definition_label(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;
    if (i >= line.size() || line[i] != '[') return {};
    const std::size_t close = line.find("]:", i + 1);
    if (close == std::string_view::npos || close == i + 1) return {};
    const std::string_view label = line.substr(i + 1, close - i - 1);
    if (label.find('[') != std::string_view::npos || label.find(']') != std::string_view::npos)
        return {};
    std::string_view rest = line.substr(close + 2);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    if (rest.empty()) return {};  // a destination is required
    return lower(label);
}

bool is_fence(std::string_view line, std::string& fence) {
    std::size_t i = 0;
    while (i < line.size() && i < 3 && line[i] == ' ') ++i;
    if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
    std::size_t n = 0;
    while (i + n < line.size() && line[i + n] == line[i]) ++n;
    if (n < 3) return false;
    const std::string run(n, line[i]);
    if (fence.empty()) {
        fence = run;
        return true;
    }
    // A closing fence: at least as long as the opening one, same character, nothing after.
    if (line[i] == fence[0] && n >= fence.size() &&
        line.substr(i + n).find_first_not_of(" \t") == std::string_view::npos) {
        fence.clear();
        return true;
    }
    return false;
}

// HTML comments out of prose, not out of code spans (`…`) or fenced blocks.
std::string without_comments(std::string_view text, std::size_t& removed) {
    std::string out;
    std::string fence;
    std::size_t i = 0;
    bool line_start = true;
    while (i < text.size()) {
        if (line_start) {
            const std::size_t end = text.find('\n', i);
            const std::string_view line =
                text.substr(i, end == std::string_view::npos ? text.npos : end - i);
            const bool was_in_code = !fence.empty();
            if (is_fence(line, fence) || was_in_code) {
                out.append(line);
                if (end == std::string_view::npos) break;
                out += '\n';
                i = end + 1;
                continue;
            }
            line_start = false;
        }
        const char c = text[i];
        if (c == '`') {
            std::size_t n = 0;
            while (i + n < text.size() && text[i + n] == '`') ++n;
            const std::string ticks(n, '`');
            const std::size_t close = text.find(ticks, i + n);
            const std::size_t stop = close == std::string_view::npos ? i + n : close + n;
            out.append(text.substr(i, stop - i));
            i = stop;
            continue;
        }
        if (text.compare(i, 4, "<!--") == 0) {
            ++removed;
            const std::size_t close = text.find("-->", i + 4);
            if (close == std::string_view::npos) break;  // unclosed: GitHub hides the rest
            i = close + 3;
            continue;
        }
        out += c;
        if (c == '\n') line_start = true;
        ++i;
    }
    return out;
}

std::string without_unreferenced_definitions(const std::string& text, std::size_t& removed) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const bool ends_with_newline = !text.empty() && text.back() == '\n';
    // Which labels are used: [text][label], [label][] and [label] outside definitions.
    std::string lowered = lower(text);
    std::string out;
    std::string fence;
    for (std::size_t n = 0; n < lines.size(); ++n) {
        const std::string& line = lines[n];
        const bool in_code = !fence.empty() || is_fence(line, fence);
        std::string label = in_code ? "" : definition_label(line);
        bool drop = false;
        if (!label.empty()) {
            const std::string use = "[" + label + "]";
            std::size_t uses = 0;
            for (std::size_t at = lowered.find(use); at != std::string::npos;
                 at = lowered.find(use, at + 1))
                ++uses;
            drop = uses <= 1;  // only the definition itself
        }
        if (drop) {
            ++removed;
            continue;
        }
        out += line;
        if (n + 1 < lines.size() || ends_with_newline) out += '\n';
    }
    return out;
}

}  // namespace

bool is_hidden_code_point(char32_t c) {
    switch (c) {
        case 0x00AD:  // soft hyphen
        case 0x061C:  // Arabic letter mark
        case 0x180E:  // Mongolian vowel separator
        case 0x200B:  // zero-width space
        case 0x200C:  // zero-width non-joiner
        case 0x200D:  // zero-width joiner
        case 0x200E:  // left-to-right mark
        case 0x200F:  // right-to-left mark
        case 0x2060:  // word joiner
        case 0x2061:  // function application … invisible plus
        case 0x2062:
        case 0x2063:
        case 0x2064:
        case 0xFEFF:  // zero-width no-break space (BOM)
            return true;
        default:
            break;
    }
    return (c >= 0x202A && c <= 0x202E) ||    // embeddings and overrides
           (c >= 0x2066 && c <= 0x2069) ||    // isolates
           (c >= 0xE0000 && c <= 0xE007F) ||  // tag characters
           (c >= 0xE0100 && c <= 0xE01EF);    // variation selectors supplement
}

VisibleText visible_text(std::string_view markdown) {
    VisibleText result;
    std::string kept;
    kept.reserve(markdown.size());
    for (std::size_t i = 0; i < markdown.size();) {
        const std::size_t n = utf8_length(markdown, i);
        if (n >= 2 && is_hidden_code_point(utf8_code_point(markdown, i, n))) {
            ++result.characters;
            i += n;
            continue;
        }
        const std::size_t step = n >= 2 ? n : 1;
        kept.append(markdown.substr(i, step));
        i += step;
    }
    const std::string uncommented = without_comments(kept, result.comments);
    result.text = without_unreferenced_definitions(uncommented, result.comments);
    return result;
}

}  // namespace cocode
