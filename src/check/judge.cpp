#include "check/judge.h"

#include <chrono>

#include "check/report.h"
#include "check/verify.h"
#include "core/files.h"
#include "core/glob.h"
#include "git/agent_repo.h"
#include "git/cli.h"
#include "proc/command.h"
#include "proc/environment.h"
#include "proc/interrupt.h"
#include "run/run_folder.h"

namespace cocode::check {
namespace fs = std::filesystem;

namespace {

std::string short_id(const std::string& id) { return id.substr(0, 7); }

CheckItem named(std::string id, std::string name) {
    CheckItem item;
    item.id = std::move(id);
    item.name = std::move(name);
    return item;
}

std::string seconds_text(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
    return buf;
}

}  // namespace

CheckItem exit_code_check(const std::optional<int>& code, const std::string& run_summary) {
    CheckItem item = named("exit_code", "exit code");
    if (!code) {
        item.reason = "not known here (no run, or it has not ended)";
        return item;
    }
    if (auto failure = exit_code_failure(*code)) {
        item.outcome = Outcome::fail;
        item.reason = *failure;
        // What the dispatcher saw of the end: "timed out after 30m, with no output at all: …"
        if (!run_summary.empty()) item.reason += " (" + run_summary + ")";
    } else {
        item.outcome = Outcome::pass;
        item.reason = "exit 0: the marker decides";
    }
    return item;
}

namespace {

// The run's branch must still stand on its base, and the base branch and its remote-tracking
// ref must only have moved forward: an agent that amended the base, or force-moved main to
// make its work look like the base, is caught here.
CheckItem base_check(const git::Repository& repo, const std::string& base, const std::string& head,
                     const std::vector<run::SealedRef>& refs) {
    CheckItem item = named("base", "base");
    auto contained = repo.is_ancestor(base, head);
    if (!contained || !*contained) {
        item.outcome = Outcome::fail;
        item.reason = "the branch does not contain the base " + short_id(base) +
                      " (its history was rewritten)";
        return item;
    }
    for (const auto& ref : refs) {
        if (ref.commit.empty()) continue;  // it did not exist: nothing to move
        std::string name = ref.name;
        for (const char* prefix : {"refs/heads/", "refs/remotes/"})
            if (name.rfind(prefix, 0) == 0) name = name.substr(std::string_view(prefix).size());
        auto now = repo.lookup(ref.name);
        if (!now) {
            item.outcome = Outcome::fail;
            item.reason =
                name + " was deleted during the run (it was at " + short_id(ref.commit) + ")";
            return item;
        }
        if (now->id == ref.commit) continue;
        auto forward = repo.is_ancestor(ref.commit, now->id);
        if (!forward || !*forward) {
            item.outcome = Outcome::fail;
            item.reason = name + " was rewritten during the run (it was at " +
                          short_id(ref.commit) + ", now at " + short_id(now->id) + ")";
            return item;
        }
    }
    item.outcome = Outcome::pass;
    item.reason = "the branch stands on " + short_id(base);
    if (!refs.empty()) item.reason += "; the base branch only moved forward";
    return item;
}

CheckItem marker_check(const git::Repository& repo, const JudgeInput& input,
                       const std::vector<git::CommitInfo>& commits, std::string& ready_commit) {
    CheckItem item = named("marker", "ready marker");
    // Newest first: the last word is the one that counts. A round's own word: the commits
    // from where it began on, not an earlier round's.
    for (const auto& commit : commits) {
        if (!input.round_from.empty() && commit.id == input.round_from) break;
        if (commit.message.find(input.marker) == std::string::npos) continue;
        ready_commit = commit.id;
        item.outcome = Outcome::pass;
        item.reason = "in " + short_id(commit.id) + " \"" + commit.summary + "\"";
        return item;
    }
    item.outcome = Outcome::fail;
    item.reason = input.round_from.empty()
                      ? "no commit after the base carries \"" + input.marker + "\""
                      : "no commit of round " + std::to_string(input.round) + " (after " +
                            short_id(input.round_from) + ") carries \"" + input.marker + "\"";
    // cocode-py's false positive, named: a marker already in the base does not count.
    if (auto base = repo.lookup(input.base);
        base && base->message.find(input.marker) != std::string::npos)
        item.reason += " (the base commit " + short_id(base->id) + " does, which does not count)";
    return item;
}

}  // namespace

CheckItem commits_check(const std::vector<git::CommitInfo>& commits,
                        const std::vector<git::FileChange>& files, const std::string& base) {
    CheckItem item = named("commits", "commits");
    if (commits.empty()) {
        item.outcome = Outcome::fail;
        item.reason = "no commit since the base " + short_id(base);
        return item;
    }
    item.outcome = Outcome::pass;
    item.reason = plural(commits.size(), "commit", "commits") + " since " + short_id(base) + ", " +
                  plural(files.size(), "file", "files") + " changed";
    return item;
}

CheckItem network_check(const NetworkRecord& record) {
    CheckItem item = named("network", "network");
    std::vector<std::string> hosts;
    for (const auto& e : record.blocked) {
        const std::string where = net::entry_text({e.host, e.port, ""});
        const std::string line = where + (e.command.empty() ? "" : " — " + e.command);
        if (std::find(item.files.begin(), item.files.end(), line) == item.files.end())
            item.files.push_back(line);
        if (std::find(hosts.begin(), hosts.end(), where) == hosts.end()) hosts.push_back(where);
    }
    if (hosts.empty()) {
        item.outcome = Outcome::pass;
        item.reason = "nothing blocked";
        return item;
    }
    std::string named_hosts;
    for (std::size_t i = 0; i < hosts.size() && i < 5; ++i)
        named_hosts += (i ? ", " : "") + hosts[i];
    if (hosts.size() > 5) named_hosts += " and " + std::to_string(hosts.size() - 5) + " more";
    item.outcome = record.fail_on_blocked ? Outcome::fail : Outcome::pass;
    item.reason = "blocked: " + named_hosts +
                  (record.fail_on_blocked ? " (network.on_blocked: fail)" : " (on_blocked: warn)");
    return item;
}

CheckItem scope_check(const config::CheckConfig& rules, const std::vector<git::FileChange>& files) {
    CheckItem item = named("scope", "scope");
    if (rules.allowed_paths.empty() && rules.read_only_paths.empty()) {
        item.reason = "no path rules configured (check.allowed_paths, check.read_only_paths)";
        return item;
    }
    auto any = [](const std::vector<std::string>& globs, const std::string& path) {
        for (const auto& glob : globs)
            if (glob_match(glob, path)) return true;
        return false;
    };
    std::vector<std::string> outside, read_only;
    for (const auto& file : files) {
        // A rename touches both ends: moving a read-only file away is touching it.
        for (const std::string* path : {&file.old_path, &file.path}) {
            if (path == &file.old_path && file.old_path == file.path) continue;
            if (!rules.allowed_paths.empty() && !any(rules.allowed_paths, *path))
                outside.push_back(*path);
            if (any(rules.read_only_paths, *path)) read_only.push_back(*path);
        }
    }
    if (outside.empty() && read_only.empty()) {
        item.outcome = Outcome::pass;
        item.reason = files.empty()       ? "no file changed"
                      : files.size() == 1 ? "the 1 file is within the allowed paths"
                                          : "all " + std::to_string(files.size()) +
                                                " files within the allowed paths";
        return item;
    }
    item.outcome = Outcome::fail;
    std::string why;
    auto list = [](const std::vector<std::string>& paths) {
        std::string out;
        for (std::size_t i = 0; i < paths.size() && i < 5; ++i) out += (i ? ", " : "") + paths[i];
        if (paths.size() > 5) out += ", … (" + std::to_string(paths.size()) + " in all)";
        return out;
    };
    if (!outside.empty()) why = "outside the allowed paths: " + list(outside);
    if (!read_only.empty())
        why += (why.empty() ? "" : "; ") + std::string("read-only: ") + list(read_only);
    item.reason = why;
    item.files = outside;
    item.files.insert(item.files.end(), read_only.begin(), read_only.end());
    return item;
}

std::string verify_not_run_because(const std::vector<CheckItem>& checks, bool verify) {
    for (const auto& c : checks)
        if (c.outcome == Outcome::fail) return "not run: " + c.name + " failed";
    return verify ? std::string() : "not run (--no-verify)";
}

bool passes(const std::vector<CheckItem>& checks) {
    return std::none_of(checks.begin(), checks.end(),
                        [](const CheckItem& c) { return c.outcome == Outcome::fail; });
}

std::optional<std::string> exit_code_failure(int code) {
    switch (code) {
        case 0:
            return std::nullopt;
        case 1:
            return "exit 1: general failure";
        case 2:
            return "exit 2: invalid arguments (check the agent's configuration)";
        case 3:
            return "exit 3: missing dependencies (run `cocode-dispatch doctor`)";
        case 124:
            return "exit 124: timed out";
        case 125:
            return "exit 125: over its budget (max_cost_usd or max_tokens)";
        case 130:
            return "exit 130: interrupted";
        default:
            return "exit " + std::to_string(code) + ": failed";
    }
}

std::vector<CheckItem> plan_round_checks(const std::optional<int>& exit_code,
                                         const std::string& run_summary,
                                         const std::vector<git::CommitInfo>& commits,
                                         const std::vector<std::string>& uncommitted,
                                         const PlanRead& read) {
    std::vector<CheckItem> checks{exit_code_check(exit_code, run_summary)};
    if (checks.front().outcome == Outcome::pass) checks.front().reason = "exit 0";  // no marker
    CheckItem wrote = named("read_only", "read-only");
    if (!commits.empty()) {
        wrote.outcome = Outcome::fail;
        wrote.reason = "a plan round made " + plural(commits.size(), "commit", "commits");
    } else if (!uncommitted.empty()) {
        wrote.outcome = Outcome::fail;
        wrote.files = uncommitted;
        wrote.reason =
            "a plan round changed " + uncommitted.front() +
            (uncommitted.size() > 1 ? " and " + std::to_string(uncommitted.size() - 1) + " more"
                                    : std::string());
    } else {
        wrote.outcome = Outcome::pass;
        wrote.reason = "nothing written";
    }
    checks.push_back(std::move(wrote));
    CheckItem plan = named("plan", "plan");
    plan.outcome = read.plan ? Outcome::pass : Outcome::fail;
    plan.reason = read.plan ? "plan " + read.plan->hash + ": " +
                                  plural(read.plan->files.size(), "file", "files") + ", " +
                                  plural(read.plan->steps.size(), "step", "steps")
                            : "no plan: " + read.why_not;
    checks.push_back(std::move(plan));
    return checks;
}

namespace {

// `git status --porcelain=v1 -z`'s entries: each one's two-letter code and path (a rename's
// old name, which follows it, skipped).
std::vector<std::pair<std::string, std::string>> porcelain_entries(const std::string& status) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t at = 0;
    while (at < status.size()) {
        std::size_t end = status.find('\0', at);
        if (end == std::string::npos) end = status.size();
        const std::string entry = status.substr(at, end - at);
        at = end + 1;
        if (entry.size() < 4) continue;
        out.emplace_back(entry.substr(0, 2), entry.substr(3));
        if (entry[0] == 'R' || entry[0] == 'C') {  // the old name
            const std::size_t old_end = status.find('\0', at);
            at = old_end == std::string::npos ? status.size() : old_end + 1;
        }
    }
    return out;
}

}  // namespace

