#include "check/clean_tree.h"

#include <unistd.h>

#include <atomic>
#include <random>

#include "core/files.h"
#include "environment/key.h"
#include "git/cli.h"
#include "proc/process_tree.h"

namespace cocode::check {
namespace fs = std::filesystem;

namespace {

constexpr char kHeld[] = ".held";

void remove_quietly(const fs::path& path) {
    if (!path.empty()) (void)remove_tree(path);
}

// Trees a killed check left: their lock is free.
void sweep(const fs::path& trees) {
    std::error_code ec;
    for (const auto& entry : list_folder(trees, ec)) {
        const std::string name = entry.path.filename().string();
        if (name.size() <= std::string_view(kHeld).size() ||
            name.compare(name.size() - std::string_view(kHeld).size(), std::string::npos, kHeld) !=
                0)
            continue;
        auto lock = FileLock::try_acquire(entry.path);
        if (!lock || !*lock) continue;
        const fs::path tree = trees / name.substr(0, name.size() - std::string_view(kHeld).size());
        remove_quietly(tree);
        remove_quietly(tree.string() + ".view");
        fs::remove(entry.path, ec);
    }
}

std::string fresh_name() {
    static std::atomic<unsigned> counter{0};
    std::random_device random;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%06x", random() & 0xffffff);
    return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + suffix;
}

}  // namespace

Result<fs::path> cocode_git_dir(const fs::path& repo_dir) {
    auto common =
        git::git_line(repo_dir, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
    if (!common) return std::move(common).error();
    return fs::path(*common) / "cocode";
}

Result<std::unique_ptr<CleanTree>> CleanTree::make(const fs::path& repo_dir,
                                                   const std::string& commit,
                                                   const TreeRules& rules,
                                                   const CommandRunner& runner,
                                                   const std::vector<std::string>& environment,
                                                   const fs::path& log_dir) {
    fs::path trees = rules.trees;
    if (trees.empty()) {
        auto own = cocode_git_dir(repo_dir);
        if (!own) return std::move(own).error();
        trees = *own / "trees";
    }
    std::error_code ec;
    fs::create_directories(trees, ec);
    if (ec) return Error::general("cannot create " + trees.string() + ": " + ec.message());
    sweep(trees);

    std::unique_ptr<CleanTree> tree(new CleanTree());
    tree->repo_dir_ = repo_dir;
    const std::string name = fresh_name();
    auto held = FileLock::acquire(trees / (name + kHeld));
    if (!held) return std::move(held).error();
    tree->held_ = std::move(*held);
    tree->path_ = trees / name;
    tree->scratch_ = trees / (name + ".view");
    tree->environment_ = environment;
    // A clone, not a linked worktree: concurrent `git worktree add`s read each other's
    // half-made entries.
    if (auto ok = environment::shared_checkout(repo_dir, tree->path_, commit); !ok)
        return std::move(ok).error();
    if (auto ok = tree->prepare(commit, rules, runner, log_dir); !ok) return std::move(ok).error();
    return tree;
}

Result<void> CleanTree::prepare(const std::string& commit, const TreeRules& rules,
                                const CommandRunner& runner, const fs::path& log_dir) {
    const auto deadline_of = [](config::Duration timeout) {
        return std::chrono::steady_clock::now() + timeout;
    };
    if (rules.environment && !rules.trees.empty()) {
        // Inside an agent's sandbox: its sealed environment, copied in as it is.
        setup_.source = rules.environment->source;
        setup_.key = rules.environment_key;
        auto entry = environment::Store(rules.store).as_recorded(setup_.key);
        if (!entry) {
            setup_.failure = "environment " + setup_.key + ": " + entry.error().message;
            return {};
        }
        setup_.mode = environment::Mode::reflink;
        auto view = environment::attach(*entry, path_, scratch_, setup_.mode);
        if (!view) return std::move(view).error();
        view_ = std::move(*view);
        environment_ = environment::with_env(environment_, entry->manifest.env, path_);
    } else if (rules.environment) {
        const environment::Spec& spec = *rules.environment;
        setup_.source = spec.source;
        // The base is trusted (the seal's, or the base a CI check names); the judged commit is
        // not. Its environment is the base's, built from the base, unless it changed a key file
        // (a lockfile): then one built from the commit, under a key that is that commit's
        // alone — a build of an agent's commit is never taken for another commit's (its setup
        // ran its files, which the key does not cover).
        std::string key = rules.environment_key, from = rules.base;
        if (!rules.base.empty() && rules.base != commit) {
            auto at_commit = environment::key_files_at(spec, repo_dir_, commit);
            auto at_base = environment::key_files_at(spec, repo_dir_, rules.base);
            if (!at_commit) return std::move(at_commit).error();
            if (!at_base) return std::move(at_base).error();
            setup_.changed = environment::changed_key_files(*at_base, *at_commit);
        }
        if (rules.base.empty() || !setup_.changed.empty()) {
            // Its key commands read the tree of the commit, in the sandbox: an agent's commit
            // is code.
            auto own = environment::key_at(spec, repo_dir_, commit, runner, path_);
            if (!own) return std::move(own).error();
            key = environment::commit_scoped_key(*own, commit);
            from = commit;
        } else if (key.empty()) {
            // No sealed key (a CI check): the base's, its key commands reading the main
            // worktree as a run's do.
            auto at_base = environment::key_at(spec, repo_dir_, rules.base, runner,
                                               rules.repo_root.empty() ? path_ : rules.repo_root);
            if (!at_base) return std::move(at_base).error();
            key = *at_base;
        }
        setup_.key = key;
        const environment::Store store(rules.store);
        const ProcessStamp self = stamp_of(::getpid());
        const std::string use = "check-" + path_.filename().string();
        if (auto ok = store.add_use(key, {use, {}, self.pid, self.start, boot_id()}); !ok)
            return std::move(ok).error();
        store_key_ = key;
        store_ = rules.store;
        auto entry = store.ensure({key, spec, repo_dir_, from, environment_}, runner);
        if (!entry) {
            setup_.failure = entry.error().message;
            return {};
        }
        const auto choice =
            environment::choose_mode(true, scratch_, rules.store, path_.parent_path());
        setup_.mode = choice.mode;
        auto view = environment::attach(*entry, path_, scratch_, choice.mode);
        if (!view) return std::move(view).error();
        view_ = std::move(*view);
        environment_ = environment::with_env(environment_, entry->manifest.env, path_);
    }
    std::error_code ec;
    for (const auto& name : rules.setup.copy) {
        const fs::path from = rules.repo_root / name;
        if (!fs::exists(from, ec)) continue;
        // The tree is the judged commit's: nothing is copied through a link it holds.
        if (auto ok = environment::copy_beneath(from, path_, name, false); !ok)
            return std::move(ok).error();
    }
    const fs::path log = log_dir / "check-setup.log";
    for (const auto& command : rules.setup.commands) {
        ++setup_.setup_commands;
        (void)append_line_locked(log, "$ " + command);
        CommandRequest c;
        c.command = command;
        c.cwd = path_;
        c.environment = environment_;
        c.deadline = deadline_of(std::chrono::minutes(20));
        c.log = log;
        c.record = log_dir / "check-egress.jsonl";
        c.overlays = view_.overlays;
        auto outcome = runner(c);
        if (!outcome) {
            setup_.failure =
                "worktree_setup.commands: `" + command + "`: " + outcome.error().message;
            return {};
        }
        if (outcome->exit_code != 0 || outcome->timed_out) {
            setup_.failure =
                "worktree_setup.commands: " + environment::setup_failure(c, *outcome, "20m");
            return {};
        }
    }
    return {};
}

CleanTree::~CleanTree() {
    if (!store_key_.empty())
        environment::Store(store_).drop_use(store_key_, "check-" + path_.filename().string());
    remove_quietly(path_);
    remove_quietly(scratch_);
    if (held_) {
        std::error_code ec;
        fs::remove(path_.string() + kHeld, ec);
    }
}

}  // namespace cocode::check
