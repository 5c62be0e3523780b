#include "replay/task.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>

#include "check/scorecard.h"
#include "core/files.h"
#include "core/glob.h"
#include "core/json_text.h"

namespace cocode::replay {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json strings_json(const std::vector<std::string>& list) { return list; }

Result<std::vector<std::string>> strings_of(const json& value, const char* key,
                                            const std::string& where) {
    std::vector<std::string> out;
    if (!value.contains(key)) return out;
    if (!value[key].is_array())
        return Error::usage(where + ": field '" + key + "': expected a list of strings");
    for (const auto& item : value[key]) {
        if (!item.is_string())
            return Error::usage(where + ": field '" + key + "': expected a list of strings");
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::optional<long> number_after(std::string_view message, const std::regex& pattern) {
    const std::string text(message);
    std::smatch m;
    if (!std::regex_search(text, m, pattern)) return std::nullopt;
    try {
        return std::stol(m[1].str());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

json task_json(const Task& t) {
    json verify = json::array();
    for (const auto& v : t.verify) {
        json command = {{"name", v.name}, {"run", v.run}};
        if (v.timeout) command["timeout"] = config::format_duration(*v.timeout);
        verify.push_back(command);
    }
    return {{"id", t.id},
            {"commit", t.commit},
            {"base", t.base},
            {"statement",
             {{"title", t.statement.title},
              {"body", t.statement.body},
              {"source", t.statement.source}}},
            {"hidden_tests", strings_json(t.hidden_tests)},
            {"fail_to_pass", strings_json(t.fail_to_pass)},
            {"pass_to_pass", strings_json(t.pass_to_pass)},
            {"flaky", strings_json(t.flaky)},
            {"verify", verify},
            {"kind", t.kind},
            {"lines", t.lines},
            {"mined_at", t.mined_at}};
}

Result<Task> task_from_json(const json& value, const std::string& where) {
    if (!value.is_object()) return Error::usage(where + ": expected a JSON object (a task)");
    Task t;
    for (auto [key, field] :
         {std::pair{"id", &t.id}, std::pair{"commit", &t.commit}, std::pair{"base", &t.base}}) {
        *field = json_value(value, key, "");
        if (field->empty() || field->find_first_not_of("0123456789abcdef") != std::string::npos)
            return Error::usage(where + ": field '" + key + "': expected a commit id (hex)");
    }
    const json statement = json_value(value, "statement", json::object());
    t.statement = {json_value(statement, "title", ""), json_value(statement, "body", ""),
                   json_value(statement, "source", "")};
    if (t.statement.title.empty() && t.statement.body.empty())
        return Error::usage(where + ": field 'statement': expected a title or a body");
    for (auto [key, list] :
         {std::pair{"hidden_tests", &t.hidden_tests}, std::pair{"fail_to_pass", &t.fail_to_pass},
          std::pair{"pass_to_pass", &t.pass_to_pass}, std::pair{"flaky", &t.flaky}}) {
        auto read = strings_of(value, key, where);
        if (!read.ok()) return std::move(read).error();
        *list = std::move(*read);
    }
    if (t.fail_to_pass.empty())
        return Error::usage(where + ": field 'fail_to_pass': expected at least one command");
    for (const auto& v : json_value(value, "verify", json::array())) {
        config::VerifyCommand command{json_value(v, "name", ""), json_value(v, "run", ""),
                                      std::nullopt};
        if (command.name.empty() || command.run.empty())
            return Error::usage(where + ": field 'verify': each command needs a name and a run");
        if (const std::string timeout = json_value(v, "timeout", ""); !timeout.empty()) {
            auto parsed = config::parse_duration(timeout);
            if (!parsed.ok())
                return Error::usage(where + ": field 'verify': timeout " + timeout + ": " +
                                    parsed.error().message);
            command.timeout = *parsed;
        }
        t.verify.push_back(command);
    }
    for (const auto& name : t.fail_to_pass)
        if (std::none_of(t.verify.begin(), t.verify.end(),
                         [&](const config::VerifyCommand& v) { return v.name == name; }))
            return Error::usage(where + ": field 'fail_to_pass': '" + name +
                                "' is no command of 'verify'");
    t.kind = json_value(value, "kind", "unknown");
    t.lines = json_value(value, "lines", 0);
    t.mined_at = json_value(value, "mined_at", "");
    return t;
}

Result<void> write_task(const fs::path& tasks_dir, const Task& task, const std::string& patch) {
    const fs::path making = tasks_dir / (".making-" + task.id);
    const fs::path folder = tasks_dir / task.id;
    std::error_code ec;
    fs::remove_all(making, ec);
    fs::create_directories(making, ec);
    if (ec) return Error::general("cannot create " + making.string() + ": " + ec.message());
    if (auto ok = write_file_atomic(making / kTaskFile, json_dump(task_json(task), 2) + "\n"); !ok)
        return std::move(ok).error();
    if (auto ok = write_file_atomic(making / kHiddenTestsFile, patch); !ok)
        return std::move(ok).error();
    fs::remove_all(folder, ec);
    fs::rename(making, folder, ec);
    if (ec)
        return Error::general("cannot rename " + making.string() + " to " + folder.string() + ": " +
                              ec.message());
    return {};
}

Result<std::vector<Task>> list_tasks(const fs::path& tasks_dir) {
    std::vector<Task> out;
    std::error_code ec;
    if (!fs::is_directory(tasks_dir, ec)) return out;
    for (const auto& entry : fs::directory_iterator(tasks_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || name.rfind(".making-", 0) == 0) continue;
        const fs::path file = entry.path() / kTaskFile;
        auto text = read_file(file, std::size_t{4} << 20);
        if (!text) return Error::usage(file.string() + ": " + text.error().message);
        const json value = json::parse(*text, nullptr, false);
        if (value.is_discarded()) return Error::usage(file.string() + ": not valid JSON");
        auto task = task_from_json(value, file.string());
        if (!task.ok()) return std::move(task).error();
        if (task->id != name)
            return Error::usage(file.string() + ": field 'id': '" + task->id +
                                "' is not its folder's name");
        out.push_back(std::move(*task));
    }
    std::sort(out.begin(), out.end(), [](const Task& a, const Task& b) { return a.id < b.id; });
    return out;
}

std::string why_no_task(const git::HistoryCommit& commit, const std::vector<git::FileChange>& files,
                        const MineLimits& limits, std::vector<std::string>& tests) {
    tests.clear();
    if (commit.parents.empty()) return "the first commit: no base";
    if (commit.parents.size() > 1 && !merged_pull(commit.message)) return "a merge";
    if (files.empty()) return "changes nothing";
    if (std::all_of(files.begin(), files.end(), [](const git::FileChange& f) {
            return f.status == 'R' && f.insertions == 0 && f.deletions == 0;
        }))
        return "only renames";
    if (std::all_of(files.begin(), files.end(), [](const git::FileChange& f) { return f.binary; }))
        return "only binary files";
    int lines = 0;
    for (const auto& f : files) lines += f.insertions + f.deletions;
    if (lines > limits.max_lines)
        return std::to_string(lines) + " lines, over the limit of " +
               std::to_string(limits.max_lines);
    if (static_cast<int>(files.size()) > limits.max_files)
        return std::to_string(files.size()) + " files, over the limit of " +
               std::to_string(limits.max_files);
    bool code = false, wanted = limits.paths.empty();
    for (const auto& f : files) {
        if (check::is_test_path(f.path)) {
            tests.push_back(f.path);
            continue;
        }
        if (check::is_document_path(f.path)) continue;
        code = true;
        for (const auto& glob : limits.paths) wanted = wanted || glob_match(glob, f.path);
    }
    if (tests.empty()) return "touches no test";
    if (!code) return "touches no code";
    if (!wanted) return "touches no code of --paths";
    return "";
}

std::optional<long> closed_issue(std::string_view message) {
    static const std::regex pattern(
        R"((?:^|[^A-Za-z])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#([0-9]+))",
        std::regex::icase);
    return number_after(message, pattern);
}

std::optional<long> merged_pull(std::string_view message) {
    static const std::regex merge(R"(^Merge pull request #([0-9]+))");
    static const std::regex squash(R"(^[^\n]*\(#([0-9]+)\)\s*(?:\n|$))");
    if (auto n = number_after(message, merge)) return n;
    return number_after(message, squash);
}

Statement statement_of_message(std::string_view message) {
    const std::size_t cut = message.find('\n');
    std::string title(message.substr(0, cut));
    std::string body = cut == std::string_view::npos ? "" : std::string(message.substr(cut + 1));
    while (!body.empty() && (body.front() == '\n' || body.front() == '\r')) body.erase(0, 1);
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
    return {title, body, "commit message"};
}

TestSplit split_tests(const std::vector<CommandRuns>& runs) {
    TestSplit out;
    auto same = [](const std::vector<bool>& v) {
        return !v.empty() && std::all_of(v.begin(), v.end(), [&](bool b) { return b == v[0]; });
    };
    std::vector<std::string> failing_at_change;
    for (const auto& r : runs) {
        if (same(r.at_change) && !r.at_change[0]) {
            failing_at_change.push_back(r.name);
            continue;
        }
        if (!same(r.at_base) || !same(r.at_change)) {
            out.flaky.push_back(r.name);
            continue;
        }
        if (r.at_base[0])
            out.pass_to_pass.push_back(r.name);
        else
            out.fail_to_pass.push_back(r.name);
    }
    if (!failing_at_change.empty())
        out.why_not = "does not pass its own tests: " + failing_at_change.front() +
                      (failing_at_change.size() > 1 ? " and more fail" : " fails") +
                      " at the change";
    else if (out.fail_to_pass.empty())
        out.why_not = "its tests do not fail at its base";
    return out;
}

bool NextRuns::any() const {
    auto some = [](const std::vector<bool>& v) {
        return std::find(v.begin(), v.end(), true) != v.end();
    };
    return some(at_change) || some(at_base);
}

NextRuns runs_still_needed(const std::vector<CommandRuns>& runs, int repeats) {
    auto all = [](const std::vector<bool>& v, bool value) {
        return std::all_of(v.begin(), v.end(), [&](bool b) { return b == value; });
    };
    const auto size = static_cast<std::size_t>(repeats);
    const bool task_possible = std::any_of(runs.begin(), runs.end(), [&](const CommandRuns& r) {
        return all(r.at_base, false) && all(r.at_change, true);
    });
    NextRuns next;
    for (const auto& r : runs) {
        const bool may_fail_at_change = all(r.at_change, false);
        next.at_change.push_back(r.at_change.size() < size &&
                                 (task_possible || may_fail_at_change));
        next.at_base.push_back(task_possible && r.at_base.size() < size);
    }
    return next;
}

}  // namespace cocode::replay
