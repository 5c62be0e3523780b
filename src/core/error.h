// Errors and the exit codes of the cocode agent protocol.
//
// Library code returns Result<T>; the tools turn an Error into a one-line message and
// the exit code it carries. The codes are the protocol's, shared by agents and our tools.
#pragma once

#include <string>
#include <string_view>

namespace cocode {

enum class ExitCode : int {
    ok = 0,
    general = 1,             // general error
    usage = 2,               // invalid arguments or config
    missing_dependency = 3,  // a program, library or file we need is not there
    timeout = 124,
    budget = 125,  // a run ended for crossing its budget (docs/cost.md)
    interrupted = 130,
};

// Short name of an exit code, as written in reports ("timeout", "usage", ...).
std::string_view exit_code_name(ExitCode code);

struct Error {
    ExitCode code = ExitCode::general;
    std::string message;

    static Error general(std::string message) { return {ExitCode::general, std::move(message)}; }
    static Error usage(std::string message) { return {ExitCode::usage, std::move(message)}; }
    static Error missing(std::string message) {
        return {ExitCode::missing_dependency, std::move(message)};
    }
    // "<what>: <strerror(err)>", for failed system calls.
    static Error from_errno(std::string_view what, int err);
};

// Thrown only at the edge (tools/), never inside src/: one catch in main maps it to a line
// on stderr and the exit code.
class Failure : public std::exception {
  public:
    explicit Failure(Error error) : error_(std::move(error)) {}
    const Error& error() const noexcept { return error_; }
    const char* what() const noexcept override { return error_.message.c_str(); }

  private:
    Error error_;
};

}  // namespace cocode
