#include "core/yaml_json.h"

#include <yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <vector>

#include "core/utf8.h"

namespace cocode {
namespace {

using json = nlohmann::ordered_json;

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// A plain scalar as YAML 1.2's core schema reads it.
json resolve_plain(const std::string& s) {
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    std::string_view body = s;
    const bool negative = body.front() == '-';
    if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
    if (all_digits(body)) {
        errno = 0;
        if (negative) {
            const long long v = std::strtoll(s.c_str(), nullptr, 10);
            if (errno == 0) return v;
        } else {
            const unsigned long long v = std::strtoull(s.c_str() + (s[0] == '+'), nullptr, 10);
            if (errno == 0) return v;
        }
        return s;  // out of range: kept as written
    }
    if (body == ".inf" || body == ".Inf" || body == ".INF")
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    std::size_t i = 0;
    std::size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
    if (i < body.size() && body[i] == '.') {
        ++i;
        while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
    }
    if (digits == 0) return s;
    if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
        ++i;
        if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
        if (!all_digits(body.substr(i))) return s;
        i = body.size();
    }
    if (i != body.size()) return s;
    return std::strtod(s.c_str(), nullptr);
}

struct Parser {
    yaml_parser_t parser{};
    Parser() { yaml_parser_initialize(&parser); }
    ~Parser() { yaml_parser_delete(&parser); }
};

struct Event {
    yaml_event_t event{};
    bool held = false;
    ~Event() {
        if (held) yaml_event_delete(&event);
    }
};

}  // namespace

Result<json> yaml_to_json(std::string_view text, std::string_view source) {
    Parser p;
    yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
    auto fail = [&](std::size_t line, const std::string& what) -> Error {
        return Error::usage(std::string(source) + " line " + std::to_string(line) + ": " + what);
    };

    // Containers being built; a mapping waits for its key's value.
    struct Frame {
        json value;
        std::optional<std::string> key;  // a mapping's pending key
    };
    std::vector<Frame> stack;
    std::optional<json> document;
    while (true) {
        Event e;
        if (!yaml_parser_parse(&p.parser, &e.event)) {
            const std::size_t line = p.parser.problem_mark.line + 1;
            std::string what = p.parser.problem ? p.parser.problem : "not YAML";
            if (p.parser.context) what = std::string(p.parser.context) + ": " + what;
            return fail(line, what);
        }
        e.held = true;
        const std::size_t line = e.event.start_mark.line + 1;
        json scalar;
        bool have_value = false;
        switch (e.event.type) {
            case YAML_STREAM_END_EVENT:
                return document.value_or(json(nullptr));
            case YAML_DOCUMENT_START_EVENT:
                if (document) return *document;  // the first document is the envelope
                break;
            case YAML_ALIAS_EVENT:
                return fail(line, "aliases (*name) are not read here; write the value out");
            case YAML_MAPPING_START_EVENT:
            case YAML_SEQUENCE_START_EVENT: {
                if (e.event.type == YAML_MAPPING_START_EVENT ? e.event.data.mapping_start.anchor
                                                             : e.event.data.sequence_start.anchor)
                    return fail(line, "anchors (&name) are not read here");
                if (!stack.empty() && stack.back().value.is_object() && !stack.back().key)
                    return fail(line, "a key must be a plain value, not a list or mapping");
                if (stack.size() > 64) return fail(line, "nested more than 64 levels deep");
                stack.push_back(
                    {e.event.type == YAML_MAPPING_START_EVENT ? json::object() : json::array(),
                     std::nullopt});
                break;
            }
            case YAML_MAPPING_END_EVENT:
            case YAML_SEQUENCE_END_EVENT: {
                scalar = std::move(stack.back().value);
                stack.pop_back();
                have_value = true;
                break;
            }
            case YAML_SCALAR_EVENT: {
                const auto& s = e.event.data.scalar;
                if (s.anchor) return fail(line, "anchors (&name) are not read here");
                std::string value(reinterpret_cast<const char*>(s.value), s.length);
                const std::string tag = s.tag ? reinterpret_cast<const char*>(s.tag) : "";
                if (!tag.empty() && tag != "!" && tag.rfind("tag:yaml.org,2002:", 0) != 0)
                    return fail(line, "tag " + tag + " is not read here");
                if (tag == "tag:yaml.org,2002:str" || (s.style != YAML_PLAIN_SCALAR_STYLE) ||
                    tag == "!")
                    scalar = value;
                else
                    scalar = resolve_plain(value);
                have_value = true;
                break;
            }
            default:
                break;
        }
        if (!have_value) continue;
        if (stack.empty()) {  // the document's root
            document = std::move(scalar);
            continue;
        }
        Frame& top = stack.back();
        if (top.value.is_array()) {
            top.value.push_back(std::move(scalar));
        } else if (!top.key) {  // a list or mapping as a key was refused where it opened
            std::string key = scalar.is_string() ? scalar.get<std::string>() : scalar.dump();
            if (top.value.contains(key)) return fail(line, "the key '" + key + "' is given twice");
            top.key = std::move(key);
        } else {
            top.value[*top.key] = std::move(scalar);
            top.key.reset();
        }
    }
}

