// cocode-dispatch: fetch issues, give each agent its own worktree, supervise the runs.
// This file only wires the subcommands (cmd_*.cpp) to CLI11 and maps errors to exit codes.
#include <CLI/CLI.hpp>
#include <csignal>

#include "commands.h"
#include "common/tool_main.h"
#include "git/repository.h"

using namespace cocode::dispatch_cli;

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{
        "cocode-dispatch: fetch issues, give each agent its own worktree, supervise the runs"};
    const std::string version =
        "cocode-dispatch " COCODE_VERSION " (libgit2 " + cocode::git::libgit2_version() + ")";
    app.set_version_flag("--version", version);
    app.require_subcommand(1);

    auto* issues_cmd = app.add_subcommand("issues", "show the issues cocode sees");
    issues_cmd->require_subcommand(1);

    IssuesListArgs list;
    auto* list_cmd = issues_cmd->add_subcommand("list", "list issues (pull requests left out)");
    list.source.add_to(*list_cmd);
    list_cmd->add_option("--label", list.labels, "only issues with this label (repeatable)");
    list_cmd->add_option("--state", list.state, "open (default), closed or all")
        ->check(CLI::IsMember({"open", "closed", "all"}));
    list_cmd->add_option("--assignee", list.assignee, "a login, none or *");
    list_cmd->add_flag("--json", list.json, "print JSON");

    IssuesShowArgs show;
    auto* show_cmd = issues_cmd->add_subcommand("show", "one issue: title, labels, body");
    show.source.add_to(*show_cmd);
    show_cmd->add_option("number", show.number, "the issue number")
        ->required()
        ->check(CLI::PositiveNumber);
    show_cmd->add_flag("--comments", show.comments, "also print its comments");
    show_cmd->add_flag("--json", show.json, "print JSON");

    if (auto exit = cocode::tool::parse(app, argc, argv)) return *exit;
    return cocode::tool::run("cocode-dispatch", [&] {
        if (*list_cmd) return run_issues_list(list);
        if (*show_cmd) return run_issues_show(show);
        return 0;
    });
}
