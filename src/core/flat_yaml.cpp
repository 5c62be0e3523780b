#include "core/flat_yaml.h"

#include <cctype>
#include <cstdio>

namespace cocode {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool valid_key(std::string_view key) {
    if (key.empty()) return false;
    for (char c : key) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
            return false;
    }
    return true;
}

// Reads a double-quoted scalar with JSON-style escapes; nullopt when malformed.
std::optional<std::string> unquote_double(std::string_view s) {
    if (s.size() < 2 || s.front() != '"' || s.back() != '"') return std::nullopt;
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
        char c = s[i];
        if (c != '\\') {
            if (c == '"') return std::nullopt;
            out.push_back(c);
            continue;
        }
        if (++i + 1 > s.size() - 1) return std::nullopt;
        switch (s[i]) {
            case '"':
                out.push_back('"');
                break;
            case '\\':
                out.push_back('\\');
                break;
            case '/':
                out.push_back('/');
                break;
            case 'n':
                out.push_back('\n');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 'x': {
                if (i + 3 > s.size() - 1) return std::nullopt;
                unsigned value = 0;
                if (std::sscanf(std::string(s.substr(i + 1, 2)).c_str(), "%2x", &value) != 1)
                    return std::nullopt;
                out.push_back(static_cast<char>(value));
                i += 2;
                break;
            }
            default:
                return std::nullopt;
        }
    }
    return out;
}

std::optional<std::string> unquote_single(std::string_view s) {
    if (s.size() < 2 || s.front() != '\'' || s.back() != '\'') return std::nullopt;
    std::string out;
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] == '\'') {
            if (i + 2 < s.size() && s[i + 1] == '\'') {
                out.push_back('\'');
                ++i;
                continue;
            }
            return std::nullopt;
        }
        out.push_back(s[i]);
    }
    return out;
}

bool looks_like_other_type(std::string_view v) {
    if (v.empty()) return true;
    static constexpr std::string_view words[] = {"true", "false", "yes",   "no",   "on",   "off",
                                                 "null", "True",  "False", "Null", "NULL", "~",
                                                 "TRUE", "FALSE", "Yes",   "No",   "YES",  "NO"};
    for (auto w : words)
        if (v == w) return true;
    bool numeric = true;
    for (char c : v) {
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+' &&
            c != 'e' && c != 'E' && c != '_')
            numeric = false;
    }
    return numeric;
}

// Characters that would change how a YAML reader sees an unquoted scalar.
bool has_special_chars(std::string_view v) {
    if (v.empty() || v.front() == ' ' || v.back() == ' ') return true;
    static constexpr std::string_view leading = "!&*?{}[],#|>@`\"'%:";
    if (leading.find(v.front()) != std::string_view::npos) return true;
    if (v.front() == '-' && (v.size() == 1 || !std::isdigit(static_cast<unsigned char>(v[1]))))
        return true;
    for (char c : v) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == '"' || c == '\\' || c == '#') return true;
    }
    return v.find(": ") != std::string_view::npos || v.back() == ':';
}

std::string quote(std::string_view v) {
    std::string out = "\"";
    for (char c : v) {
        unsigned char u = static_cast<unsigned char>(c);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (u < 0x20 || u == 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\x%02x", u);
                    out += buf;
                } else {
                    out.push_back(c);
                }
        }
    }
    out += '"';
    return out;
}

}  // namespace

Result<FlatYaml> FlatYaml::parse(std::string_view text, std::string_view source) {
    FlatYaml doc;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        std::string_view t = trim(line);
        if (t.empty() || t.front() == '#' || t == "---") continue;
        auto where = [&] { return std::string(source) + ":" + std::to_string(line_no) + ": "; };
        std::size_t colon = t.find(':');
        if (colon == std::string_view::npos || line.front() == ' ' || line.front() == '\t')
            return Error::general(where() + "expected `key: value`");
        std::string_view key = trim(t.substr(0, colon));
        std::string_view raw = trim(t.substr(colon + 1));
        if (!valid_key(key))
            return Error::general(where() + "expected a key of letters, digits, _ - .");
        Entry entry{std::string(key), {}, false};
        if (!raw.empty() && raw.front() == '"') {
            auto v = unquote_double(raw);
            if (!v)
                return Error::general(where() + "unterminated or malformed double-quoted value");
            entry.value = std::move(*v);
        } else if (!raw.empty() && raw.front() == '\'') {
            auto v = unquote_single(raw);
            if (!v)
                return Error::general(where() + "unterminated or malformed single-quoted value");
            entry.value = std::move(*v);
        } else {
            std::size_t comment = raw.find(" #");
            entry.value = std::string(trim(raw.substr(0, comment)));
            entry.plain = true;
            if (entry.value == "~" || entry.value == "null") entry.value.clear();
        }
        doc.slot(entry.key) = std::move(entry);
    }
    return doc;
}

std::optional<std::string> FlatYaml::get(std::string_view key) const {
    for (const Entry& e : entries_)
        if (e.key == key) return e.value;
    return std::nullopt;
}

FlatYaml::Entry& FlatYaml::slot(std::string_view key) {
    for (Entry& e : entries_)
        if (e.key == key) return e;
    entries_.push_back(Entry{std::string(key), {}, false});
    return entries_.back();
}

void FlatYaml::set(std::string_view key, std::string_view value) {
    Entry& e = slot(key);
    e.value = std::string(value);
    e.plain = false;
}

void FlatYaml::set_number(std::string_view key, long long value) {
    Entry& e = slot(key);
    e.value = std::to_string(value);
    e.plain = true;
}

std::string FlatYaml::render() const {
    std::string out;
    for (const Entry& e : entries_) {
        out += e.key;
        out += ": ";
        // A plain entry may look like a number or bool (that is what it is); a string may not.
        bool bare = !has_special_chars(e.value) && (e.plain || !looks_like_other_type(e.value));
        out += bare ? e.value : quote(e.value);
        out += '\n';
    }
    return out;
}

}  // namespace cocode
