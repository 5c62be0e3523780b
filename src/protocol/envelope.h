// The Codali envelopes (seeds/codali-agent-protocol.md, v1): the AGENT_REQUEST a stateless
// model sends to ask for context (`needs:`), and the CODALI_RESPONSE that carries every result
// back at once, with the critic's verdict as a `critic.result`. Two forms of each, read and
// written alike: the seed's YAML-like text (a header line, then a YAML mapping), and JSON (one
// object whose `envelope` member is the header: {"envelope": "AGENT_REQUEST v1", "role": …}).
// Where the seed is vague, docs/protocols.md says what cocode does.
//
// Pure text in, text out: answering the needs is agent/codali_needs.h.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::protocol {

inline constexpr char kAgentRequestHeader[] = "AGENT_REQUEST v1";
inline constexpr char kCodaliResponseHeader[] = "CODALI_RESPONSE v1";

enum class EnvelopeForm { yaml, json };

// The roles the seed names.
bool is_codali_role(std::string_view role);
std::string codali_roles();  // "librarian, architect, builder, critic, interpreter"

// One entry of `needs:`: its type ("docdex.search") and its other fields as written.
struct Need {
    std::string type;
    nlohmann::ordered_json fields = nlohmann::ordered_json::object();
};

struct AgentRequest {
    std::string role;
    std::string request_id;  // a number in the text is read as its digits
    std::vector<Need> needs;
    std::string summary;                   // context.summary
    std::vector<std::string> constraints;  // context.constraints
    std::vector<std::string> warnings;     // fields cocode does not know, ignored
};

// An envelope's text (either form, from its header or opening brace to its end). Errors are
// usage errors whose message the model can act on: "AGENT_REQUEST line 5: needs[1]: expected a
// mapping with a `type`".
Result<AgentRequest> parse_agent_request(std::string_view text);
std::string render_agent_request(const AgentRequest& request, EnvelopeForm form);

struct CodaliResponse {
    std::string request_id;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();  // one object per result
    std::optional<std::string> repo_root;
    std::vector<std::string> warnings;
    std::optional<std::int64_t> elapsed_ms;
};
Result<CodaliResponse> parse_codali_response(std::string_view text);
std::string render_codali_response(const CodaliResponse& response, EnvelopeForm form);

// Where an AGENT_REQUEST is in a model's reply, which may also hold prose, code fences and
// text-protocol commands: from its header line (or the opening brace of a JSON object whose
// `envelope` is the header) to its end — the closing fence, the end of the JSON object, or the
// first line that cannot belong to the YAML mapping.
struct FoundRequest {
    std::string text;
    EnvelopeForm form = EnvelopeForm::yaml;
    std::size_t line = 0;   // 1-based line of the reply where it starts
    std::size_t begin = 0;  // offset in the reply of that line
    std::size_t end = 0;    // offset in the reply just past it
};
std::vector<FoundRequest> find_agent_requests(std::string_view reply);

// The critic's verdict as the seed's protocol result (type critic.result).
struct CriticResult {
    bool pass = false;
    std::vector<std::string> reasons;
    std::vector<std::string> suggested_fixes;
    std::vector<std::string> touched_files;
    std::vector<std::string> plan_targets;
};
nlohmann::ordered_json critic_result_json(const CriticResult& result);

}  // namespace cocode::protocol