CheckItem worktree_check(const std::string& status, const std::string& worktree_head,
                         const std::string& judged, const std::vector<std::string>& own_paths) {
    CheckItem item = named("worktree", "worktree");
    item.outcome = Outcome::pass;  // reported, never judged
    auto own = [&](std::string path) {
        while (!path.empty() && path.back() == '/') path.pop_back();
        return std::any_of(own_paths.begin(), own_paths.end(), [&](const std::string& o) {
            auto under = [](const std::string& a, const std::string& b) {  // a inside b
                return a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '/';
            };
            return path == o || under(path, o) || under(o, path);
        });
    };
    std::vector<std::string> shown;
    for (const auto& [code, path] : porcelain_entries(status)) {
        if (own(path)) continue;
        item.files.push_back(path);
        const std::string what = code == "??"                          ? "untracked"
                                 : code == "!!"                        ? "ignored"
                                 : code.find('D') != std::string::npos ? "deleted"
                                                                       : "modified";
        shown.push_back(path + " (" + what + ")");
    }
    std::string reason;
    if (worktree_head != judged)
        reason = "the worktree has " + short_id(worktree_head) + " checked out, not the judged " +
                 short_id(judged);
    if (!shown.empty()) {
        reason +=
            (reason.empty() ? "the worktree differs from " + short_id(judged) : "; it differs") +
            " in " + plural(shown.size(), "path", "paths") + ": ";
        for (std::size_t i = 0; i < shown.size() && i < 5; ++i)
            reason += (i ? ", " : "") + shown[i];
        if (shown.size() > 5) reason += ", …";
    }
    item.reason = reason.empty() ? "the worktree is the judged commit"
                                 : reason +
                                       " (not judged: the verify commands ran on a clean "
                                       "checkout of the commit)";
    if (item.files.size() > 50) item.files.resize(50);
    return item;
}

