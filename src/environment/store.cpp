#include "environment/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "config/config.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/sha256.h"
#include "git/cli.h"
#include "proc/command.h"
#include "proc/process_tree.h"
#include "run/run_folder.h"

namespace cocode::environment {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr char kManifest[] = "manifest.json";
constexpr char kStamp[] = "stamp";

// A key's folder: 24 hex digits (key.h); everything else in the store is a key's companion.
bool is_key_name(const std::string& name) {
    return name.size() == 24 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The names in a folder, sorted; errno's word when it cannot be read.
Result<std::vector<std::string>> names_in(const fs::path& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return Error::from_errno("cannot read " + dir.string(), errno);
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

std::string file_digest(const fs::path& file) {
    Sha256 hash;
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) return "unreadable";
    std::string buffer(std::size_t{1} << 20, '\0');
    for (;;) {
        const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        hash.add(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
    return hash.hex();
}

// One walk of an environment's paths under its tree, in a fixed order: its entries (with
// their contents' digests when `contents`) and a digest of their metadata — inode, size,
// mode, change time, which no write, chmod or rename leaves as it was, and which a user
// cannot set — that says cheaply whether anything changed since the last walk.
struct Walk {
    std::vector<ManifestFile> files;
    std::uint64_t size = 0;
    std::string stat_digest;
};

Result<void> walk_into(const fs::path& tree, const std::string& rel, bool contents, Walk& walk,
                       Sha256& stats) {
    const fs::path abs = tree / rel;
    struct stat st {};
    if (::lstat(abs.c_str(), &st) != 0)
        return Error::from_errno("cannot read " + abs.string(), errno);
    stats.add(rel + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
              std::to_string(st.st_mode) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
              std::to_string(st.st_ctim.tv_nsec) + "\n");
    ManifestFile entry;
    entry.path = rel;
    entry.mode = st.st_mode & 07777;
    if (S_ISDIR(st.st_mode)) {
        entry.type = 'd';
        walk.files.push_back(entry);
        auto names = names_in(abs);
        if (!names) return std::move(names).error();
        for (const auto& name : *names)
            if (auto ok = walk_into(tree, rel + "/" + name, contents, walk, stats); !ok) return ok;
        return {};
    }
    if (S_ISLNK(st.st_mode)) {
        entry.type = 'l';
        std::error_code ec;
        entry.digest = fs::read_symlink(abs, ec).string();
        walk.files.push_back(entry);
        return {};
    }
    if (!S_ISREG(st.st_mode))
        return Error::general(abs.string() +
                              " is neither a file, a folder nor a link: an environment holds none");
    entry.type = 'f';
    entry.size = static_cast<std::uint64_t>(st.st_size);
    if (contents) entry.digest = file_digest(abs);
    walk.size += entry.size;
    walk.files.push_back(entry);
    return {};
}

Result<Walk> walk_paths(const fs::path& tree, const std::vector<std::string>& paths,
                        bool contents) {
    Walk walk;
    Sha256 stats;
    for (const auto& path : paths)
        if (auto ok = walk_into(tree, path, contents, walk, stats); !ok)
            return std::move(ok).error();
    walk.stat_digest = stats.hex();
    return walk;
}

std::string manifest_hash(const std::vector<std::string>& paths,
                          const std::vector<ManifestFile>& files) {
    Sha256 hash;
    for (const auto& path : paths) hash.add("path " + path + "\n");
    for (const auto& f : files)
        hash.add(std::string(1, f.type) + " " + std::to_string(f.mode) + " " +
                 std::to_string(f.size) + " " + f.digest + " " + f.path + "\n");
    return hash.hex();
}

json manifest_json(const Manifest& m) {
    json files = json::array();
    for (const auto& f : m.files)
        files.push_back(json::array({f.path, std::string(1, f.type), f.mode, f.size, f.digest}));
    json env = json::object();
    for (const auto& [name, value] : m.env) env[name] = value;
    return {{"version", 1},       {"key", m.key},     {"created", m.created}, {"source", m.source},
            {"commit", m.commit}, {"paths", m.paths}, {"env", env},           {"size", m.size},
            {"hash", m.hash},     {"files", files}};
}

Result<Manifest> read_manifest(const fs::path& file) {
    auto text = read_file(file, std::size_t{512} << 20);
    if (!text) return std::move(text).error();
    auto doc = parse_json_text(*text, file.string(), "an environment's manifest");
    if (!doc) return std::move(doc).error();
    try {
        Manifest m;
        m.key = doc->at("key").get<std::string>();
        m.created = doc->at("created").get<std::string>();
        m.source = doc->at("source").get<std::string>();
        m.commit = doc->at("commit").get<std::string>();
        m.paths = doc->at("paths").get<std::vector<std::string>>();
        for (const auto& [name, value] : doc->at("env").items())
            m.env.emplace_back(name, value.get<std::string>());
        m.size = doc->at("size").get<std::uint64_t>();
        m.hash = doc->at("hash").get<std::string>();
        for (const auto& f : doc->at("files")) {
            ManifestFile entry;
            entry.path = f.at(0).get<std::string>();
            entry.type = f.at(1).get<std::string>().at(0);
            entry.mode = f.at(2).get<unsigned>();
            entry.size = f.at(3).get<std::uint64_t>();
            entry.digest = f.at(4).get<std::string>();
            m.files.push_back(std::move(entry));
        }
        return m;
    } catch (const std::exception& e) {
        return Error::general(file.string() + ": not an environment's manifest (" + e.what() + ")");
    }
}

// What first differs between what a manifest lists and what is there.
std::string first_difference(const std::vector<ManifestFile>& listed,
                             const std::vector<ManifestFile>& found) {
    const std::size_t n = std::min(listed.size(), found.size());
    for (std::size_t i = 0; i < n; ++i) {
        const ManifestFile &a = listed[i], &b = found[i];
        if (a.path != b.path) return a.path < b.path ? a.path + " is gone" : b.path + " was added";
        if (a.type != b.type) return a.path + " changed its type";
        if (a.size != b.size)
            return a.path + " has " + std::to_string(b.size) + " bytes, not " +
                   std::to_string(a.size);
        if (a.digest != b.digest) return a.path + " changed";
        if (a.mode != b.mode) return a.path + " changed its mode";
    }
    if (listed.size() > found.size()) return listed[n].path + " is gone";
    if (found.size() > listed.size()) return found[n].path + " was added";
    return "";
}

std::string use_json(const Use& use) {
    return json_dump(json{{"name", use.name},
                          {"run_folder", use.run_folder.string()},
                          {"pid", use.pid},
                          {"start", use.start},
                          {"boot", use.boot}}) +
           "\n";
}

std::vector<Use> uses_of(const fs::path& uses_dir) {
    std::vector<Use> out;
    auto names = names_in(uses_dir);
    if (!names) return out;
    for (const auto& name : *names) {
        auto text = read_file(uses_dir / name, 64 << 10);
        if (!text) continue;
        const json doc = json::parse(*text, nullptr, false);
        if (!doc.is_object()) continue;
        Use use;
        use.name = doc.value("name", name);
        use.run_folder = doc.value("run_folder", "");
        use.pid = doc.value("pid", 0L);
        use.start = doc.value("start", std::uint64_t{0});
        use.boot = doc.value("boot", "");
        out.push_back(std::move(use));
    }
    return out;
}

std::chrono::system_clock::time_point last_used(const fs::path& dir, const fs::path& uses_dir) {
    struct stat st {};
    if (::stat(uses_dir.c_str(), &st) != 0 && ::stat((dir / kManifest).c_str(), &st) != 0)
        return {};
    return std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec) +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(
               std::chrono::nanoseconds(st.st_mtim.tv_nsec));
}

// The entries of `tree` below `rel` that the commit does not hold (`tracked`: its files and
// folders), a folder of them collapsed into one entry (`node_modules`), as `git status` lists
// untracked and ignored files; the checkout's own .git left out.
Result<void> untracked_in(const fs::path& tree, const std::string& rel,
                          const std::set<std::string>& tracked, std::vector<std::string>& out) {
    std::error_code ec;
    for (const auto& entry : list_folder(rel.empty() ? tree : tree / rel, ec)) {
        const std::string name = entry.path.filename().string();
        if (rel.empty() && name == ".git") continue;
        const std::string path = rel.empty() ? name : rel + "/" + name;
        if (!tracked.count(path)) {
            out.push_back(path);
            continue;
        }
        struct stat st {};
        if (::lstat(entry.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            if (auto ok = untracked_in(tree, path, tracked, out); !ok) return ok;
    }
    if (ec) return Error::general("cannot read " + (tree / rel).string() + ": " + ec.message());
    return {};
}

// What the setup made for agents: the configured paths (each must be there), else every top
// entry the commit does not hold. Which those are is read from the commit in the repository
// (`repo_dir`) and the tree's folders, never by a git run in the build's checkout: its setup
// ran there, and may have left settings in it that a git on the host would carry out.
Result<std::vector<std::string>> made_paths(const Spec& spec, const fs::path& tree,
                                            const fs::path& repo_dir, const std::string& commit) {
    if (spec.paths) {
        std::vector<std::string> out;
        for (const auto& path : *spec.paths) {
            struct stat st {};
            if (::lstat((tree / path).c_str(), &st) != 0)
                return Error::usage("environment.paths: " + path +
                                    " was not made by the setup (nothing there after it ran)");
            out.push_back(fs::path(path).lexically_normal().generic_string());
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
    auto listed = git::git_output(
        repo_dir, {"ls-tree", "-r", "-t", "-z", "--name-only", "--full-tree", commit});
    if (!listed) return std::move(listed).error();
    std::set<std::string> tracked;
    for (std::size_t at = 0; at < listed->size();) {
        std::size_t end = listed->find('\0', at);
        if (end == std::string::npos) end = listed->size();
        tracked.insert(listed->substr(at, end - at));
        at = end + 1;
    }
    std::vector<std::string> out;
    if (auto ok = untracked_in(tree, "", tracked, out); !ok) return std::move(ok).error();
    std::sort(out.begin(), out.end());
    return out;
}

// Leaves only `keep` (and the folders above them) in `tree`: the checkout's own files and its
// .git go; what the setup made for agents stays where it was made.
Result<void> keep_only(const fs::path& tree, const std::string& rel,
                       const std::vector<std::string>& keep) {
    auto names = names_in(rel.empty() ? tree : tree / rel);
    if (!names) return std::move(names).error();
    for (const auto& name : *names) {
        const std::string path = rel.empty() ? name : rel + "/" + name;
        if (std::find(keep.begin(), keep.end(), path) != keep.end()) continue;
        const bool above = std::any_of(keep.begin(), keep.end(), [&](const std::string& k) {
            return k.size() > path.size() && k.compare(0, path.size(), path) == 0 &&
                   k[path.size()] == '/';
        });
        struct stat st {};
        if (above && ::lstat((tree / path).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            if (auto ok = keep_only(tree, path, keep); !ok) return ok;
            continue;
        }
        if (auto ok = remove_tree(tree / path); !ok) return ok;
    }
    return {};
}

}  // namespace

fs::path default_store() {
    if (const char* own = std::getenv("COCODE_ENV_STORE"); own && *own) return own;
    if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache == '/')
        return fs::path(cache) / "cocode" / "environments";
    const char* home = std::getenv("HOME");
    return fs::path(home && *home ? home : "/tmp") / ".cache" / "cocode" / "environments";
}

Result<void> shared_checkout(const fs::path& repo_dir, const fs::path& dest,
                             const std::string& commit) {
    auto common =
        git::git_line(repo_dir, {"rev-parse", "--path-format=absolute", "--git-common-dir"});
    if (!common) return std::move(common).error();
    // The commit may be an agent's: its attributes name no filter defined anywhere, so the
    // clone reads none of the user's configuration. The repository keeps the trust it had with
    // it — its owner may be another user (a CI runner's checkout) whom the user's safe.directory
    // trusts, as the rev-parse above just did: a configuration of cocode's own holds only that
    // (git before 2.42 takes safe.directory from no command line).
    std::vector<std::string> environment = git::environment_without_config();
    if (common->find_first_of("\n\"\\") == std::string::npos) {
        const fs::path trust = fs::path(*common) / "cocode" / "safe.gitconfig";
        const std::string text = "[safe]\n\tdirectory = \"" + *common + "\"\n";
        std::error_code ec;
        fs::create_directories(trust.parent_path(), ec);
        if (auto kept = read_file(trust, 64 << 10); !kept || *kept != text)
            if (auto ok = write_file_atomic(trust, text); !ok) return std::move(ok).error();
        std::replace(environment.begin(), environment.end(),
                     std::string("GIT_CONFIG_GLOBAL=/dev/null"),
                     "GIT_CONFIG_GLOBAL=" + trust.string());
    }
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"-c", "core.hooksPath=/dev/null", "clone", "--quiet", "--shared",
                                   "--no-checkout", "--no-tags", *common, dest.string()},
          std::vector<std::string>{"-C", dest.string(), "-c", "core.hooksPath=/dev/null",
                                   "checkout", "--quiet", "--detach", commit}}) {
        git::GitOptions options;
        options.environment = environment;
        if (auto ok = git::git_output({}, args, options); !ok) return std::move(ok).error();
    }
    return {};
}

bool use_is_live(const Use& use) {
    if (!use.run_folder.empty()) {
        auto info = run::read_run_info(use.run_folder);
        if (!info) return false;  // its folder is gone (cleaned): nothing holds it
        auto status = run::parse_status(info->get("status").value_or(""));
        return status && run::is_active(*status);
    }
    if (!use.boot.empty() && use.boot != boot_id()) return false;
    return is_alive({static_cast<pid_t>(use.pid), use.start});
}

std::string setup_failure(const CommandRequest& command, const CommandOutcome& outcome,
                          const std::string& timeout_text) {
    std::string line = "`" + command.command + "` ";
    line += outcome.timed_out ? "timed out (the setup's " + timeout_text + ")"
                              : "exited with " + std::to_string(outcome.exit_code);
    if (!outcome.blocked.empty()) {
        line += "; the network allowlist refused ";
        for (std::size_t i = 0; i < outcome.blocked.size() && i < 3; ++i)
            line += (i ? ", " : "") + outcome.blocked[i];
        line += " (network.allow in " + std::string(config::kConfigFile) + ")";
    }
    return line + " (log: " + command.log.string() + ")";
}

Result<std::optional<Entry>> Store::take(const std::string& key, std::string* why_not) const {
    auto no = [&](const std::string& why) -> Result<std::optional<Entry>> {
        if (why_not) *why_not = why;
        return std::optional<Entry>();
    };
    const fs::path dir = dir_of(key);
    std::error_code ec;
    if (!fs::exists(dir, ec)) return no("not built");
    if (!fs::exists(dir / kManifest, ec)) return no("unfinished (a build that did not end)");
    auto manifest = read_manifest(dir / kManifest);
    if (!manifest) return no("its manifest cannot be read: " + manifest.error().message);
    if (manifest->key != key) return no("its manifest is another key's");
    Entry entry{dir, std::move(*manifest)};
    const Manifest& m = entry.manifest;
    if (manifest_hash(m.paths, m.files) != m.hash) return no("its manifest does not add up");
    // The cheap look first: nothing's metadata changed since it was last checked whole.
    auto quick = walk_paths(entry.tree(), m.paths, false);
    if (!quick) return no("changed: " + quick.error().message);
    auto stamp = read_file(dir / kStamp, 4096);
    if (stamp && *stamp == quick->stat_digest) return std::optional<Entry>(std::move(entry));
    // Restored from a cache, touched, or changed: its contents decide.
    auto whole = walk_paths(entry.tree(), m.paths, true);
    if (!whole) return no("changed: " + whole.error().message);
    if (auto diff = first_difference(m.files, whole->files); !diff.empty())
        return no("changed or truncated: " + diff);
    if (auto ok = write_file_atomic(dir / kStamp, whole->stat_digest, 0644, Durability::none); !ok)
        return std::move(ok).error();
    return std::optional<Entry>(std::move(entry));
}

Result<Entry> Store::build(const BuildRequest& request, const CommandRunner& run) const {
    const fs::path dir = dir_of(request.key), tree = dir / "tree";
    const fs::path log = log_of(request.key);
    auto fail = [&](Error error) -> Result<Entry> {
        (void)remove_tree(dir);  // nothing of a failed build is left to be taken
        return error;
    };
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error::general("cannot create " + dir.string() + ": " + ec.message());
    if (auto ok = write_file_atomic(log, "", 0644, Durability::none); !ok) return fail(ok.error());
    if (auto ok = shared_checkout(request.repo_dir, tree, request.commit); !ok)
        return fail(ok.error());

    const auto deadline = std::chrono::steady_clock::now() + request.spec.timeout;
    const std::vector<std::string> environment =
        with_env(request.environment, request.spec.env, tree);
    for (const auto& command : request.spec.setup) {
        CommandRequest c;
        c.command = command;
        c.cwd = tree;
        c.environment = environment;
        c.deadline = deadline;
        c.log = log;
        c.record = dir.string() + ".egress.jsonl";
        (void)append_line_locked(log, "$ " + command);
        auto outcome = run(c);
        if (!outcome)
            return fail(Error::general("environment " + request.key + ": `" + command +
                                       "`: " + outcome.error().message));
        if (outcome->exit_code != 0 || outcome->timed_out)
            return fail(Error::general(
                "environment " + request.key + ": " +
                setup_failure(c, *outcome, config::format_duration(request.spec.timeout))));
    }
    auto paths = made_paths(request.spec, tree, request.repo_dir, request.commit);
    if (!paths) return fail(paths.error());
    if (auto ok = keep_only(tree, "", *paths); !ok) return fail(ok.error());
    auto walked = walk_paths(tree, *paths, true);
    if (!walked) return fail(walked.error());

    Manifest m;
    m.key = request.key;
    m.created = format_utc_timestamp(std::chrono::system_clock::now());
    m.source = request.spec.source;
    m.commit = request.commit;
    m.paths = *paths;
    m.env = request.spec.env;
    m.files = std::move(walked->files);
    m.size = walked->size;
    m.hash = manifest_hash(m.paths, m.files);
    // Everything on disk before the manifest says it is finished.
    if (UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); fd.valid())
        ::syncfs(fd.get());
    if (auto ok = write_file_atomic(dir / kStamp, walked->stat_digest, 0644, Durability::none); !ok)
        return fail(ok.error());
    if (auto ok = write_file_atomic(dir / kManifest, json_dump(manifest_json(m)) + "\n"); !ok)
        return fail(ok.error());
    return Entry{dir, std::move(m)};
}

Result<Entry> Store::ensure(const BuildRequest& request, const CommandRunner& run,
                            const std::function<void(const std::string&)>& notice) const {
    std::error_code ec;
    fs::create_directories(locks_in(root_), ec);
    if (ec) return Error::general("cannot create " + root_.string() + ": " + ec.message());
    std::string why;
    auto taken = take(request.key, &why);
    if (!taken) return std::move(taken).error();
    if (*taken) return std::move(**taken);
    auto lock = FileLock::acquire(lock_of(request.key));
    if (!lock) return std::move(lock).error();
    // Built by another while we waited?
    taken = take(request.key, &why);
    if (!taken) return std::move(taken).error();
    if (*taken) return std::move(**taken);
    if (notice) {
        if (why != "not built" && why.rfind("unfinished", 0) != 0)
            notice("environment " + request.key + " " + why + ": not used; building it again");
        notice("environment " + request.key + ": building (" + request.spec.source + ")");
    }
    if (fs::exists(dir_of(request.key), ec))
        if (auto ok = remove_tree(dir_of(request.key)); !ok) return std::move(ok).error();
    return build(request, run);
}

Result<Entry> Store::as_recorded(const std::string& key) const {
    auto manifest = read_manifest(dir_of(key) / kManifest);
    if (!manifest) return std::move(manifest).error();
    if (manifest->key != key)
        return Error::general(dir_of(key).string() + ": another key's manifest");
    return Entry{dir_of(key), std::move(*manifest)};
}

std::vector<std::string> Store::paths_of(const std::string& key) const {
    auto manifest = read_manifest(dir_of(key) / kManifest);
    return manifest ? manifest->paths : std::vector<std::string>{};
}

Result<void> Store::add_use(const std::string& key, const Use& use) const {
    const fs::path uses = uses_of_key(key);
    std::error_code ec;
    fs::create_directories(uses, ec);
    if (ec) return Error::general("cannot create " + uses.string() + ": " + ec.message());
    return write_file_atomic(uses / use.name, use_json(use), 0644, Durability::none);
}

void Store::drop_use(const std::string& key, const std::string& name) const {
    std::error_code ec;
    fs::remove(uses_of_key(key) / name, ec);
}

std::vector<Listed> Store::list() const {
    std::vector<Listed> out;
    auto names = names_in(root_);
    if (!names) return out;
    for (const auto& name : *names) {
        const fs::path dir = root_ / name;
        std::error_code ec;
        if (!is_key_name(name) || !fs::exists(dir / kManifest, ec)) continue;
        auto manifest = read_manifest(dir / kManifest);
        if (!manifest) continue;
        Listed listed{name, std::move(*manifest), last_used(dir, uses_of_key(name)), {}, 0};
        const auto uses = uses_of(uses_of_key(name));
        listed.uses = uses.size();
        for (const auto& use : uses)
            if (use_is_live(use)) listed.live.push_back(use);
        out.push_back(std::move(listed));
    }
    std::sort(out.begin(), out.end(),
              [](const Listed& a, const Listed& b) { return a.last_used > b.last_used; });
    return out;
}

Result<Pruned> Store::prune(std::size_t keep, std::optional<std::uint64_t> max_size) const {
    Pruned pruned;
    auto names = names_in(root_);
    if (!names) return pruned;  // no store yet: nothing to prune
    std::error_code made;
    fs::create_directories(locks_in(root_), made);
    if (made)
        return Error::general("cannot create " + locks_in(root_).string() + ": " + made.message());
    // Unfinished builds that no builder holds (killed), and their locks.
    for (const auto& name : *names) {
        const fs::path dir = root_ / name;
        std::error_code ec;
        // A lock where builds took it before they moved to .locks/: held by no build now.
        if (name.size() > 9 && name.ends_with(".building") &&
            is_key_name(name.substr(0, name.size() - 9)) &&
            fs::is_regular_file(fs::symlink_status(dir, ec)))
            fs::remove(dir, ec);
        if (!is_key_name(name) || !fs::is_directory(dir, ec) || fs::exists(dir / kManifest, ec))
            continue;
        auto lock = FileLock::try_acquire(lock_of(name));
        if (!lock || !*lock) continue;
        if (auto ok = remove_tree(dir); !ok) return std::move(ok).error();
        pruned.removed.push_back(name + " (unfinished)");
    }
    std::vector<Listed> listed = list();
    std::uint64_t total = 0;
    for (const auto& l : listed) total += l.manifest.size;
    for (std::size_t i = listed.size(); i-- > 0;) {  // the least recently used first
        const Listed& l = listed[i];
        const bool beyond_keep = i >= keep, too_big = max_size && total > *max_size;
        if (!l.live.empty() || !(beyond_keep || too_big)) continue;
        auto lock = FileLock::try_acquire(lock_of(l.key));
        if (!lock) return std::move(lock).error();
        if (!*lock) continue;  // being built again right now
        // Taken since the listing? Then it stays.
        const auto uses = uses_of(uses_of_key(l.key));
        if (std::any_of(uses.begin(), uses.end(), use_is_live)) continue;
        if (auto ok = remove_tree(dir_of(l.key)); !ok) return std::move(ok).error();
        if (auto ok = remove_tree(uses_of_key(l.key)); !ok) return std::move(ok).error();
        std::error_code ec;
        fs::remove(log_of(l.key), ec);
        fs::remove(root_ / (l.key + ".egress.jsonl"), ec);
        total -= l.manifest.size;
        pruned.freed += l.manifest.size;
        pruned.removed.push_back(l.key);
    }
    return pruned;
}

}  // namespace cocode::environment
