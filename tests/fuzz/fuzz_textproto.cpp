// A model's answer, parsed as the CodingAgent protocol's inbox: any bytes. Never a crash; every
// command it yields is whole (a path where one is needed, line numbers in range, an error that
// says something); and any file content, escaped as the protocol says, comes back exactly.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/textproto.h"

using namespace cocode;
using namespace cocode::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const auto& c : parse_inbox(text)) {
        switch (c.kind) {
            case CommandKind::error:
                FUZZ_CHECK(!c.error.empty() && !c.name.empty());
                break;
            case CommandKind::create_file:
            case CommandKind::delete_file:
            case CommandKind::read_file:
                FUZZ_CHECK(!c.path.empty());
                break;
            case CommandKind::edit_file:
                FUZZ_CHECK(!c.path.empty() && c.start_line >= 1 && c.end_line >= 0);
                break;
            case CommandKind::run_command:
                FUZZ_CHECK(!c.body.empty());
                break;
            default:
                break;
        }
        FUZZ_CHECK(c.line >= 1 && c.line <= size + 1);
        (void)format_outcome({false, c.name, c.error, c.body});
    }
    // The escape round-trips whatever the content.
    std::string content(text);
    if (!content.empty() && content.back() != '\n') content += '\n';
    const std::string inbox =
        "[CREATE_FILE path=\"f\"]\n" + escape_body(content, "CREATE_FILE") + "[/CREATE_FILE]\n";
    const auto parsed = parse_inbox(inbox);
    FUZZ_CHECK(!parsed.empty() && parsed[0].kind == CommandKind::create_file);
    FUZZ_CHECK(parsed[0].body == content);
    return 0;
}