std::optional<CheckItem> setup_check(const TreeSetup& setup) {
    if (setup.key.empty() && setup.setup_commands == 0 && setup.failure.empty())
        return std::nullopt;
    CheckItem item = named("setup", "setup");
    if (!setup.failure.empty()) {
        item.outcome = Outcome::fail;
        item.reason = setup.failure;
        return item;
    }
    item.outcome = Outcome::pass;
    std::string reason;
    if (!setup.key.empty()) {
        reason = "environment " + setup.key + " (" +
                 std::string(environment::mode_name(setup.mode)) + ", " + setup.source + ")";
        if (!setup.changed.empty()) {
            reason += ", built for this commit: ";
            for (std::size_t i = 0; i < setup.changed.size() && i < 3; ++i)
                reason += (i ? ", " : "") + setup.changed[i];
            reason += " changed";
            item.files = setup.changed;
        }
    }
    if (setup.setup_commands > 0)
        reason += (reason.empty() ? "" : "; ") + std::string("worktree_setup: ") +
                  plural(static_cast<std::size_t>(setup.setup_commands), "command", "commands");
    item.reason = reason;
    return item;
}

namespace {

// The agent's own repository its worktree's git reads (git/agent_repo.h), which the sandbox
// keeps out of sight with the other runs' folders; none for a checkout that is not a run's.
fs::path agent_repository(const JudgeInput& input) {
    if (input.repository.empty()) return {};
    return run::pair_sandbox(input.repository / run::kRunsDir, input.worktree.filename().string())
        .git();
}

// What the agent's worktree holds beyond the judged commit: git's word on it, asked in the
// sandbox (the runner's): the worktree's git folder and its settings are the agent's.
std::optional<CheckItem> worktree_item(const JudgeInput& input, const std::string& judged) {
    if (!input.runner) return std::nullopt;
    auto said = git::agent_git(
        input.runner, input.worktree,
        "git status --porcelain=v1 -z --ignored=traditional --untracked-files=normal && "
        "printf '\\0HEAD ' && git rev-parse --verify --quiet HEAD",
        allowlisted_environment(current_environment(), {}), {}, {agent_repository(input)});
    // Its git and settings are the agent's to break: that is said, not left out — and not in
    // the words its git printed (the agent's, which go out with the verdict).
    const auto untold = [] {
        CheckItem item = named("worktree", "worktree");
        item.outcome = Outcome::pass;  // reported, never judged
        item.reason = "cannot tell what the worktree holds: its git failed there";
        return item;
    };
    if (!said) return untold();
    const std::size_t split = said->rfind(std::string("\0HEAD ", 6));
    if (split == std::string::npos) return untold();
    return worktree_check(said->substr(0, split), first_line(said->substr(split + 6)), judged,
                          input.worktree_own_paths);
}

// A plan round: nothing written since it began, and a plan in its answer.
Result<Verdict> judge_plan_round(const JudgeInput& input, git::Repository& repo, Verdict v) {
    const std::string from = input.round_from.empty() ? v.base : input.round_from;
    auto commits = repo.commits_between(from, v.head);
    if (!commits) return std::move(commits).error();
    // What the worktree holds uncommitted (it was read-only to the agent), by its own git in
    // the sandbox: the repository its `.git` names is the agent's.
    if (!input.runner) return Error::general("judging a plan round needs a runner for its git");
    auto status = git::agent_git(
        input.runner, input.worktree, "git status --porcelain=v1 -z --untracked-files=normal",
        allowlisted_environment(current_environment(), {}), {}, {agent_repository(input)});
    if (!status) return std::move(status).error();
    std::vector<std::string> uncommitted;
    for (auto& [code, path] : porcelain_entries(*status)) uncommitted.push_back(std::move(path));
    const PlanRead read = read_work_plan(input.plan_answer);
    v.plan_round = true;
    v.plan = read.plan;
    v.plan_why_not = read.why_not;
    v.plan_text = input.plan_answer;
    v.checks = plan_round_checks(input.exit_code, input.run_summary, *commits, uncommitted, read);
    v.pass = passes(v.checks);
    return v;
}

}  // namespace

