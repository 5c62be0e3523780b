#include "git/git_files.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/files.h"

namespace cocode::git {
namespace fs = std::filesystem;

namespace {

std::string_view trim_line(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
        s.remove_suffix(1);
    return s;
}

bool is_hex_id(std::string_view s) {
    if (s.size() != 40 && s.size() != 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool is_per_worktree_ref(std::string_view ref) {
    return ref.rfind("refs/", 0) != 0 || ref.rfind("refs/bisect/", 0) == 0 ||
           ref.rfind("refs/worktree/", 0) == 0 || ref.rfind("refs/rewritten/", 0) == 0;
}

Result<std::string> lookup_packed_ref(const fs::path& common_dir, std::string_view ref) {
    auto packed = read_file(common_dir / "packed-refs");
    if (!packed) return Error::general("ref " + std::string(ref) + " not found");
    std::string_view text = *packed;
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = trim_line(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.empty() || line.front() == '#' || line.front() == '^') continue;
        std::size_t space = line.find(' ');
        if (space != std::string_view::npos && line.substr(space + 1) == ref &&
            is_hex_id(line.substr(0, space)))
            return std::string(line.substr(0, space));
    }
    return Error::general("ref " + std::string(ref) + " not found");
}

}  // namespace

bool may_be_in_repository(const fs::path& dir) {
    if (const char* git_dir = std::getenv("GIT_DIR"); git_dir && *git_dir) return true;
    std::error_code ec;
    fs::path at = fs::absolute(dir, ec);
    if (ec) return true;
    for (;;) {
        if (fs::exists(at / ".git", ec) || ec) return true;
        if (fs::is_regular_file(at / "HEAD", ec) && fs::is_directory(at / "objects", ec) &&
            fs::is_directory(at / "refs", ec))
            return true;
        if (!at.has_parent_path() || at.parent_path() == at) return false;
        at = at.parent_path();
    }
}

std::optional<GitDirs> locate_git_dirs(const fs::path& work_tree, const char* git_dir_env) {
    GitDirs dirs;
    if (git_dir_env && *git_dir_env) {
        dirs.git_dir = fs::path(git_dir_env);
        if (dirs.git_dir.is_relative()) dirs.git_dir = work_tree / dirs.git_dir;
    } else {
        fs::path dot_git = work_tree / ".git";
        struct stat st {};
        if (::stat(dot_git.c_str(), &st) != 0) return std::nullopt;
        if (S_ISDIR(st.st_mode)) {
            dirs.git_dir = dot_git;
        } else {
            auto content = read_file(dot_git, 4096);
            if (!content) return std::nullopt;
            std::string_view line = trim_line(*content);
            if (line.rfind("gitdir: ", 0) != 0) return std::nullopt;
            dirs.git_dir = fs::path(std::string(line.substr(8)));
            if (dirs.git_dir.is_relative()) dirs.git_dir = work_tree / dirs.git_dir;
        }
    }
    dirs.common_dir = dirs.git_dir;
    if (auto common = read_file(dirs.git_dir / "commondir", 4096)) {
        fs::path c(std::string(trim_line(*common)));
        dirs.common_dir = c.is_relative() ? dirs.git_dir / c : c;
    }
    return dirs;
}

Result<std::string> read_head_id(const GitDirs& dirs) {
    std::string ref = "HEAD";
    for (int depth = 0; depth < 8; ++depth) {
        const fs::path& base = is_per_worktree_ref(ref) ? dirs.git_dir : dirs.common_dir;
        auto content = read_file(base / ref, 4096);
        if (!content) {
            if (ref == "HEAD") return std::move(content).error();
            return lookup_packed_ref(dirs.common_dir, ref);
        }
        std::string_view line = trim_line(*content);
        if (line.rfind("ref: ", 0) == 0) {
            ref = std::string(line.substr(5));
            if (ref.find("..") != std::string::npos) return Error::general("suspicious ref " + ref);
            continue;
        }
        if (is_hex_id(line)) return std::string(line);
        return Error::general((base / ref).string() + ": not a ref");
    }
    return Error::general("symbolic refs nested too deeply from HEAD");
}

std::optional<std::string> head_symbolic_ref(const GitDirs& dirs) {
    auto content = read_file(dirs.git_dir / "HEAD", 4096);
    if (!content) return std::nullopt;
    std::string_view line = trim_line(*content);
    if (line.rfind("ref: ", 0) != 0) return std::nullopt;
    std::string ref(line.substr(5));
    if (ref.find("..") != std::string::npos) return std::nullopt;
    return ref;
}

std::string commit_message_of(std::string_view raw) {
    if (raw.rfind("\n", 0) == 0) return std::string(raw.substr(1));
    std::size_t split = raw.find("\n\n");
    if (split == std::string_view::npos) return {};
    return std::string(raw.substr(split + 2));
}

namespace {

// A loose object's inflated bytes ("<type> <size>\0<content>"), or nullopt when not loose.
Result<std::optional<std::string>> read_loose_object(const fs::path& common_dir,
                                                     const std::string& id) {
    if (!is_hex_id(id)) return Error::general("not an object id: " + id);
    fs::path object = common_dir / "objects" / id.substr(0, 2) / id.substr(2);
    auto compressed = read_file(object, std::size_t{256} << 20);
    if (!compressed) {
        std::error_code ec;
        if (!fs::exists(object, ec)) return std::optional<std::string>{};  // packed: not ours
        return std::move(compressed).error();
    }

    z_stream zs{};
    if (inflateInit(&zs) != Z_OK) return Error::general("zlib: cannot initialise");
    zs.next_in = reinterpret_cast<Bytef*>(compressed->data());
    zs.avail_in = static_cast<uInt>(compressed->size());
    std::string raw;
    char buf[65536];
    int rc = Z_OK;
    while (rc == Z_OK) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        raw.append(buf, sizeof buf - zs.avail_out);
        if (raw.size() > (std::size_t{512} << 20)) rc = Z_MEM_ERROR;
    }
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) return Error::general(object.string() + ": corrupt loose object");
    return std::optional<std::string>(std::move(raw));
}

}  // namespace

