// .cocode/config.json as anyone may write it: parsed or refused with an error naming the
// file, as a usage error (2); what parses keeps the promises validation makes. Durations and
// sizes read back what they print.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/config.h"
#include "core/glob.h"
#include "fuzz_support.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    auto config = config::parse_config(text, "fuzz/config.json", "/nonexistent/repo");
    if (!config) {
        FUZZ_CHECK(fuzz::names_where(config.error(), "fuzz/config.json"));
        FUZZ_CHECK(config.error().code == ExitCode::usage);
    } else {
        for (const auto& agent : config->agents) {
            FUZZ_CHECK(!agent.name.empty());
            FUZZ_CHECK(!config::refname_problem(agent.name));
        }
        FUZZ_CHECK(!config::refname_problem(config->branch_prefix + "x"));
        for (const auto& glob : config->check.allowed_paths) FUZZ_CHECK(!glob_problem(glob));
        for (const auto& glob : config->check.read_only_paths) FUZZ_CHECK(!glob_problem(glob));
        FUZZ_CHECK(config->concurrency > 0);
        FUZZ_CHECK(config->output_cap > 0);
    }

    if (auto duration = config::parse_duration(text)) {
        auto again = config::parse_duration(config::format_duration(*duration));
        FUZZ_CHECK(again && *again == *duration);
    }
    if (auto bytes = config::parse_size(text)) {
        auto again = config::parse_size(config::format_size(*bytes));
        FUZZ_CHECK(again && *again == *bytes);
    }
    return 0;
}
