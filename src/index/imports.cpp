#include "index/imports.h"

#include <algorithm>
#include <array>

namespace cocode::index {
namespace {

std::string_view extension_of(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    const std::size_t dot = path.rfind('.');
    if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash))
        return {};
    return path.substr(dot + 1);
}

std::string_view file_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string stem_of(std::string_view name) {
    // "login.test.ts" -> "login.test"; "index.d.ts" -> "index"
    std::string s(name);
    if (s.size() > 5 && s.compare(s.size() - 5, 5, ".d.ts") == 0) return s.substr(0, s.size() - 5);
    const std::size_t dot = s.rfind('.');
    return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

constexpr std::array<std::string_view, 8> kJsExtensions = {".ts",  ".tsx", ".d.ts", ".js",
                                                           ".jsx", ".mjs", ".cjs",  ".mts"};

}  // namespace

Language language_of(std::string_view path) {
    const std::string_view ext = extension_of(path);
    static const std::map<std::string_view, Language> kByExtension = {
        {"c", Language::c_family},     {"h", Language::c_family},
        {"cc", Language::c_family},    {"cpp", Language::c_family},
        {"cxx", Language::c_family},   {"hpp", Language::c_family},
        {"hh", Language::c_family},    {"hxx", Language::c_family},
        {"ipp", Language::c_family},   {"inl", Language::c_family},
        {"py", Language::python},      {"pyi", Language::python},
        {"go", Language::go},          {"js", Language::javascript},
        {"jsx", Language::javascript}, {"mjs", Language::javascript},
        {"cjs", Language::javascript}, {"ts", Language::javascript},
        {"tsx", Language::javascript}, {"mts", Language::javascript},
        {"cts", Language::javascript}};
    auto it = kByExtension.find(ext);
    return it == kByExtension.end() ? Language::other : it->second;
}

std::vector<ImportRef> scan_js_imports(std::string_view content) {
    std::vector<ImportRef> out;
    long line = 1;
    auto quoted_at = [&](std::size_t i) -> std::optional<std::pair<std::string, std::size_t>> {
        while (i < content.size() && is_space(content[i])) ++i;
        if (i < content.size() && content[i] == '(') {
            ++i;
            while (i < content.size() && is_space(content[i])) ++i;
        }
        if (i >= content.size() || (content[i] != '\'' && content[i] != '"' && content[i] != '`'))
            return std::nullopt;
        const char q = content[i];
        const std::size_t end = content.find(q, i + 1);
        if (end == std::string_view::npos || end - i > 512) return std::nullopt;
        const std::string_view spec = content.substr(i + 1, end - i - 1);
        if (spec.empty() || spec.find('\n') != std::string_view::npos ||
            spec.find("${") != std::string_view::npos)
            return std::nullopt;
        return std::make_pair(std::string(spec), end + 1);
    };
    auto word_at = [&](std::size_t i, std::string_view word) {
        if (content.compare(i, word.size(), word) != 0) return false;
        const bool before_ok =
            i == 0 || !(std::isalnum(static_cast<unsigned char>(content[i - 1])) ||
                        content[i - 1] == '_' || content[i - 1] == '$' || content[i - 1] == '.');
        const std::size_t after = i + word.size();
        const bool after_ok =
            after >= content.size() || !(std::isalnum(static_cast<unsigned char>(content[after])) ||
                                         content[after] == '_' || content[after] == '$');
        return before_ok && after_ok;
    };
    for (std::size_t i = 0; i < content.size(); ++i) {
        const char c = content[i];
        if (c == '\n') {
            ++line;
            continue;
        }
        if (c != 'f' && c != 'r' && c != 'i') continue;
        for (std::string_view word : {"from", "require", "import"}) {
            if (!word_at(i, word)) continue;
            if (auto spec = quoted_at(i + word.size())) {
                out.push_back({spec->first, line, false});
                for (std::size_t k = i; k < spec->second; ++k) line += content[k] == '\n';
                i = spec->second - 1;
            }
            break;
        }
    }
    return out;
}

std::string import_key(std::string_view spec, Language language) {
    std::string s(spec);
    if (language == Language::python) {
        while (!s.empty() && s.back() == '.') s.pop_back();
        const std::size_t dot = s.rfind('.');
        s = dot == std::string::npos ? s : s.substr(dot + 1);
        return s.empty() ? "__init__" : s;
    }
    while (!s.empty() && s.back() == '/') s.pop_back();
    std::string name(file_name(s));
    if (language == Language::javascript) {
        for (std::string_view ext : kJsExtensions)
            if (name.size() > ext.size() &&
                name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
                name.resize(name.size() - ext.size());
                break;
            }
    }
    return name;
}

std::vector<std::string> keys_of(std::string_view path) {
    std::vector<std::string> keys;
    auto add = [&](std::string key) {
        if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.push_back(std::move(key));
    };
    const std::string_view name = file_name(path);
    add(std::string(name));
    add(stem_of(name));
    const std::string folder = folder_of(path);
    if (!folder.empty()) add(std::string(file_name(folder)));
    return keys;
}

