#include "core/glob.h"

#include <string>

namespace cocode {
namespace {

// One character against a class "[...]" at the start of `glob`; `length` gets the class's
// length, 0 when it has no closing ']' (then '[' is an ordinary character).
bool class_match(std::string_view glob, char c, std::size_t& length) {
    std::size_t i = 1;
    bool negate = i < glob.size() && (glob[i] == '!' || glob[i] == '^');
    if (negate) ++i;
    bool matched = false;
    bool first = true;
    for (; i < glob.size() && (glob[i] != ']' || first); ++i, first = false) {
        char low = glob[i];
        char high = low;
        if (i + 2 < glob.size() && glob[i + 1] == '-' && glob[i + 2] != ']') {
            high = glob[i + 2];
            i += 2;
        }
        if (low <= c && c <= high) matched = true;
    }
    if (i >= glob.size()) {
        length = 0;
        return false;
    }
    length = i + 1;
    return matched != negate;
}

bool match_from(std::string_view glob, std::string_view path) {
    while (!glob.empty()) {
        if (glob.substr(0, 2) == "**") {
            glob.remove_prefix(2);
            const bool whole_segments = !glob.empty() && glob.front() == '/';
            if (whole_segments) glob.remove_prefix(1);
            if (glob.empty()) return true;
            for (std::size_t i = 0; i <= path.size(); ++i) {
                if (whole_segments && i > 0 && path[i - 1] != '/') continue;
                if (match_from(glob, path.substr(i))) return true;
            }
            return false;
        }
        const char g = glob.front();
        if (g == '*') {
            glob.remove_prefix(1);
            for (std::size_t i = 0; i <= path.size(); ++i) {
                if (match_from(glob, path.substr(i))) return true;
                if (i < path.size() && path[i] == '/') break;
            }
            return false;
        }
        if (path.empty()) return false;
        const char c = path.front();
        if (g == '?') {
            if (c == '/') return false;
            glob.remove_prefix(1);
        } else if (g == '[') {
            std::size_t length = 0;
            bool ok = class_match(glob, c, length);
            if (length == 0) {  // no closing ']': a literal '['
                if (c != '[') return false;
                glob.remove_prefix(1);
            } else {
                if (!ok || c == '/') return false;
                glob.remove_prefix(length);
            }
        } else {
            if (g == '\\' && glob.size() > 1) glob.remove_prefix(1);
            if (glob.front() != c) return false;
            glob.remove_prefix(1);
        }
        path.remove_prefix(1);
    }
    return path.empty();
}

}  // namespace

bool glob_match(std::string_view glob, std::string_view path) {
    std::string pattern(glob);
    if (!pattern.empty() && pattern.back() == '/') pattern += "**";
    if (pattern.find('/') == std::string::npos) pattern = "**/" + pattern;
    std::string_view g = pattern;
    if (!g.empty() && g.front() == '/') g.remove_prefix(1);
    // A glob naming a folder covers what is inside it, as in .gitignore: `docs` matches
    // docs/guide.md. So the path matches when it, or one of its parent folders, does.
    for (std::size_t end = path.size(); end != std::string_view::npos && end > 0;
         end = path.rfind('/', end - 1)) {
        if (match_from(g, path.substr(0, end))) return true;
    }
    return false;
}

std::optional<std::string> glob_problem(std::string_view glob) {
    if (glob.empty()) return "an empty pattern";
    if (glob.find("***") != std::string_view::npos) return "`***` (** matches any folders)";
    for (std::size_t i = 0; i < glob.size(); ++i) {
        if (glob[i] != '[') continue;
        std::size_t close = glob.find(']', i + 2);
        if (close == std::string_view::npos) return "a '[' without its ']'";
        for (std::size_t k = i + 1; k + 2 < close; ++k)
            if (glob[k + 1] == '-' && glob[k + 2] != ']' && glob[k] > glob[k + 2])
                return "a range from high to low in [" +
                       std::string(glob.substr(i + 1, close - i - 1)) + "]";
        i = close;
    }
    std::size_t start = 0;
    while (start <= glob.size()) {
        std::size_t end = glob.find('/', start);
        if (end == std::string_view::npos) end = glob.size();
        const std::string_view segment = glob.substr(start, end - start);
        if (segment == "..") return "a '..' segment (patterns are relative to the repository)";
        if (segment.find("**") != std::string_view::npos && segment != "**")
            return "`**` inside a segment (write it as a whole segment: src/**/test_*)";
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace cocode
