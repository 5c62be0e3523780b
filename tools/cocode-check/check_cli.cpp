#include "check_cli.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/confined.h"
#include "check/actions.h"
#include "check/progress.h"
#include "check/publish.h"
#include "check/report.h"
#include "check/run_check.h"
#include "config/config.h"
#include "core/error.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/redact.h"
#include "core/terminal_text.h"
#include "git/repository.h"
#include "proc/command.h"
#include "proc/interrupt.h"
#include "run/checking.h"
#include "run/seal.h"

namespace cocode::check_cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

void notice(std::string_view text) {
    // Pieces from issues and agents are made terminal-safe where they are put in; the whole
    // line again (it stays as it is) for any that were not, and for the Actions runner.
    std::fprintf(stderr, "cocode-check: %s\n", terminal_safe(redact(text)).c_str());
}

// The main worktree of the repository holding `dir`: where .cocode/ lives.
fs::path main_root(const fs::path& dir) {
    auto opened = git::Repository::open(dir);
    if (!opened) throw Failure(Error::usage(opened.error().message));
    fs::path root = opened->main_work_dir();
    if (root.empty())
        throw Failure(Error::usage("cocode-check needs a repository with a work tree"));
    return root;
}

run::RunRecord reconciled(run::RunRecord record) {
    if (auto done = run::reconcile(record); !done) notice("warning: " + done.error().message);
    return record;
}

run::RunRecord find_run(const fs::path& root, const std::string& which) {
    auto list = run::list_runs(root / run::kRunsDir);
    std::vector<run::RunRecord> matches;
    for (auto& record : list.runs)
        if (record.run_id.rfind(which, 0) == 0) matches.push_back(record);
    if (matches.empty())
        throw Failure(
            Error::usage("--run " + which + ": no such run in " + (root / run::kRunsDir).string()));
    if (matches.size() > 1 && matches.front().run_id != which)
        throw Failure(Error::usage("--run " + which + ": " + std::to_string(matches.size()) +
                                   " runs start so; give more of the id"));
    return reconciled(matches.front());
}

// `--issue N --agent NAME` without --run: that agent's latest run on the issue.
run::RunRecord latest_run(const fs::path& root, long issue, const std::string& agent) {
    auto list = run::list_runs(root / run::kRunsDir);
    const run::RunRecord* latest = nullptr;
    for (const auto& record : list.runs)
        if (record.issue == issue && record.agent == agent &&
            (!latest || record.run_id > latest->run_id))
            latest = &record;
    if (!latest)
        throw Failure(Error::usage("--issue " + std::to_string(issue) + " --agent " + agent +
                                   ": no run of that agent on that issue in " +
                                   (root / run::kRunsDir).string()));
    return reconciled(*latest);
}

std::unique_ptr<issues::IssueSource> open_source(const tool::SourceFlags& flags,
                                                 const fs::path& repo_dir,
                                                 const std::string& issue_url) {
    issues::SourceOptions options = flags.resolve("cocode-check");
    options.repo_dir = repo_dir;
    if (!flags.names_a_source()) {
        // Publish where the run's issue came from.
        auto hint = check::source_of(issue_url);
        if (hint.issues_dir) options.issues_dir = hint.issues_dir;
        if (hint.repo) options.repo = hint.repo;
        if (hint.api_url && !options.api_url) options.api_url = hint.api_url;
    }
    return issues::open_source(options).value_or_throw();
}

struct Published {
    std::string comment_url, pr_url;
};

// This writer's rows in the issue's live comment, read back until they are there.
void update_live_comment(issues::IssueSource& source, long issue,
                         const std::vector<check::ProgressRow>& rows,
                         const std::vector<check::Verdict>& ranked) {
    check::LiveComment live(source, issue, {}, [](const std::string&) {});
    if (auto done = live.finish(rows, ranked); !done)
        notice("warning: live comment on #" + std::to_string(issue) + ": " + done.error().message);
}

