#include "protocol/envelope.h"

#include <algorithm>
#include <array>

#include "core/json_text.h"
#include "core/yaml_json.h"
#include "protocol/textproto.h"

namespace cocode::protocol {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<std::string_view, 5> kRoles = {"librarian", "architect", "builder", "critic",
                                                    "interpreter"};

// The envelope's body as JSON, from either form; `kind` is "AGENT_REQUEST" or "CODALI_RESPONSE".
Result<ojson> envelope_body(std::string_view text, std::string_view kind, std::string_view header) {
    const std::string name(kind);
    std::size_t start = 0;
    while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
    if (start < text.size() && text[start] == '{') {
        auto parsed = parse_ordered_json_text(text, name, "an " + name + " object");
        if (!parsed) return std::move(parsed).error();
        ojson body = std::move(parsed).value();
        if (!body.is_object())
            return Error::usage(name + ": expected a JSON object with \"envelope\": \"" +
                                std::string(header) + "\"");
        auto it = body.find("envelope");
        if (it == body.end() || !it->is_string())
            return Error::usage(name + ": expected \"envelope\": \"" + std::string(header) +
                                "\" in the JSON object");
        const std::string said = it->get<std::string>();
        if (said != header)
            return Error::usage(name + ": envelope \"" + said + "\" is not read here; send \"" +
                                std::string(header) + "\"");
        body.erase("envelope");
        return body;
    }
    // The YAML form: the header line, then a mapping. The header's line is blanked rather than
    // cut, so that the YAML reader's line numbers are the envelope's.
    std::string yaml(text);
    const std::size_t eol = yaml.find('\n', start);
    const std::string_view first = trim_blanks(std::string_view(yaml).substr(
        start, (eol == std::string::npos ? yaml.size() : eol) - start));
    if (first != header) {
        if (first.rfind(kind, 0) == 0)
            return Error::usage(name + " line 1: \"" + std::string(first) +
                                "\" is not read here; the first line must be \"" +
                                std::string(header) + "\"");
        return Error::usage(name + " line 1: expected \"" + std::string(header) +
                            "\" as the first line, or a JSON object");
    }
    yaml.replace(start, (eol == std::string::npos ? yaml.size() : eol) - start, "");
    auto body = yaml_to_json(yaml, name);
    if (!body) return std::move(body).error();
    if (!body->is_object())
        return Error::usage(name + ": expected `key: value` lines after \"" + std::string(header) +
                            "\"");
    return std::move(body).value();
}

Error field_error(std::string_view kind, const std::string& field, const std::string& expected) {
    return Error::usage(std::string(kind) + ": " + field + ": expected " + expected);
}

// An id the model chose: text, or a number written as its digits.
std::optional<std::string> id_text(const ojson& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
    return std::nullopt;
}

Result<std::vector<std::string>> string_list(const ojson& value, std::string_view kind,
                                             const std::string& field) {
    std::vector<std::string> out;
    if (value.is_null()) return out;
    if (!value.is_array()) return field_error(kind, field, "a list of strings");
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string())
            return field_error(kind, field + "[" + std::to_string(i) + "]", "a string");
        out.push_back(value[i].get<std::string>());
    }
    return out;
}

std::string render(std::string_view header, ojson body, EnvelopeForm form) {
    if (form == EnvelopeForm::json) {
        ojson out = ojson::object();
        out["envelope"] = std::string(header);
        for (auto& [key, value] : body.items()) out[key] = std::move(value);
        return json_dump(out, 2) + "\n";
    }
    return std::string(header) + "\n" + json_to_yaml(body);
}

bool looks_like_yaml_line(std::string_view line) {
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '-' || line[0] == '#')
        return true;
    std::size_t i = 0;
    if (!(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_')) return false;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                               line[i] == '_' || line[i] == '.' || line[i] == '-'))
        ++i;
    while (i < line.size() && line[i] == ' ') ++i;
    return i < line.size() && line[i] == ':';
}

// The end of the JSON object opening at `open` (just past its closing brace), or npos. Each
// character looked at is taken from `budget`, so that an answer of many lines opening with
// a brace costs a bounded amount of scanning, not the square of its length.
std::size_t json_object_end(std::string_view text, std::size_t open, std::size_t& budget) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = open; i < text.size(); ++i) {
        if (budget == 0) return std::string_view::npos;
        --budget;
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{')
            ++depth;
        else if (c == '}' && --depth == 0)
            return i + 1;
    }
    return std::string_view::npos;
}

}  // namespace

bool is_codali_role(std::string_view role) {
    return std::find(kRoles.begin(), kRoles.end(), role) != kRoles.end();
}

