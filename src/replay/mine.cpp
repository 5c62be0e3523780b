#include "replay/mine.h"

#include "check/clean_tree.h"
#include "check/run_check.h"
#include "check/scorecard.h"
#include "check/verify.h"
#include "core/run_id.h"
#include "git/cli.h"
#include "proc/environment.h"

namespace cocode::replay {

namespace fs = std::filesystem;

namespace {

// What the agent is told: the issue the change closes (when the source has it), else the
// pull request's description (on GitHub), else the commit message.
Statement statement_for(const MineOptions& o, const git::HistoryCommit& commit) {
    if (o.source)
        if (auto number = closed_issue(commit.message))
            if (auto issue = o.source->get(*number); issue.ok())
                return {issue->title, issue->body, "issue #" + std::to_string(*number)};
    if (o.source && o.source->github_api())
        if (auto number = merged_pull(commit.message))
            if (auto pull = o.source->github_api()->pull_request(*number);
                pull.ok() && !pull->body.empty())
                return {pull->title, pull->body, "pull request #" + std::to_string(*number)};
    return statement_of_message(commit.message);
}

// Every verify command's outcome, `repeats` times, in a clean tree of `commit`.
Result<std::vector<std::vector<bool>>> verify_at(const MineOptions& o, const std::string& commit,
                                                 const fs::path& log_dir) {
    auto rules = check::tree_rules_for(*o.config, o.repo_root, o.repo_root, commit, "");
    if (!rules.ok()) return std::move(rules).error();
    const auto environment =
        allowlisted_environment(current_environment(), o.config->check.verify_env);
    auto tree = check::CleanTree::make(
        o.repo_root, commit, *rules, o.setup_runner ? o.setup_runner : environment::plain_runner(),
        environment, log_dir);
    if (!tree.ok()) return std::move(tree).error();
    if (!(*tree)->setup().failure.empty())
        return Error::general("setup at " + commit.substr(0, 12) + ": " + (*tree)->setup().failure);
    std::vector<std::vector<bool>> out;
    int index = 0;
    for (const auto& command : o.config->check.verify) {
        std::vector<bool> runs;
        ++index;
        for (int i = 0; i < o.repeats; ++i) {
            auto ran = check::run_verify(
                command.run, (*tree)->path(), (*tree)->environment(),
                command.timeout.value_or(o.config->check.verify_timeout),
                log_dir / ("verify-" + std::to_string(index) + "-" + std::to_string(i) + ".log"),
                (*tree)->overlays());
            if (!ran.ok()) return std::move(ran).error();
            runs.push_back(!ran->timed_out && ran->exit_code == 0);
        }
        out.push_back(std::move(runs));
    }
    return out;
}

// The change tried for real: its task, or why it is none.
Result<std::optional<Task>> try_change(const MineOptions& o, const git::HistoryCommit& commit,
                                       const std::vector<git::FileChange>& files,
                                       const std::vector<std::string>& tests, std::string& why) {
    const std::string& base = commit.parents.front();
    auto with_tests = git::commit_with_paths_from(
        o.repo_root, base, commit.id, tests,
        "replay: the base of " + commit.id.substr(0, 12) + " with its tests");
    if (!with_tests.ok()) return std::move(with_tests).error();
    auto logs = check::cocode_git_dir(o.repo_root);
    if (!logs.ok()) return std::move(logs).error();
    const fs::path log_dir = *logs / "replay-logs" / commit.id.substr(0, 12);
    std::error_code ec;
    fs::create_directories(log_dir, ec);
    auto at_base = verify_at(o, *with_tests, log_dir);
    if (!at_base.ok()) return std::move(at_base).error();
    auto at_change = verify_at(o, commit.id, log_dir);
    if (!at_change.ok()) return std::move(at_change).error();
    fs::remove_all(log_dir, ec);
    std::vector<CommandRuns> runs;
    for (std::size_t i = 0; i < o.config->check.verify.size(); ++i)
        runs.push_back({o.config->check.verify[i].name, (*at_base)[i], (*at_change)[i]});
    TestSplit split = split_tests(runs);
    if (!split.why_not.empty()) {
        why = split.why_not;
        return std::optional<Task>{};
    }
    Task task;
    task.id = commit.id.substr(0, 12);
    task.commit = commit.id;
    task.base = base;
    task.statement = statement_for(o, commit);
    task.hidden_tests = tests;
    task.fail_to_pass = split.fail_to_pass;
    task.pass_to_pass = split.pass_to_pass;
    task.flaky = split.flaky;
    for (const auto& v : o.config->check.verify)
        if (std::find(split.flaky.begin(), split.flaky.end(), v.name) == split.flaky.end())
            task.verify.push_back(v);
    for (const auto& f : files) task.lines += f.insertions + f.deletions;
    task.kind = check::work_kind({}, check::AcceptedChange{files, task.lines});
    task.mined_at = format_utc_timestamp(std::chrono::system_clock::now());
    return std::optional<Task>(std::move(task));
}

}  // namespace

Result<Mined> mine(const MineOptions& o) {
    if (!o.config || o.config->check.verify.empty())
        return Error::usage(
            "check.verify: mining needs the verify commands that run the repository's tests "
            "(docs/configuration.md)");
    auto repo = git::Repository::open(o.repo_root);
    if (!repo.ok()) return std::move(repo).error();
    auto history = git::first_parent_history(o.repo_root, o.revision, o.limit, o.since);
    if (!history.ok()) return std::move(history).error();
    const fs::path tasks_dir = o.repo_root / kTasksDir;
    Mined out;
    for (const auto& commit : *history) {
        const std::string id = commit.id.substr(0, 12);
        auto say = [&](const std::string& line) {
            if (o.progress) o.progress(id + " " + line);
        };
        if (fs::exists(tasks_dir / id / kTaskFile)) {
            out.skipped.push_back({commit.id, "a task already"});
            say("skipped: a task already");
            continue;
        }
        std::vector<git::FileChange> files;
        if (!commit.parents.empty()) {
            auto changed = repo->changed_files(commit.parents.front(), commit.id);
            if (!changed.ok()) return std::move(changed).error();
            files = std::move(*changed);
        }
        std::vector<std::string> tests;
        std::string why = why_no_task(commit, files, o.limits, tests);
        std::optional<Task> task;
        if (why.empty()) {
            auto tried = try_change(o, commit, files, tests, why);
            if (!tried.ok()) return std::move(tried).error();
            task = std::move(*tried);
        }
        if (!task) {
            out.skipped.push_back({commit.id, why});
            say("skipped: " + why);
            continue;
        }
        auto patch = git::git_output(o.repo_root, [&] {
            std::vector<std::string> args = {
                "diff", "--binary", "--no-color", "--no-ext-diff", task->base, task->commit, "--"};
            args.insert(args.end(), tests.begin(), tests.end());
            return args;
        }());
        if (!patch.ok()) return std::move(patch).error();
        if (auto written = write_task(tasks_dir, *task, *patch); !written)
            return std::move(written).error();
        say("task: " + std::to_string(task->fail_to_pass.size()) + " FAIL_TO_PASS, " +
            std::to_string(task->pass_to_pass.size()) + " PASS_TO_PASS" +
            (task->flaky.empty() ? ""
                                 : ", " + std::to_string(task->flaky.size()) + " flaky left out"));
        out.tasks.push_back(std::move(*task));
    }
    return out;
}

}  // namespace cocode::replay