// What the run's agent committed and its dispatcher did not take back (it was killed), taken
// from the agent's own repository before its branch is judged (git/agent_repo.h).
void take_back_commits(const fs::path& root, const config::Config& config,
                       const check::JudgeInput& input) {
    // The pair's, by the sealed branch (its worktree's name), never by what run-info says.
    const fs::path own =
        run::pair_sandbox(root / run::kRunsDir, input.worktree.filename().string()).git();
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(own, ec))) return;
    const std::string branch = input.head.substr(std::string_view("refs/heads/").size());
    auto taken =
        agent::take_back(agent::sandbox_maker(config), root, {own, input.worktree, branch});
    if (!taken)
        notice("warning: run " + input.run_id + ": its branch could not be taken back from " +
               own.string() + " (" + taken.error().message + "); judging what was taken before");
}

// A run is judged by the rules it was dispatched with, which its seal keeps; an edit of the
// configuration since then changes nothing for it. Said when they differ, so that a shorter
// timeout or a new verify that is not used is no mystery.
void note_sealed_rules(const fs::path& root, const std::string& run_id) {
    auto seal = run::read_seal(root, run_id);
    if (!seal || !*seal || (*seal)->config_text.empty()) return;
    auto now = read_file_no_follow(root / config::kConfigFile);
    if (!now) return;
    const auto changed = check::judging_rules_changed((*seal)->config_text, *now);
    if (changed.empty()) return;
    std::string names;
    for (const auto& name : changed) names += (names.empty() ? "" : ", ") + name;
    notice("run " + run_id + " is judged by the rules it was dispatched with (its seal, " +
           run::seal_path(root, run_id).string() + "), not by " + config::kConfigFile +
           ", which has changed since: " + names +
           ". A new run (cocode-dispatch run) is judged by the new rules.");
}

}  // namespace

