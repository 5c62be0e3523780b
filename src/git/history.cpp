#include "git/history.h"

#include <unistd.h>

#include "core/files.h"
#include "git/cli.h"
#include "proc/environment.h"

namespace cocode::git {

namespace fs = std::filesystem;

std::vector<HistoryCommit> parse_history(std::string_view log) {
    std::vector<HistoryCommit> out;
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\x1e', start);
        if (end == std::string_view::npos) end = log.size();
        std::string_view entry = log.substr(start, end - start);
        start = end + 1;
        while (!entry.empty() && (entry.front() == '\n' || entry.front() == '\r'))
            entry.remove_prefix(1);
        std::vector<std::string_view> fields;
        for (int i = 0; i < 3; ++i) {
            const std::size_t cut = entry.find('\x1f');
            if (cut == std::string_view::npos) break;
            fields.push_back(entry.substr(0, cut));
            entry.remove_prefix(cut + 1);
        }
        if (fields.size() != 3 || fields[0].empty()) continue;
        HistoryCommit c;
        c.id = std::string(fields[0]);
        std::string_view parents = fields[1];
        while (!parents.empty()) {
            const std::size_t space = parents.find(' ');
            c.parents.emplace_back(parents.substr(0, space));
            if (space == std::string_view::npos) break;
            parents.remove_prefix(space + 1);
        }
        try {
            c.time = std::chrono::system_clock::time_point{
                std::chrono::seconds(std::stoll(std::string(fields[2])))};
        } catch (const std::exception&) {
            continue;
        }
        c.message = std::string(entry);
        out.push_back(std::move(c));
    }
    return out;
}

namespace {

// `git log` of `args` (its options and revisions) in the format parse_history reads.
Result<std::vector<HistoryCommit>> log_of(const fs::path& dir, std::vector<std::string> args) {
    args.insert(args.begin(), {"log", "--format=%H%x1f%P%x1f%ct%x1f%B%x1e"});
    args.push_back("--");
    auto log = git_output(dir, args);
    if (!log.ok()) return std::move(log).error();
    return parse_history(*log);
}

}  // namespace

Result<std::vector<HistoryCommit>> first_parent_history(
    const fs::path& dir, const std::string& revision, std::size_t limit,
    std::optional<std::chrono::system_clock::time_point> since) {
    std::vector<std::string> args = {"--first-parent", "-n", std::to_string(limit)};
    if (since)
        args.push_back("--since=" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                       since->time_since_epoch())
                                                       .count()));
    args.push_back(revision);
    return log_of(dir, std::move(args));
}

Result<std::vector<HistoryCommit>> commits_in(const fs::path& dir, const std::string& range) {
    return log_of(dir, {range});
}

Result<std::string> commit_with_paths_from(const fs::path& dir, const std::string& base,
                                           const std::string& from,
                                           const std::vector<std::string>& paths,
                                           const std::string& message) {
    // An index of our own, removed when done: the repository's is not touched.
    auto git_dir = git_line(dir, {"rev-parse", "--absolute-git-dir"});
    if (!git_dir.ok()) return std::move(git_dir).error();
    const fs::path index =
        fs::path(*git_dir) / ("cocode-compose-" + std::to_string(::getpid()) + ".index");
    struct Remove {
        fs::path path;
        ~Remove() {
            std::error_code ec;
            fs::remove(path, ec);
        }
    } remove{index};
    GitOptions options;
    options.environment = current_environment();
    options.environment->push_back("GIT_INDEX_FILE=" + index.string());
    // Whose commit it is: cocode's own, whatever the user's configuration says.
    for (const char* who : {"GIT_AUTHOR", "GIT_COMMITTER"}) {
        options.environment->push_back(std::string(who) + "_NAME=cocode replay");
        options.environment->push_back(std::string(who) + "_EMAIL=replay@cocode.invalid");
    }
    if (auto read = git_output(dir, {"read-tree", base}, options); !read.ok())
        return std::move(read).error();
    // Each path's entry at `from` (mode, blob), or its removal.
    std::string entries;
    for (const auto& path : paths) {
        auto listed = git_output(dir, {"ls-tree", "-z", from, "--", path}, options);
        if (!listed.ok()) return std::move(listed).error();
        if (listed->empty()) {
            entries += std::string("0 0000000000000000000000000000000000000000\t") + path + '\0';
            continue;
        }
        // "<mode> blob <id>\t<path>\0" → "<mode> <id>\t<path>\0"
        const std::size_t first = listed->find(' '), tab = listed->find('\t');
        const std::size_t second = listed->find(' ', first + 1);
        if (first == std::string::npos || second == std::string::npos || tab == std::string::npos)
            return Error::general("git ls-tree " + from + " -- " + path + ": unexpected output");
        entries += listed->substr(0, first) + " " + listed->substr(second + 1, tab - second - 1) +
                   "\t" + path + '\0';
    }
    options.input = entries;
    if (auto updated = git_output(dir, {"update-index", "-z", "--index-info"}, options);
        !updated.ok())
        return std::move(updated).error();
    options.input.clear();
    auto tree = git_line(dir, {"write-tree"}, options);
    if (!tree.ok()) return std::move(tree).error();
    options.input = message;
    return git_line(dir, {"commit-tree", *tree, "-p", base, "-F", "-"}, options);
}

}  // namespace cocode::git