Result<std::optional<LooseCommit>> read_loose_commit(const fs::path& common_dir,
                                                     const std::string& id) {
    auto raw = read_loose_object(common_dir, id);
    if (!raw) return std::move(raw).error();
    if (!*raw) return std::optional<LooseCommit>{};
    const std::string& object = **raw;
    std::size_t nul = object.find('\0');
    if (nul == std::string::npos || object.rfind("commit ", 0) != 0)
        return Error::general(id + ": not a commit object");
    std::string_view body = std::string_view(object).substr(nul + 1);
    LooseCommit commit;
    commit.message = commit_message_of(body);
    // The header ends at the first empty line; parents are its `parent <id>` lines.
    std::string_view header = body.substr(0, body.find("\n\n"));
    while (!header.empty()) {
        std::size_t nl = header.find('\n');
        std::string_view line = header.substr(0, nl);
        header.remove_prefix(nl == std::string_view::npos ? header.size() : nl + 1);
        if (line.rfind("parent ", 0) == 0) commit.parents.emplace_back(line.substr(7));
    }
    return std::optional<LooseCommit>(std::move(commit));
}

Result<std::optional<std::string>> read_loose_commit_message(const fs::path& common_dir,
                                                             const std::string& id) {
    auto commit = read_loose_commit(common_dir, id);
    if (!commit) return std::move(commit).error();
    if (!*commit) return std::optional<std::string>{};
    return std::optional<std::string>(std::move((*commit)->message));
}

std::optional<std::vector<std::string>> remote_tips(const fs::path& common_dir,
                                                    const std::string& remote) {
    std::error_code ec;
    if (fs::exists(common_dir / "reftable", ec) || remote.empty() ||
        remote.find("..") != std::string::npos)
        return std::nullopt;
    std::vector<std::string> tips;
    const std::string prefix = "refs/remotes/" + remote + "/";
    for (fs::recursive_directory_iterator it(common_dir / prefix, ec), end; !ec && it != end;
         it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        if (auto content = read_file(it->path(), 4096)) {
            std::string_view line = trim_line(*content);
            if (is_hex_id(line)) tips.emplace_back(line);
        }
    }
    if (auto packed = read_file(common_dir / "packed-refs")) {
        std::string_view text = *packed;
        while (!text.empty()) {
            std::size_t nl = text.find('\n');
            std::string_view line = trim_line(text.substr(0, nl));
            text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
            std::size_t space = line.find(' ');
            if (space != std::string_view::npos && line.substr(space + 1).rfind(prefix, 0) == 0 &&
                is_hex_id(line.substr(0, space)))
                tips.emplace_back(line.substr(0, space));
        }
    }
    return tips;
}

std::optional<bool> loose_walk_finds(const fs::path& common_dir, const std::string& from,
                                     const std::vector<std::string>& stops, std::string_view needle,
                                     std::size_t limit) {
    // What would make git's walk differ from a walk of parents: it asks git then.
    std::error_code ec;
    for (const char* changes_history : {"shallow", "info/grafts", "refs/replace"})
        if (fs::exists(common_dir / changes_history, ec)) return std::nullopt;
    if (auto packed = read_file(common_dir / "packed-refs");
        packed && packed->find(" refs/replace/") != std::string::npos)
        return std::nullopt;

    std::vector<std::string> seen(stops.begin(), stops.end());
    std::vector<std::string> todo{from};
    auto known = [&](const std::string& id) {
        return std::find(seen.begin(), seen.end(), id) != seen.end();
    };
    std::size_t walked = 0;
    while (!todo.empty()) {
        std::string id = std::move(todo.back());
        todo.pop_back();
        if (known(id)) continue;
        if (++walked > limit) return std::nullopt;
        seen.push_back(id);
        auto commit = read_loose_commit(common_dir, id);
        if (!commit || !*commit) return std::nullopt;
        if ((*commit)->message.find(needle) != std::string::npos) return true;
        for (auto& parent : (*commit)->parents) todo.push_back(std::move(parent));
    }
    return false;
}

}  // namespace cocode::git