std::string codali_roles() {
    std::string out;
    for (auto role : kRoles) out += (out.empty() ? "" : ", ") + std::string(role);
    return out;
}

Result<AgentRequest> parse_agent_request(std::string_view text) {
    constexpr std::string_view kind = "AGENT_REQUEST";
    auto parsed = envelope_body(text, kind, kAgentRequestHeader);
    if (!parsed) return std::move(parsed).error();
    const ojson& body = *parsed;
    AgentRequest request;
    const ojson role = body.value("role", ojson());
    if (!role.is_string() || !is_codali_role(role.get<std::string>()))
        return field_error(kind, "role", "one of " + codali_roles());
    request.role = role.get<std::string>();
    auto id = id_text(body.value("request_id", ojson()));
    if (!id || id->empty())
        return field_error(kind, "request_id", "an id of your choosing, such as \"req-1\"");
    request.request_id = *id;
    const ojson needs = body.value("needs", ojson());
    if (!needs.is_array() || needs.empty())
        return field_error(kind, "needs", "a list of needs, each `- type: …` with its fields");
    for (std::size_t i = 0; i < needs.size(); ++i) {
        const std::string field = "needs[" + std::to_string(i) + "]";
        const ojson& n = needs[i];
        if (!n.is_object() || !n.contains("type") || !n["type"].is_string() ||
            n["type"].get<std::string>().empty())
            return field_error(kind, field, "a mapping with a `type`, such as docdex.search");
        Need need;
        need.type = n["type"].get<std::string>();
        for (const auto& [key, value] : n.items())
            if (key != "type") need.fields[key] = value;
        request.needs.push_back(std::move(need));
    }
    if (body.contains("context")) {
        const ojson& context = body["context"];
        if (!context.is_object() && !context.is_null())
            return field_error(kind, "context", "a mapping with summary and constraints");
        if (context.is_object()) {
            const ojson summary = context.value("summary", ojson());
            if (!summary.is_null() && !summary.is_string())
                return field_error(kind, "context.summary", "a string");
            if (summary.is_string()) request.summary = summary.get<std::string>();
            auto constraints =
                string_list(context.value("constraints", ojson()), kind, "context.constraints");
            if (!constraints) return std::move(constraints).error();
            request.constraints = std::move(constraints).value();
            for (const auto& [key, unused] : context.items())
                if (key != "summary" && key != "constraints")
                    request.warnings.push_back("unknown field context." + key + " ignored");
        }
    }
    for (const auto& [key, unused] : body.items())
        if (key != "role" && key != "request_id" && key != "needs" && key != "context")
            request.warnings.push_back("unknown field " + key + " ignored");
    return request;
}

std::string render_agent_request(const AgentRequest& request, EnvelopeForm form) {
    ojson body = ojson::object();
    body["role"] = request.role;
    body["request_id"] = request.request_id;
    body["needs"] = ojson::array();
    for (const auto& need : request.needs) {
        ojson n = ojson::object();
        n["type"] = need.type;
        for (const auto& [key, value] : need.fields.items()) n[key] = value;
        body["needs"].push_back(std::move(n));
    }
    if (!request.summary.empty() || !request.constraints.empty()) {
        ojson context = ojson::object();
        if (!request.summary.empty()) context["summary"] = request.summary;
        if (!request.constraints.empty()) context["constraints"] = request.constraints;
        body["context"] = std::move(context);
    }
    return render(kAgentRequestHeader, std::move(body), form);
}

Result<CodaliResponse> parse_codali_response(std::string_view text) {
    constexpr std::string_view kind = "CODALI_RESPONSE";
    auto parsed = envelope_body(text, kind, kCodaliResponseHeader);
    if (!parsed) return std::move(parsed).error();
    const ojson& body = *parsed;
    CodaliResponse response;
    auto id = id_text(body.value("request_id", ojson()));
    if (!id) return field_error(kind, "request_id", "an id");
    response.request_id = *id;
    const ojson results = body.value("results", ojson::array());
    if (!results.is_array()) return field_error(kind, "results", "a list");
    for (std::size_t i = 0; i < results.size(); ++i)
        if (!results[i].is_object() || !results[i].contains("type"))
            return field_error(kind, "results[" + std::to_string(i) + "]",
                               "a mapping with a `type`");
    response.results = results;
    const ojson meta = body.value("meta", ojson::object());
    if (!meta.is_object()) return field_error(kind, "meta", "a mapping");
    if (meta.contains("repo_root")) {
        if (!meta["repo_root"].is_string()) return field_error(kind, "meta.repo_root", "a string");
        response.repo_root = meta["repo_root"].get<std::string>();
    }
    auto warnings = string_list(meta.value("warnings", ojson()), kind, "meta.warnings");
    if (!warnings) return std::move(warnings).error();
    response.warnings = std::move(warnings).value();
    if (meta.contains("elapsed_ms")) {
        if (!meta["elapsed_ms"].is_number_integer())
            return field_error(kind, "meta.elapsed_ms", "a whole number of milliseconds");
        response.elapsed_ms = meta["elapsed_ms"].get<std::int64_t>();
    }
    return response;
}

