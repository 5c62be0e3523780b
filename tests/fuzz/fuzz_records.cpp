// The lines and records runs leave behind, which an agent may write into or a crash cut
// short: an event is one line of JSON whatever its fields hold (an agent's stderr is any
// bytes); run-end.json, a seal and check.json are read or refused, never half-believed; a
// recorded verdict reads back as itself; a commit message carries the marker or does not.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "check/verdict.h"
#include "fuzz_support.h"
#include "hook/ready.h"
#include "run/run_folder.h"
#include "run/seal.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::string run_id = input.ConsumeRandomLengthString(64);
    const std::string type = input.ConsumeRandomLengthString(32);
    const std::string detail = input.ConsumeRandomLengthString(512);
    const std::string rest = input.ConsumeRemainingBytesAsString();

    const std::string line =
        run::event_line(run_id, type, {{"error_summary", detail}, {"exit_code", 1}});
    FUZZ_CHECK(line.find('\n') == std::string::npos);
    auto event = nlohmann::json::parse(line, nullptr, false);
    FUZZ_CHECK(event.is_object());
    FUZZ_CHECK(event["exit_code"] == 1);
    if (nlohmann::json::parse("\"" + run_id + "\"", nullptr, false) == run_id)  // valid text
        FUZZ_CHECK(event["run_id"] == run_id);

    if (auto end = run::parse_run_end(rest)) FUZZ_CHECK(!run::is_active(end->status));

    if (auto seal = run::parse_seal(rest, "fuzz/seal.json", run_id); seal)
        FUZZ_CHECK(seal->run_id == run_id);
    else
        FUZZ_CHECK(fuzz::names_where(seal.error(), "fuzz/seal.json"));

    auto json = nlohmann::json::parse(rest, nullptr, false);
    const auto once = check::to_json(check::verdict_from_json(json));
    FUZZ_CHECK(check::to_json(check::verdict_from_json(once)) == once);

    (void)hook::message_has_marker(rest, detail);
    return 0;
}
