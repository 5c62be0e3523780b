// A model's reply, searched for Codali envelopes and read as one: any bytes. Never a crash;
// every envelope found lies within the reply; a request that reads is whole (a known role, an
// id, needs with types) and comes back the same through both written forms; an error says
// which envelope it is about; a response that reads comes back the same when written again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_text.h"
#include "fuzz_support.h"
#include "protocol/envelope.h"

using namespace cocode;
using namespace cocode::protocol;

namespace {

std::string fields_text(const AgentRequest& r) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& n : r.needs) all.push_back({n.type, n.fields});
    return json_dump(all);
}

void check_request(std::string_view text) {
    auto request = parse_agent_request(text);
    if (!request) {
        FUZZ_CHECK(fuzz::names_where(request.error(), "AGENT_REQUEST"));
        return;
    }
    FUZZ_CHECK(is_codali_role(request->role) && !request->request_id.empty());
    FUZZ_CHECK(!request->needs.empty());
    for (const auto& n : request->needs) FUZZ_CHECK(!n.type.empty() && !n.fields.contains("type"));
    for (auto form : {EnvelopeForm::yaml, EnvelopeForm::json}) {
        auto again = parse_agent_request(render_agent_request(*request, form));
        FUZZ_CHECK(again.ok());
        FUZZ_CHECK(again->role == request->role && again->request_id == request->request_id);
        FUZZ_CHECK(again->summary == request->summary &&
                   again->constraints == request->constraints);
        FUZZ_CHECK(fields_text(*again) == fields_text(*request));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view reply(reinterpret_cast<const char*>(data), size);
    for (const auto& found : find_agent_requests(reply)) {
        FUZZ_CHECK(found.begin < found.end && found.end <= size && found.line >= 1);
        FUZZ_CHECK(!found.text.empty());
        check_request(found.text);
    }
    check_request(reply);
    auto response = parse_codali_response(reply);
    if (!response) {
        FUZZ_CHECK(fuzz::names_where(response.error(), "CODALI_RESPONSE"));
    } else {
        for (auto form : {EnvelopeForm::yaml, EnvelopeForm::json}) {
            auto again = parse_codali_response(render_codali_response(*response, form));
            FUZZ_CHECK(again.ok());
            FUZZ_CHECK(json_dump(again->results) == json_dump(response->results));
            FUZZ_CHECK(again->warnings == response->warnings);
        }
    }
    return 0;
}
