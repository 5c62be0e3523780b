#include "core/base64.h"

namespace cocode {
namespace {

std::string encode(std::string_view data, const char* alphabet, bool pad) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    auto byte = [&](std::size_t at) {
        return static_cast<unsigned>(static_cast<unsigned char>(data[at]));
    };
    std::size_t i = 0;
    for (; i + 2 < data.size(); i += 3) {
        unsigned v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
        for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 63];
    }
    const std::size_t rest = data.size() - i;
    if (rest > 0) {
        unsigned v = byte(i) << 16;
        if (rest == 2) v |= byte(i + 1) << 8;
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        if (rest == 2) out += alphabet[(v >> 6) & 63];
        if (pad) out.append(3 - rest, '=');
    }
    return out;
}

}  // namespace

std::string base64(std::string_view data) {
    return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", true);
}

std::string base64url(std::string_view data) {
    return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}

}  // namespace cocode
