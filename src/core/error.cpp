#include "core/error.h"

#include <cstring>

namespace cocode {

std::string_view exit_code_name(ExitCode code) {
    switch (code) {
        case ExitCode::ok:
            return "ok";
        case ExitCode::general:
            return "general";
        case ExitCode::usage:
            return "usage";
        case ExitCode::missing_dependency:
            return "missing-dependency";
        case ExitCode::timeout:
            return "timeout";
        case ExitCode::budget:
            return "budget";
        case ExitCode::interrupted:
            return "interrupted";
    }
    return "unknown";
}

Error Error::from_errno(std::string_view what, int err) {
    std::string message(what);
    message += ": ";
    message += std::strerror(err);
    return general(std::move(message));
}

}  // namespace cocode