std::string render_codali_response(const CodaliResponse& response, EnvelopeForm form) {
    ojson body = ojson::object();
    body["request_id"] = response.request_id;
    body["results"] = response.results;
    ojson meta = ojson::object();
    if (response.repo_root) meta["repo_root"] = *response.repo_root;
    meta["warnings"] = response.warnings;
    if (response.elapsed_ms) meta["elapsed_ms"] = *response.elapsed_ms;
    body["meta"] = std::move(meta);
    return render(kCodaliResponseHeader, std::move(body), form);
}

std::vector<FoundRequest> find_agent_requests(std::string_view reply) {
    std::vector<FoundRequest> out;
    if (reply.find("AGENT_REQUEST") == std::string_view::npos) return out;
    // The reply's lines, with their offsets.
    struct Line {
        std::size_t begin, end;  // end: past the newline
        std::string_view text;   // without it
    };
    std::vector<Line> lines;
    for (std::size_t at = 0; at < reply.size();) {
        const std::size_t nl = reply.find('\n', at);
        const std::size_t stop = nl == std::string_view::npos ? reply.size() : nl;
        lines.push_back({at, nl == std::string_view::npos ? reply.size() : nl + 1,
                         reply.substr(at, stop - at)});
        at = lines.back().end;
    }
    auto fence = [](std::string_view line) { return trim_blanks(line).rfind("```", 0) == 0; };
    // Enough for any answer a model writes (an unclosed brace only costs one scan to the end);
    // an answer of thousands of unclosed braces is pathological, and its JSON envelopes after
    // the budget are not found (the model hears that none was).
    std::size_t json_budget = 4 * reply.size() + (std::size_t{1} << 20);
    std::vector<std::size_t> fences_before(lines.size() + 1, 0);  // fence lines before line i
    for (std::size_t k = 0; k < lines.size(); ++k)
        fences_before[k + 1] = fences_before[k] + (fence(lines[k].text) ? 1 : 0);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view t = trim_blanks(lines[i].text);
        if (!t.empty() && t.front() == '{') {
            const std::size_t end =
                json_object_end(reply, lines[i].begin + lines[i].text.find('{'), json_budget);
            if (end == std::string_view::npos) continue;
            const std::string_view object = reply.substr(lines[i].begin, end - lines[i].begin);
            if (object.find("\"AGENT_REQUEST") == std::string_view::npos) continue;
            out.push_back({std::string(object), EnvelopeForm::json, i + 1, lines[i].begin, end});
            while (i + 1 < lines.size() && lines[i + 1].begin < end) ++i;
            continue;
        }
        if (t.rfind("AGENT_REQUEST", 0) != 0) continue;
        // Inside a code fence it ends at the closing fence; else at the first line that is
        // not part of a YAML mapping (prose, a command block, a fence).
        const std::size_t indent = lines[i].text.find_first_not_of(" \t");
        const bool fenced = fences_before[i] % 2 == 1;
        std::size_t j = i + 1;
        for (; j < lines.size(); ++j) {
            if (fence(lines[j].text)) break;
            if (fenced) continue;
            std::string_view body = lines[j].text;
            if (body.size() >= indent && trim_blanks(body.substr(0, indent)).empty())
                body.remove_prefix(indent);
            if (!body.empty() && body[0] == '[') break;
            if (!looks_like_yaml_line(body)) break;
        }
        std::string text;
        for (std::size_t k = i; k < j; ++k) {
            std::string_view body = lines[k].text;
            if (body.size() >= indent && trim_blanks(body.substr(0, indent)).empty())
                body.remove_prefix(indent);
            text.append(body);
            text.push_back('\n');
        }
        out.push_back({std::move(text), EnvelopeForm::yaml, i + 1, lines[i].begin,
                       j < lines.size() ? lines[j].begin : reply.size()});
        i = j > i ? j - 1 : i;
    }
    return out;
}

nlohmann::ordered_json critic_result_json(const CriticResult& result) {
    ojson out = ojson::object();
    out["type"] = "critic.result";
    out["status"] = result.pass ? "PASS" : "FAIL";
    out["reasons"] = result.reasons;
    out["suggested_fixes"] = result.suggested_fixes;
    out["touched_files"] = result.touched_files;
    out["plan_targets"] = result.plan_targets;
    return out;
}

}  // namespace cocode::protocol
