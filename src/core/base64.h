// Base64 (RFC 4648): the standard alphabet with padding (HTTP Basic credentials), and the
// URL-safe one without padding (JWTs).
#pragma once

#include <string>
#include <string_view>

namespace cocode {

std::string base64(std::string_view data);
std::string base64url(std::string_view data);

}  // namespace cocode
