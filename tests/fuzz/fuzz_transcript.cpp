// An agent's stdout, rendered as a transcript (`logs`) and searched for its final answer
// (output.md): any bytes, any stream shape, half a JSON event cut by a kill; rendered text
// shown through terminal_safe holds no control sequences.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/transcript.h"
#include "core/terminal_text.h"
#include "fuzz_support.h"

using namespace cocode;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view stream(reinterpret_cast<const char*>(data), size);
    agent::TranscriptRenderer renderer;
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= stream.size()) {
        std::size_t end = stream.find('\n', at);
        if (end == std::string_view::npos) end = stream.size();
        renderer.feed(stream.substr(at, end - at), out);
        at = end + 1;
    }
    renderer.flush(out);
    for (const auto& line : out)
        for (unsigned char c : terminal_safe(line)) FUZZ_CHECK(c >= 0x20 || c == '\n' || c == '\t');
    (void)agent::final_answer(stream);
    return 0;
}
