#include "core/glob.h"

#include <string>
#include <vector>

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

// A glob, read once into the steps it is made of.
struct Step {
    enum class Kind { literal, any, set, star, segments, anything } kind;
    char c = 0;            // literal
    std::string_view set;  // set: the class "[...]", brackets included
};

std::vector<Step> steps_of(std::string_view glob) {
    std::vector<Step> out;
    while (!glob.empty()) {
        if (glob.substr(0, 2) == "**") {
            glob.remove_prefix(2);
            if (glob.size() > 1 && glob.front() == '/') {  // `**/`: whole segments, maybe none
                glob.remove_prefix(1);
                out.push_back({Step::Kind::segments, 0, {}});
            } else {  // `**` or `**/` last (everything below), or inside a segment (anything)
                if (!glob.empty() && glob.front() == '/') glob.remove_prefix(1);
                out.push_back({Step::Kind::anything, 0, {}});
            }
            continue;
        }
        const char g = glob.front();
        if (g == '*') {
            out.push_back({Step::Kind::star, 0, {}});
            glob.remove_prefix(1);
        } else if (g == '?') {
            out.push_back({Step::Kind::any, 0, {}});
            glob.remove_prefix(1);
        } else if (g == '[') {
            std::size_t length = 0;
            class_match(glob, 'a', length);
            if (length == 0) {  // no closing ']': a literal '['
                out.push_back({Step::Kind::literal, '[', {}});
                glob.remove_prefix(1);
            } else {
                out.push_back({Step::Kind::set, 0, glob.substr(0, length)});
                glob.remove_prefix(length);
            }
        } else {
            if (g == '\\' && glob.size() > 1) glob.remove_prefix(1);
            out.push_back({Step::Kind::literal, glob.front(), {}});
            glob.remove_prefix(1);
        }
    }
    return out;
}

}  // namespace

bool glob_match(std::string_view glob, std::string_view path) {
    std::string pattern(glob);
    if (!pattern.empty() && pattern.back() == '/') pattern += "**";
    if (pattern.find('/') == std::string::npos) pattern = "**/" + pattern;
    std::string_view g = pattern;
    if (!g.empty() && g.front() == '/') g.remove_prefix(1);
    const std::size_t n = path.size();
    if (n == 0) return false;
    const std::vector<Step> steps = steps_of(g);

    // match[j]: the steps from the current one on match path[j..] up to a folder boundary.
    // A glob naming a folder covers what is inside it, as in .gitignore (`docs` matches
    // docs/guide.md): the glob may end wherever the path, or one of its parent folders, ends.
    // Filled from the last step back, one row per step: O(steps x path), whatever the glob
    // (a backtracking matcher is exponential on `*a*a*a…`).
    std::vector<char> next(n + 1), row(n + 1);
    for (std::size_t j = 0; j <= n; ++j) next[j] = j > 0 && (j == n || path[j] == '/');
    for (std::size_t i = steps.size(); i-- > 0;) {
        const Step& step = steps[i];
        bool later_segment = false;  // segments: next[k] for some k > j just after a '/'
        for (std::size_t j = n + 1; j-- > 0;) {
            const bool more = j < n;
            const char c = more ? path[j] : '\0';
            switch (step.kind) {
                case Step::Kind::literal:
                    row[j] = more && c == step.c && next[j + 1];
                    break;
                case Step::Kind::any:
                    row[j] = more && c != '/' && next[j + 1];
                    break;
                case Step::Kind::set: {
                    std::size_t length = 0;
                    row[j] = more && c != '/' && class_match(step.set, c, length) && next[j + 1];
                    break;
                }
                case Step::Kind::star:
                    row[j] = next[j] || (more && c != '/' && row[j + 1]);
                    break;
                case Step::Kind::anything:
                    row[j] = next[j] || (more && row[j + 1]);
                    break;
                case Step::Kind::segments:
                    row[j] = next[j] || later_segment;
                    if (j > 0 && path[j - 1] == '/') later_segment = later_segment || next[j];
                    break;
            }
        }
        std::swap(row, next);
    }
    return next[0];
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