Result<Verdict> judge(const JudgeInput& input) {
    const auto started = std::chrono::steady_clock::now();
    const std::filesystem::path where =
        input.repository.empty() ? input.worktree : input.repository;
    auto repo = git::Repository::open(where);
    // The tools check what the user named before; what fails here is the repository's state.
    if (!repo) return Error::general(where.string() + ": " + repo.error().message);
    auto base = repo->lookup(input.base);
    if (!base) return Error::general("the base " + input.base + ": " + base.error().message);
    auto head = repo->lookup(input.head);
    if (!head) return Error::general(input.head + ": " + head.error().message);
    auto commits = repo->commits_between(base->id, head->id);
    if (!commits) return std::move(commits).error();
    auto files = repo->changed_files(base->id, head->id);
    if (!files) return std::move(files).error();

    Verdict v;
    v.run_id = input.run_id;
    v.issue = input.issue;
    v.issue_url = input.issue_url;
    v.agent = input.agent;
    v.branch = input.branch;
    v.base = base->id;
    v.head = head->id;
    v.agent_exit_code = input.exit_code;
    v.run_seconds = input.run_seconds;
    v.usage = input.usage;
    v.marker = input.marker;
    v.report_dir = input.report_dir;
    v.requested_by = input.requested_by;
    for (const auto& c : *commits) v.commits.push_back({c.id, c.summary});
    v.files = *files;
    for (const auto& f : v.files) v.insertions += f.insertions, v.deletions += f.deletions;
    if (input.plan_round) {
        auto judged = judge_plan_round(input, *repo, std::move(v));
        if (judged)
            judged->check_seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return judged;
    }

    v.checks.push_back(exit_code_check(input.exit_code, input.run_summary));
    v.checks.push_back(base_check(*repo, base->id, head->id, input.sealed_refs));
    v.checks.push_back(marker_check(*repo, input, *commits, v.ready_commit));
    v.checks.push_back(commits_check(*commits, v.files, v.base));
    v.checks.push_back(scope_check(input.rules, v.files));
    if (input.plan) {
        v.plan_rules = input.plan;
        v.checks.push_back(plan_scope_check(*input.plan, v.files));
    }
    if (input.network) v.checks.push_back(network_check(*input.network));
    if (input.clean_tree)
        if (auto item = worktree_item(input, head->id)) v.checks.push_back(std::move(*item));

    std::string why_not = verify_not_run_because(v.checks, input.verify);
    if (!input.runner) return Error::general("judge: no runner for the verify commands");
    auto environment = allowlisted_environment(current_environment(), input.rules.verify_env);
    int index = 0;
    // The approved plan's verify commands run after the configured ones (bind_verify kept only
    // those a configured prefix allows).
    std::vector<config::VerifyCommand> commands = input.rules.verify;
    if (input.plan)
        for (const auto& run : input.plan->verify)
            commands.push_back({run + " (plan)", run, std::nullopt});
    // Never where the agent worked: a clean tree of exactly the judged commit.
    std::unique_ptr<CleanTree> tree;
    fs::path cwd = input.worktree;
    // A stop asked while the check runs (Ctrl-C, `stop`: proc/interrupt.h) ends the command
    // under way; the check then ends with `interrupted`, never a verdict of what was cut short.
    auto stopped = [](const std::string& during) -> std::optional<Error> {
        if (!stop_asked()) return std::nullopt;
        return Error{ExitCode::interrupted, "interrupted in the check, during " + during};
    };
    auto step = [&](const std::string& name, std::optional<std::chrono::milliseconds> timeout) {
        if (input.on_step) input.on_step(name, timeout);
    };
    if (auto stop = stopped("its start")) return *stop;
    if (input.clean_tree && why_not.empty() && !commands.empty()) {
        step("clean tree", std::nullopt);
        auto made = CleanTree::make(where, head->id, input.tree, input.runner, environment,
                                    input.report_dir);
        if (auto stop = stopped("its clean tree's setup")) return *stop;
        if (!made) return std::move(made).error();
        tree = std::move(*made);
        if (auto item = setup_check(tree->setup())) v.checks.push_back(std::move(*item));
        why_not = verify_not_run_because(v.checks, input.verify);
        cwd = tree->path();
        environment = tree->environment();
    }
    for (const auto& command : commands) {
        ++index;
        CheckItem item = named("verify", "verify: " + command.name);
        if (!why_not.empty()) {
            item.reason = why_not;
            v.checks.push_back(std::move(item));
            continue;
        }
        const auto timeout = command.timeout.value_or(input.rules.verify_timeout);
        item.output_path = input.report_dir / ("verify-" + std::to_string(index) + ".log");
        step("verify: " + command.name,
             std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
        auto ran =
            run_verify(input.runner, command.run, cwd, environment, timeout, item.output_path,
                       tree ? tree->overlays() : std::vector<OverlayMount>{},
                       input.report_dir / "check-egress.jsonl");
        if (auto stop = stopped("verify: " + command.name)) return *stop;
        if (!ran) return std::move(ran).error();
        item.exit_code = ran->exit_code;
        item.timed_out = ran->timed_out;
        item.seconds = ran->seconds;
        item.output_tail = ran->tail;
        if (ran->timed_out) {
            item.outcome = Outcome::fail;
            item.reason = "timed out after " + config::format_duration(timeout);
        } else if (ran->exit_code != 0) {
            item.outcome = Outcome::fail;
            item.reason =
                "exit " + std::to_string(ran->exit_code) + " after " + seconds_text(ran->seconds);
        } else {
            item.outcome = Outcome::pass;
            item.reason = "exit 0 after " + seconds_text(ran->seconds);
        }
        v.checks.push_back(std::move(item));
    }
    v.pass = passes(v.checks);
    v.check_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return v;
}

}  // namespace cocode::check