namespace {

struct Emitter {
    yaml_emitter_t emitter{};
    std::string out;
    Emitter() {
        yaml_emitter_initialize(&emitter);
        yaml_emitter_set_output(
            &emitter,
            [](void* data, unsigned char* buffer, size_t size) -> int {
                static_cast<std::string*>(data)->append(reinterpret_cast<char*>(buffer), size);
                return 1;
            },
            &out);
        yaml_emitter_set_unicode(&emitter, 1);
        yaml_emitter_set_width(&emitter, -1);
        yaml_emitter_set_indent(&emitter, 2);
    }
    ~Emitter() { yaml_emitter_delete(&emitter); }
    void emit(yaml_event_t& event) { yaml_emitter_emit(&emitter, &event); }
};

yaml_char_t* chars(const std::string& s) {
    return reinterpret_cast<yaml_char_t*>(const_cast<char*>(s.c_str()));
}

// libyaml writes only well-formed UTF-8: any other byte becomes U+FFFD.
std::string well_formed(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            out.push_back(text[i++]);
            continue;
        }
        const std::size_t n = utf8_length(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        out.append(text, i, n);
        i += n;
    }
    return out;
}

void emit_scalar(Emitter& e, const std::string& raw, yaml_scalar_style_t style) {
    const std::string text = well_formed(raw);
    yaml_event_t event;
    yaml_scalar_event_initialize(&event, nullptr, nullptr, chars(text),
                                 static_cast<int>(text.size()), 1, 1, style);
    e.emit(event);
}

void emit_value(Emitter& e, const json& value) {
    yaml_event_t event;
    switch (value.type()) {
        case json::value_t::object:
            yaml_mapping_start_event_initialize(
                &event, nullptr, nullptr, 1,
                value.empty() ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
            e.emit(event);
            for (const auto& [key, item] : value.items()) {
                emit_value(e, json(key));
                emit_value(e, item);
            }
            yaml_mapping_end_event_initialize(&event);
            e.emit(event);
            return;
        case json::value_t::array:
            yaml_sequence_start_event_initialize(
                &event, nullptr, nullptr, 1,
                value.empty() ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
            e.emit(event);
            for (const auto& item : value) emit_value(e, item);
            yaml_sequence_end_event_initialize(&event);
            e.emit(event);
            return;
        case json::value_t::string: {
            const std::string& s = value.get_ref<const std::string&>();
            yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
            if (s.find('\n') != std::string::npos)
                style = YAML_LITERAL_SCALAR_STYLE;  // libyaml quotes it when a block cannot hold it
            else if (!resolve_plain(s).is_string())
                style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
            emit_scalar(e, s, style);
            return;
        }
        case json::value_t::null:
            emit_scalar(e, "null", YAML_PLAIN_SCALAR_STYLE);
            return;
        case json::value_t::number_float: {
            const double d = value.get<double>();
            if (std::isnan(d))
                emit_scalar(e, ".nan", YAML_PLAIN_SCALAR_STYLE);
            else if (std::isinf(d))
                emit_scalar(e, d > 0 ? ".inf" : "-.inf", YAML_PLAIN_SCALAR_STYLE);
            else
                emit_scalar(e, value.dump(), YAML_PLAIN_SCALAR_STYLE);
            return;
        }
        default:  // booleans, integers
            emit_scalar(e, value.dump(), YAML_PLAIN_SCALAR_STYLE);
            return;
    }
}

}  // namespace

std::string json_to_yaml(const json& value) {
    Emitter e;
    yaml_event_t event;
    yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING);
    e.emit(event);
    yaml_document_start_event_initialize(&event, nullptr, nullptr, nullptr, 1);
    e.emit(event);
    emit_value(e, value);
    yaml_document_end_event_initialize(&event, 1);
    e.emit(event);
    yaml_stream_end_event_initialize(&event);
    e.emit(event);
    yaml_emitter_flush(&e.emitter);
    return e.out;
}

}  // namespace cocode