std::string folder_of(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

std::optional<std::string> normal_path(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t at = 0;
    while (at <= path.size()) {
        std::size_t slash = path.find('/', at);
        if (slash == std::string_view::npos) slash = path.size();
        const std::string_view part = path.substr(at, slash - at);
        if (part == "..") {
            if (parts.empty()) return std::nullopt;
            parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        at = slash + 1;
    }
    std::string out;
    for (auto part : parts) {
        if (!out.empty()) out += '/';
        out += part;
    }
    return out;
}

Resolver::Resolver(const std::vector<std::string>& files,
                   const std::function<std::optional<std::string>(const std::string&)>& read)
    : files_(files.begin(), files.end()) {
    for (const auto& path : files) {
        by_name_[std::string(file_name(path))].push_back(path);
        for (std::string folder = folder_of(path); !folder.empty(); folder = folder_of(folder))
            if (!folders_.insert(folder).second) break;
        if (file_name(path) == "go.mod") {
            auto text = read(path);
            if (!text) continue;
            std::size_t at = 0;
            while (at < text->size()) {
                const std::size_t nl = text->find('\n', at);
                std::string_view line = std::string_view(*text).substr(
                    at, (nl == std::string::npos ? text->size() : nl) - at);
                at = nl == std::string::npos ? text->size() : nl + 1;
                if (line.rfind("module", 0) != 0) continue;
                line.remove_prefix(6);
                while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
                while (!line.empty() && (is_space(line.back()) || line.back() == '"'))
                    line.remove_suffix(1);
                if (!line.empty() && line.front() == '"') line.remove_prefix(1);
                if (!line.empty()) go_modules_.emplace_back(std::string(line), folder_of(path));
                break;
            }
        }
    }
    // The longest module path first: a nested module wins over the one around it.
    std::sort(go_modules_.begin(), go_modules_.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::optional<std::string> Resolver::by_suffix(const std::string& tail) const {
    auto it = by_name_.find(std::string(file_name(tail)));
    if (it == by_name_.end()) return std::nullopt;
    // The shortest path that ends in /tail: the include folder nearest the root.
    std::optional<std::string> best;
    for (const auto& path : it->second) {
        if (path != tail && (path.size() <= tail.size() ||
                             path.compare(path.size() - tail.size(), tail.size(), tail) != 0 ||
                             path[path.size() - tail.size() - 1] != '/'))
            continue;
        if (!best || path.size() < best->size()) best = path;
    }
    return best;
}

std::optional<std::string> Resolver::resolve(const std::string& from, const ImportRef& ref) const {
    const std::string folder = folder_of(from);
    const std::string& spec = ref.spec;
    auto join = [](const std::string& a, const std::string& b) {
        return normal_path(a.empty() ? b : a + "/" + b);
    };
    switch (language_of(from)) {
        case Language::c_family: {
            if (auto p = join(folder, spec); p && has(*p)) return p;
            if (auto p = normal_path(spec); p && has(*p)) return p;
            if (auto p = normal_path(spec)) return by_suffix(*p);
            return std::nullopt;
        }
        case Language::python: {
            std::size_t dots = 0;
            while (dots < spec.size() && spec[dots] == '.') ++dots;
            std::string rest = spec.substr(dots);
            std::replace(rest.begin(), rest.end(), '.', '/');
            std::vector<std::string> candidates;
            auto add = [&](const std::string& base) {
                if (rest.empty()) {
                    candidates.push_back(base.empty() ? "__init__.py" : base + "/__init__.py");
                    return;
                }
                const std::string stem = base.empty() ? rest : base + "/" + rest;
                candidates.push_back(stem + ".py");
                candidates.push_back(stem + ".pyi");
                candidates.push_back(stem + "/__init__.py");
            };
            if (dots > 0) {
                std::string base = folder;
                for (std::size_t up = 1; up < dots; ++up) {
                    if (base.empty()) return std::nullopt;
                    base = folder_of(base);
                }
                add(base);
            } else {
                add(folder);  // Python 2's implicit relative import, and scripts run from here
                add("");
            }
            for (const auto& c : candidates)
                if (auto p = normal_path(c); p && has(*p)) return p;
            if (dots == 0 && !rest.empty()) {  // a source root below the repository's (src/)
                if (auto p = by_suffix(rest + ".py")) return p;
                if (auto p = by_suffix(rest + "/__init__.py")) return p;
            }
            return std::nullopt;
        }
        case Language::go: {
            for (const auto& [module, root] : go_modules_) {
                if (spec != module && spec.rfind(module + "/", 0) != 0) continue;
                const std::string rest =
                    spec.size() > module.size() ? spec.substr(module.size() + 1) : "";
                auto dir = join(root, rest);
                if (dir && (dir->empty() || folders_.count(*dir))) return *dir + "/";
                return std::nullopt;
            }
            return std::nullopt;
        }
        case Language::javascript: {
            if (spec.rfind("./", 0) != 0 && spec.rfind("../", 0) != 0 && spec != "." &&
                spec != "..")
                return std::nullopt;  // a package
            auto base = join(folder, spec);
            if (!base) return std::nullopt;
            if (has(*base)) return base;
            for (std::string_view ext : kJsExtensions)
                if (has(*base + std::string(ext))) return *base + std::string(ext);
            // TypeScript's ESM style names the compiled file: ./login.js for login.ts.
            for (std::string_view js : {".js", ".jsx", ".mjs"}) {
                if (base->size() <= js.size() ||
                    base->compare(base->size() - js.size(), js.size(), js) != 0)
                    continue;
                const std::string stem = base->substr(0, base->size() - js.size());
                for (std::string_view ts : {".ts", ".tsx", ".mts"})
                    if (has(stem + std::string(ts))) return stem + std::string(ts);
            }
            for (std::string_view ext : kJsExtensions) {
                const std::string index =
                    (base->empty() ? "" : *base + "/") + "index" + std::string(ext);
                if (has(index)) return index;
            }
            return std::nullopt;
        }
        case Language::other:
            break;
    }
    return std::nullopt;
}

}  // namespace cocode::index