int run_check(const CheckArgs& args) {
    // Ctrl-C ends the check's command (its group) and the check, with no verdict.
    InterruptWatch interrupts;
    if ((args.push || args.open_pr) && !args.publish)
        throw Failure(Error::usage("--push and --open-pr go with --publish"));
    const bool latest = !args.run && !args.worktree && args.issue && args.agent;
    if (!args.run && !args.worktree && !latest)
        throw Failure(
            Error::usage("give --run RUN_ID, --issue N --agent NAME, or --worktree DIR "
                         "--base SHA (or --issue N --summary)"));
    check::JudgeInput input;
    config::Config config;
    fs::path repo_dir;
    if (args.run || latest) {
        const fs::path root = main_root(fs::current_path());
        config = config::load_config(root).value_or_throw();
        auto record =
            args.run ? find_run(root, *args.run) : latest_run(root, *args.issue, *args.agent);
        input = check::input_for_run(record, config).value_or_throw();
        input.runner = agent::confined_runner(config, root);
        note_sealed_rules(root, input.run_id);
        take_back_commits(root, config, input);
        repo_dir = root;
    } else {
        // In CI the worktree is the change's own checkout, judged by its base commit's rules.
        repo_dir = fs::absolute(*args.worktree);
        check::CheckoutAsk ask;
        ask.worktree = repo_dir;
        ask.base = *args.base;
        ask.head = args.head;
        ask.exit_code = args.exit_code;
        if (const char* marker = std::getenv("COCODE_READY_MARKER"); marker && *marker)
            ask.marker = marker;
        ask.issue = args.issue.value_or(0);
        ask.agent = args.agent.value_or("");
        ask.branch = args.branch;
        if (args.report_dir) ask.report_dir = fs::absolute(*args.report_dir);
        auto checkout = check::input_for_checkout(ask).value_or_throw();
        config = std::move(checkout.config);
        input = std::move(checkout.input);
        input.runner = agent::confined_runner(config, checkout.main_root);
    }
    input.verify = !args.no_verify;
    auto verdict = check::judge_and_record(input).value_or_throw();
    const std::string markdown = check::render_markdown(verdict);

    Published published;
    std::optional<Error> publish_error;
    if (args.publish) {
        auto source = open_source(args.source, repo_dir, verdict.issue_url);
        // A run's verdict is published from the main repository (its worktree's git folder is
        // the agent's); a checkout's (--worktree, CI) from the checkout.
        auto request = check::configured_request(
            config, input.repository.empty() ? input.worktree : input.repository, verdict,
            {args.push, args.open_pr});
        if (args.run || latest) check::add_run_parts(request, verdict, repo_dir);
        // A step of the run's check: `status` shows it, `stop` ends it (run/checking.h).
        check::RunStep publishing(input.repository, input.run_id, "publishing",
                                  check::RunStep::Begins::a_later_step);
        auto result = check::publish(*source, verdict, request);
        if (!input.run_id.empty())
            (void)run::note_publish_ended(input.report_dir,
                                          !result && result.error().code == ExitCode::interrupted);
        if (result) {
            published = {result->comment_url, result->pr_url};
            if (!args.quiet && !args.json)
                for (const auto& line : result->notes) notice(line);
            // A run's events say its verdict is on the issue, as after cocode-dispatch run.
            if (!input.run_id.empty())
                if (auto noted = check::note_published(input.report_dir, input.run_id,
                                                       result->comment_url, result->pr_url);
                    !noted)
                    notice("warning: " + noted.error().message);
            // Its row in the issue's live comment (the action's runners each write their own).
            if (!input.run_id.empty() && verdict.issue && config.progress.enabled)
                update_live_comment(*source, verdict.issue,
                                    {check::row_of(verdict, result->pr_url)}, {});
        } else {
            publish_error = result.error();
        }
    }

    if (args.json) {
        json out = check::to_json(verdict);
        if (args.publish)
            out["published"] = {
                {"comment_url", published.comment_url},
                {"pr_url", published.pr_url},
                {"error", publish_error ? json(redact(publish_error->message)) : json(nullptr)}};
        std::cout << json_output(out, 2) << "\n";
    } else if (!args.quiet) {
        const bool text =
            args.format == "text" || (args.format == "auto" && ::isatty(STDOUT_FILENO) == 1);
        // Commit subjects and file names are the agent's: shown terminal-safe either way.
        std::cout << terminal_safe(text ? check::render_text(verdict) : markdown);
    }
    if (in_github_actions()) {
        for (const auto& line : check::error_annotations(verdict))
            (args.json ? std::cerr : std::cout) << line << "\n";
        check::ActionsOutputs outputs{verdict.pass ? "PASS" : "FAIL",
                                      verdict.report_dir / check::kCheckMarkdown,
                                      published.comment_url,
                                      published.pr_url,
                                      {{"branch", verdict.branch}, {"run-id", verdict.run_id}}};
        for (auto& output : check::usage_outputs({verdict})) outputs.more.push_back(output);
        if (auto w = check::write_actions_outputs(markdown, outputs); !w)
            notice("warning: " + w.error().message);
    }
    if (publish_error)  // interrupted (Ctrl-C while it waited for GitHub): 130, as any stop
        throw Failure(Error{publish_error->code == ExitCode::interrupted ? ExitCode::interrupted
                                                                         : ExitCode::general,
                            "publishing: " + publish_error->message});
    return verdict.pass ? 0 : 1;
}

