// The edge every cocode tool shares: CLI11 parse errors are one line and exit 2 (usage), and one
// catch turns a cocode::Failure into `<tool>: error: <one redacted line>` (control characters shown
// escaped) and the exit code it carries.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "common/cli_errors.h"
#include "common/man_help.h"
#include "config/presets.h"
#include "core/error.h"
#include "core/redact.h"
#include "core/terminal_text.h"

extern const char* const kCocodeCommit;  // tools/CMakeLists.txt, cmake/commit.cmake

namespace cocode::tool {

// What --version prints: "cocode-dispatch 0.1.0 (commit 1a2b3c4d5e6f)", then `extra`.
inline std::string version_line(const char* tool, const std::string& extra = "") {
    return std::string(tool) + " " COCODE_VERSION " (commit " + kCocodeCommit + ")" +
           (extra.empty() ? "" : ", " + extra);
}

// Parses argv; nullopt to go on, else the exit code: 0 for --help and --version, else 2 after
// one line saying what was wrong (cli_errors.h). `--help-man` alone prints what the man page is
// made from (man_help.h; the build's, so not listed).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, const char* tool) {
    if (argc == 2 && std::string_view(argv[1]) == "--help-man") {
        std::fputs(man_help(app).c_str(), stdout);
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "%s: error: %s\n", tool,
                     terminal_safe_line(explain(app, e, argc, argv, tool)).c_str());
        return static_cast<int>(ExitCode::usage);
    }
    return std::nullopt;
}

// The secrets this process can see in its environment: redacted from everything it shows.
inline void remember_environment_secrets() {
    for (const auto& name : config::secret_variables())
        if (const char* value = std::getenv(name.c_str()); value && *value) remember_secret(value);
}

// Runs the chosen subcommand, mapping what it throws to a line on stderr and an exit code.
template <class Body>
int run(const char* tool, Body&& body) {
    remember_environment_secrets();
    try {
        return body();
    } catch (const Failure& failure) {
        std::fprintf(stderr, "%s: error: %s\n", tool,
                     terminal_safe_line(redact(failure.error().message)).c_str());
        return static_cast<int>(failure.error().code);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", tool, terminal_safe_line(redact(e.what())).c_str());
        return static_cast<int>(ExitCode::general);
    }
}

}  // namespace cocode::tool
