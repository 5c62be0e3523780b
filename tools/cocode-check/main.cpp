// cocode-check: judge an agent's run with rules and the project's own tests, and report the
// verdict where the team looks. This file only wires the flags (check_cli.cpp does the work).
#include <CLI/CLI.hpp>
#include <csignal>

#include "check_cli.h"
#include "common/tool_main.h"
#include "git/repository.h"
#include "proc/environment.h"

using namespace cocode::check_cli;

int main(int argc, char** argv) {
    // The GitHub token and the webhook's secret out of a same-user agent's reach.
    cocode::hold_secrets(cocode::secret_variables());
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"cocode-check: judge an agent's run and report the verdict where the team looks",
                 "cocode-check"};
    const std::string version =
        cocode::tool::version_line("cocode-check", "libgit2 " + cocode::git::libgit2_version());
    app.set_version_flag("--version", version);
    app.footer(
        "  cocode-check --run RUN_ID [--publish [--push] [--open-pr]]\n"
        "  cocode-check --issue N --agent NAME [--publish]   (that agent's latest run)\n"
        "  cocode-check --worktree DIR --base SHA [--exit-code N] [--issue N --agent NAME]\n"
        "  cocode-check --issue N --summary [--publish]\n"
        "Exit 0 for PASS, 1 for FAIL (or a failed publish), 2 for bad arguments, 3 when\n"
        "something needed is missing. See docs/check.md.");

    CheckArgs args;
    args.source.add_to(app);
    auto* run =
        app.add_option("--run", args.run, "a run id of cocode-dispatch (or a unique prefix)");
    auto* worktree =
        app.add_option("--worktree", args.worktree, "check this worktree (CI, no run)");
    auto* base = app.add_option("--base", args.base, "the commit the work started from");
    app.add_option("--head", args.head, "the commit to judge (default: HEAD of --worktree)");
    app.add_option("--exit-code", args.exit_code, "the agent's exit code, when known");
    app.add_option("--issue", args.issue, "the issue number")->check(cocode::tool::issue_number());
    app.add_option("--agent", args.agent, "the agent's name");
    app.add_option("--branch", args.branch, "the branch (default: the worktree's)");
    app.add_option("--report-dir", args.report_dir,
                   "where check.json, check.md and verify logs go (--worktree; default "
                   ".cocode/checks/<head>)");
    app.add_flag("--summary", args.summary, "compare every agent's run on --issue");
    app.add_flag("--json", args.json, "print the whole result as JSON");
    app.add_flag("--publish", args.publish,
                 "comment on the issue (one per issue and agent), set the commit status and "
                 "labels");
    app.add_flag("--push", args.push, "push the branch to origin (with --publish)");
    app.add_flag("--open-pr", args.open_pr,
                 "open or update a draft pull request \"Closes #N\" (with --publish)");
    app.add_flag("--no-verify", args.no_verify, "do not run the verify commands");
    app.add_flag("--quiet", args.quiet, "print nothing; the exit code says PASS or FAIL");
    app.add_option("--format", args.format,
                   "the report on stdout: text, markdown (default: text on a terminal, else "
                   "markdown)")
        ->check(CLI::IsMember({"auto", "text", "markdown"}));
    run->excludes(worktree);
    worktree->needs(base);

    if (auto exit = cocode::tool::parse(app, argc, argv, "cocode-check")) return *exit;
    return cocode::tool::run("cocode-check", [&] {
        if (args.summary) return run_summary(args);
        return run_check(args);
    });
}
