// run-info.yaml as anything may leave it (conductor-loop, an agent that can write its run
// folder, a crash mid-write): read or refused with an error naming the file and the line; a
// run record comes out of whatever was read; and what cocode writes, it reads back as itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/flat_yaml.h"
#include "core/run_id.h"
#include "fuzz_support.h"
#include "run/run_folder.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto info = FlatYaml::parse(text, "fuzz/run-info.yaml");
    if (!info) {
        FUZZ_CHECK(fuzz::names_where(info.error(), "fuzz/run-info.yaml:"));
        return 0;
    }
    auto record = run::record_from(*info, "/nonexistent/.cocode/runs/r");
    (void)record;
    for (const char* key : {"start_time", "end_time"})
        if (auto value = info->get(key)) (void)parse_utc_timestamp(*value);

    const std::string written = info->render();
    auto again = FlatYaml::parse(written, "fuzz/rendered.yaml");
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->render() == written);
    for (const char* key : {"run_id", "status", "pid", "error_summary", "ready_commit"})
        FUZZ_CHECK(again->get(key) == info->get(key));
    return 0;
}
