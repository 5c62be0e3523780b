// Text from issues and agents on its way to a terminal or a log: terminal_safe leaves no
// control byte but tab and newline, no DEL and no C1 control (as bytes 0x80-0x9f after a
// UTF-8 lead, or alone), terminal_safe_line not even those; a secret cocode remembered never
// comes out of redact.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/redact.h"
#include "core/terminal_text.h"
#include "fuzz_support.h"

using namespace cocode;

namespace {

// No C0 control (but those allowed), no DEL, no U+0080-U+009F encoded in UTF-8.
bool shows_no_controls(const std::string& text, bool allow_tab_and_newline) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\t' || c == '\n') {
            if (!allow_tab_and_newline) return false;
            continue;
        }
        if (c < 0x20 || c == 0x7f) return false;
        if (c == 0xc2 && i + 1 < text.size()) {
            const auto next = static_cast<unsigned char>(text[i + 1]);
            if (next >= 0x80 && next <= 0x9f) return false;
        }
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider input(data, size);
    const std::string secret = "s3cr3t--" + input.ConsumeRandomLengthString(40);
    const std::string text = input.ConsumeRemainingBytesAsString();

    FUZZ_CHECK(shows_no_controls(terminal_safe(text), true));
    FUZZ_CHECK(shows_no_controls(terminal_safe_line(text), false));

    // The registry only grows: the first inputs' secrets are remembered, later ones reuse them.
    static std::vector<std::string> remembered;
    const std::string& known =
        remembered.size() < 32 ? remembered.emplace_back(secret) : remembered[text.size() % 32];
    remember_secret(known);
    const std::string around =
        text.substr(0, text.size() / 2) + known + text.substr(text.size() / 2);
    FUZZ_CHECK(redact(around).find(known) == std::string::npos);
    return 0;
}
