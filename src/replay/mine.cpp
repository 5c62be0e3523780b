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

// A clean tree of one commit with its environment, made when a verify command first runs
// there; `failure` says why its environment did not set up.
class TreeAt {
  public:
    TreeAt(const MineOptions& o, std::string commit, std::string side, fs::path log_dir)
        : o_(o), commit_(std::move(commit)), side_(std::move(side)), log_dir_(std::move(log_dir)) {}

    // Whether `command` (the index-th) passes there, once more; the failure of the tree's
    // environment is an outcome (`failure`), not an error.
    Result<std::optional<bool>> run(const config::VerifyCommand& command, std::size_t index,
                                    std::size_t attempt) {
        if (!tree_) {
            auto rules = check::tree_rules_for(*o_.config, o_.repo_root, o_.repo_root, commit_, "");
            if (!rules.ok()) return std::move(rules).error();
            auto tree = check::CleanTree::make(
                o_.repo_root, commit_, *rules, o_.runner,
                allowlisted_environment(current_environment(), o_.config->check.verify_env),
                log_dir_);
            if (!tree.ok()) return std::move(tree).error();
            tree_ = std::move(*tree);
        }
        if (!tree_->setup().failure.empty()) {
            failure =
                "its environment does not set up at the " + side_ + ": " + tree_->setup().failure;
            return std::optional<bool>{};
        }
        auto ran = check::run_verify(o_.runner, command.run, tree_->path(), tree_->environment(),
                                     command.timeout.value_or(o_.config->check.verify_timeout),
                                     log_dir_ / (side_ + "-" + std::to_string(index + 1) + "-" +
                                                 std::to_string(attempt + 1) + ".log"),
                                     tree_->overlays(), log_dir_ / "egress.jsonl");
        if (!ran.ok()) return std::move(ran).error();
        return std::optional<bool>(!ran->timed_out && ran->exit_code == 0);
    }

    std::string failure;

  private:
    const MineOptions& o_;
    std::string commit_, side_;
    fs::path log_dir_;
    std::unique_ptr<check::CleanTree> tree_;
};

// The verify commands at the change and at the base with the hidden tests, no more often than
// the answer needs (runs_still_needed): each once at the change, then at the base, then the
// change's other runs, then the base's (a command's repeats back to back, as the old order
// had them); "" in `why` when they ran.
Result<std::vector<CommandRuns>> run_both(const MineOptions& o, TreeAt& change, TreeAt& base,
                                          std::size_t& made, std::string& why) {
    const auto& commands = o.config->check.verify;
    std::vector<CommandRuns> runs;
    for (const auto& command : commands) runs.push_back({command.name, {}, {}});
    // One more run of every command still wanted at one side; false when none was.
    auto step = [&](bool at_change) -> Result<bool> {
        const NextRuns next = runs_still_needed(runs, o.repeats);
        bool ran_any = false;
        for (std::size_t i = 0; i < commands.size() && why.empty(); ++i) {
            if (!(at_change ? next.at_change : next.at_base)[i]) continue;
            auto& done = at_change ? runs[i].at_change : runs[i].at_base;
            TreeAt& tree = at_change ? change : base;
            auto passed = tree.run(commands[i], i, done.size());
            if (!passed.ok()) return std::move(passed).error();
            if (!*passed) {
                why = tree.failure;
                return false;
            }
            done.push_back(**passed);
            ++made;
            ran_any = true;
        }
        return ran_any;
    };
    // The first round, then the rest of the change's runs, then the rest of the base's.
    for (const bool at_change : {true, false})
        if (auto ran = step(at_change); !ran.ok()) return std::move(ran).error();
    for (const bool at_change : {true, false})
        for (;;) {
            auto ran = step(at_change);
            if (!ran.ok()) return std::move(ran).error();
            if (!*ran) break;
        }
    return runs;
}

// The change tried for real: its task, or why it is none.
Result<std::optional<Task>> try_change(const MineOptions& o, const git::HistoryCommit& commit,
                                       const std::vector<git::FileChange>& files,
                                       const std::vector<std::string>& tests, std::size_t& made,
                                       std::string& why) {
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
    TreeAt change(o, commit.id, "change", log_dir), at_base(o, *with_tests, "base", log_dir);
    auto runs = run_both(o, change, at_base, made, why);
    if (!runs.ok()) return std::move(runs).error();
    fs::remove_all(log_dir, ec);
    if (!why.empty()) return std::optional<Task>{};
    TestSplit split = split_tests(*runs);
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
            auto tried = try_change(o, commit, files, tests, out.verify_runs, why);
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