int run_summary(const CheckArgs& args) {
    InterruptWatch interrupts;
    if (!args.issue) throw Failure(Error::usage("--summary needs --issue N"));
    if (args.push || args.open_pr)
        throw Failure(Error::usage("--push and --open-pr are for one run, not --summary"));
    const fs::path root = main_root(fs::current_path());
    const auto config = config::load_config(root).value_or_throw();
    auto list = run::list_runs(root / run::kRunsDir);
    // The latest run of each agent on the issue (run ids sort by time).
    std::vector<run::RunRecord> latest;
    for (auto& record : list.runs) {
        if (record.issue != *args.issue) continue;
        record = reconciled(std::move(record));
        auto same = std::find_if(latest.begin(), latest.end(),
                                 [&](const run::RunRecord& r) { return r.agent == record.agent; });
        if (same != latest.end())
            *same = record;
        else
            latest.push_back(record);
    }
    std::vector<check::Verdict> verdicts;
    for (const auto& record : latest) {
        if (run::is_active(record.status)) {
            notice("run " + record.run_id + " (" + record.agent + ") is still " +
                   std::string(run::status_name(record.status)) + "; left out");
            continue;
        }
        if (auto recorded = check::recorded_verdict(record.folder)) {
            verdicts.push_back(std::move(*recorded));
            continue;
        }
        auto input = check::input_for_run(record, config);
        if (!input) {
            notice("run " + record.run_id + ": " + input.error().message + "; left out");
            continue;
        }
        input->verify = !args.no_verify;
        input->runner = agent::confined_runner(config, root);
        verdicts.push_back(check::judge_and_record(*input).value_or_throw());
    }
    // Agents whose runs are not here (each matrix job ran on a runner of its own) count by the
    // verdict they published on the issue.
    std::unique_ptr<issues::IssueSource> source;
    try {
        source = open_source(args.source, root, latest.empty() ? "" : latest.front().issue_url);
        auto comments = source->comments(*args.issue);
        if (!comments) throw Failure(comments.error());
        for (auto& published : check::verdicts_from_comments(*comments, *args.issue)) {
            if (std::any_of(latest.begin(), latest.end(),
                            [&](const run::RunRecord& r) { return r.agent == published.agent; }))
                continue;  // its run is here: judged from the run
            verdicts.push_back(std::move(published));
        }
    } catch (const Failure& failure) {
        if (latest.empty()) throw;
        notice("warning: the verdicts published on the issue could not be read (" +
               failure.error().message + "); comparing the runs here only");
    }
    if (verdicts.empty()) {
        if (latest.empty())
            throw Failure(Error::usage("--issue " + std::to_string(*args.issue) + ": no runs in " +
                                       (root / run::kRunsDir).string() +
                                       " and no verdict published on the issue"));
        throw Failure(Error::general("no run of the issue has ended yet"));
    }
    auto ranked = check::rank(std::move(verdicts));
    const std::string markdown = check::render_summary(*args.issue, ranked);

    std::string comment_url;
    if (args.publish) {
        if (!source) throw Failure(Error::general("publishing: no issue source"));
        auto comment = source->upsert_comment(
            *args.issue, github::comment_marker(check::summary_key(*args.issue)), markdown);
        if (!comment) throw Failure(Error::general("publishing: " + comment.error().message));
        comment_url = comment->html_url;
        if (!args.quiet && !args.json) notice("comment " + comment_url);
        // After every runner: the live comment's final table, from the verdicts — exact.
        if (config.progress.enabled) {
            std::vector<check::ProgressRow> rows;
            for (const auto& v : ranked) rows.push_back(check::row_of(v));
            update_live_comment(*source, *args.issue, rows, ranked);
        }
    }
    if (args.json) {
        json candidates = json::array();
        for (const auto& v : ranked) candidates.push_back(check::to_json(v));
        const json out = {
            {"issue", *args.issue},
            {"best", ranked.front().pass ? json(ranked.front().agent) : json(nullptr)},
            {"candidates", candidates},
            {"comment_url", comment_url.empty() ? json(nullptr) : json(comment_url)}};
        std::cout << json_output(out, 2) << "\n";
    } else if (!args.quiet) {
        std::cout << terminal_safe(markdown);  // commit subjects are the agent's
    }
    if (in_github_actions()) {
        json by_agent = json::object();
        for (const auto& v : ranked) by_agent[v.agent] = v.pass ? "PASS" : "FAIL";
        check::ActionsOutputs outputs{
            ranked.front().pass ? "PASS" : "FAIL",
            {},
            comment_url,
            "",
            {{"best-agent", ranked.front().pass ? ranked.front().agent : ""},
             {"verdicts", by_agent.dump()}}};
        for (auto& output : check::usage_outputs(ranked)) outputs.more.push_back(output);
        if (auto w = check::write_actions_outputs(markdown, outputs); !w)
            notice("warning: " + w.error().message);
    }
    return ranked.front().pass ? 0 : 1;
}

}  // namespace cocode::check_cli
