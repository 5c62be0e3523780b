// cocode-dispatch: only --help and --version for now; the subcommands arrive with their issues.
#include <CLI/CLI.hpp>
#include <csignal>

#include "git/repository.h"

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{
        "cocode-dispatch: fetch issues, give each agent its own worktree, supervise the runs"};
    const std::string version =
        "cocode-dispatch " COCODE_VERSION " (libgit2 " + cocode::git::libgit2_version() + ")";
    app.set_version_flag("--version", version);
    CLI11_PARSE(app, argc, argv);
    return 0;
}
