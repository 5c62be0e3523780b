#include "core/flat_yaml.h"

#include <yaml.h>

#include <cctype>
#include <cstdio>
#include <optional>

#include "core/utf8.h"

namespace cocode {
namespace {

bool valid_key(std::string_view key) {
    if (key.empty()) return false;
    for (char c : key) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
            return false;
    }
    return true;
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

// Whether the code point must be written as an escape: outside YAML's printable set (C0 and
// C1 controls, DEL, U+FFFE/U+FFFF; a YAML reader refuses the whole file) or a line break to
// YAML although not to us (NEL, LS, PS: a reader would fold them away).
bool needs_escape(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

// Characters that would change how a YAML reader sees an unquoted scalar.
bool has_special_chars(std::string_view v) {
    if (v.empty() || v.front() == ' ' || v.back() == ' ') return true;
    static constexpr std::string_view leading = "!&*?{}[],#|>@`\"'%:";
    if (leading.find(v.front()) != std::string_view::npos) return true;
    if (v.front() == '-' && (v.size() == 1 || !std::isdigit(static_cast<unsigned char>(v[1]))))
        return true;
    for (std::size_t i = 0; i < v.size();) {
        const auto u = static_cast<unsigned char>(v[i]);
        if (u < 0x80) {
            if (needs_escape(u) || u == '"' || u == '\\' || u == '#') return true;
            ++i;
            continue;
        }
        const std::size_t n = utf8_length(v, i);
        if (n == 0 || needs_escape(utf8_code_point(v, i, n))) return true;
        i += n;
    }
    return v.find(": ") != std::string_view::npos || v.back() == ':';
}

// A double-quoted scalar any YAML reader reads back as `v`; bytes that are not UTF-8 (an
// agent's stderr in an error summary can hold any) are written as U+FFFD.
std::string quote(std::string_view v) {
    std::string out = "\"";
    char buf[16];
    for (std::size_t i = 0; i < v.size();) {
        const auto u = static_cast<unsigned char>(v[i]);
        const std::size_t n = u < 0x80 ? 1 : utf8_length(v, i);
        if (n == 0) {
            out += "\\uFFFD";
            ++i;
            continue;
        }
        const char32_t cp = n == 1 ? u : utf8_code_point(v, i, n);
        switch (cp) {
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
            case 0x85:
                out += "\\N";
                break;
            case 0x2028:
                out += "\\L";
                break;
            case 0x2029:
                out += "\\P";
                break;
            default:
                if (needs_escape(cp)) {
                    std::snprintf(buf, sizeof buf, cp <= 0xff ? "\\x%02x" : "\\u%04x",
                                  static_cast<unsigned>(cp));
                    out += buf;
                } else {
                    out.append(v.substr(i, n));
                }
        }
        i += n;
    }
    out += '"';
    return out;
}

}  // namespace

Result<FlatYaml> FlatYaml::parse(std::string_view text, std::string_view source) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return Error::general(std::string(source) + ": cannot start a YAML parser");
    struct Closer {
        yaml_parser_t* p;
        ~Closer() { yaml_parser_delete(p); }
    } closer{&parser};
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
    auto failure = [&](const std::string& what, std::size_t line) {
        return Error::general(std::string(source) + ":" + std::to_string(line + 1) + ": " + what);
    };

    FlatYaml doc;
    int depth = 0;                   // of mappings and sequences
    bool in_root = false;            // inside the document's top mapping
    std::optional<std::string> key;  // read, waiting for its value
    int skipping = 0;                // depth of a nested value being skipped
    while (true) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            std::string what = parser.problem ? parser.problem : "not YAML";
            if (parser.context)
                what += " (" + std::string(parser.context) + " at line " +
                        std::to_string(parser.context_mark.line + 1) + ")";
            return failure(what, parser.problem_mark.line);
        }
        struct EventCloser {
            yaml_event_t* e;
            ~EventCloser() { yaml_event_delete(e); }
        } event_closer{&event};
        const auto line = event.start_mark.line;
        switch (event.type) {
            case YAML_STREAM_END_EVENT:
                return doc;
            case YAML_MAPPING_START_EVENT:
            case YAML_SEQUENCE_START_EVENT:
                ++depth;
                if (depth == 1) {
                    if (event.type != YAML_MAPPING_START_EVENT)
                        return failure("expected `key: value` lines", line);
                    in_root = true;
                } else if (skipping == 0) {
                    if (!key) return failure("expected a key of letters, digits, _ - .", line);
                    skipping = depth;  // a value that is not a scalar: not one of run-info's
                }
                break;
            case YAML_MAPPING_END_EVENT:
            case YAML_SEQUENCE_END_EVENT:
                if (skipping == depth) {
                    skipping = 0;
                    key.reset();
                }
                --depth;
                if (depth == 0) in_root = false;
                break;
            case YAML_SCALAR_EVENT: {
                if (skipping > 0) break;
                const std::string value(reinterpret_cast<const char*>(event.data.scalar.value),
                                        event.data.scalar.length);
                if (!in_root) {
                    if (depth == 0 && value.empty()) break;  // an empty document
                    return failure("expected `key: value` lines", line);
                }
                if (!key) {
                    if (!valid_key(value))
                        return failure("expected a key of letters, digits, _ - .", line);
                    key = value;
                    break;
                }
                Entry entry{*key, value, event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE};
                if (entry.plain &&
                    (value == "~" || value == "null" || value == "Null" || value == "NULL"))
                    entry.value.clear();
                doc.slot(entry.key) = std::move(entry);
                key.reset();
                break;
            }
            case YAML_ALIAS_EVENT:
                if (skipping == 0) return failure("aliases are not expected here", line);
                break;
            default:
                break;
        }
    }
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
