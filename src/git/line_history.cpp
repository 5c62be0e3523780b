#include "git/line_history.h"

#include <cstdlib>

#include "git/cli.h"

namespace cocode::git {

namespace {

// "@@ -a[,b] +c[,d] @@": the old side's start and length, the new side's length.
struct Hunk {
    long old_start = 0, old_length = 1, new_length = 1;
};

std::optional<Hunk> parse_hunk(std::string_view line) {
    if (line.rfind("@@ -", 0) != 0) return std::nullopt;
    Hunk h;
    const char* p = line.data() + 4;
    char* end = nullptr;
    h.old_start = std::strtol(p, &end, 10);
    if (*end == ',') h.old_length = std::strtol(end + 1, &end, 10);
    if (*end != ' ' || end[1] != '+') return std::nullopt;
    std::strtol(end + 2, &end, 10);
    if (*end == ',') h.new_length = std::strtol(end + 1, &end, 10);
    return h;
}

}  // namespace

std::optional<std::string> first_change_of_line(std::string_view log, int line) {
    std::string commit;
    long at = line;  // where the line is in the file before `commit`
    long shift = 0;  // what the hunks above it in `commit` add or remove
    auto next_commit = [&](std::string id) {
        at += shift;
        shift = 0;
        commit = std::move(id);
    };
    while (!log.empty()) {
        const std::size_t nl = log.find('\n');
        const std::string_view text = log.substr(0, nl);
        log.remove_prefix(nl == std::string_view::npos ? log.size() : nl + 1);
        if (text.rfind("commit ", 0) == 0) {
            next_commit(std::string(text.substr(7)));
            continue;
        }
        const auto hunk = parse_hunk(text);
        if (!hunk || commit.empty()) continue;
        const long last = hunk->old_start + hunk->old_length - 1;
        if (hunk->old_length > 0 && hunk->old_start <= at && at <= last) return commit;
        // Lines inserted after line old_start (length 0), or a hunk ending above the line.
        const bool above = hunk->old_length == 0 ? hunk->old_start < at : last < at;
        if (above) shift += hunk->new_length - hunk->old_length;
    }
    return std::nullopt;
}

Result<std::optional<std::string>> commit_changing_line(const std::filesystem::path& dir,
                                                        const std::string& from,
                                                        const std::string& to,
                                                        const std::string& path, int line) {
    auto log = git_output(dir, {"log", "--reverse", "--format=commit %H", "-U0", "--no-color",
                                "--no-ext-diff", from + ".." + to, "--", path});
    if (!log) return std::move(log).error();
    return first_change_of_line(*log, line);
}

}  // namespace cocode::git
