#include "check/verdict.h"

namespace cocode::check {
using json = nlohmann::json;

std::string_view outcome_name(Outcome outcome) {
    switch (outcome) {
        case Outcome::pass:
            return "pass";
        case Outcome::fail:
            return "fail";
        case Outcome::skipped:
            return "skipped";
    }
    return "skipped";
}

const CheckItem* Verdict::find(std::string_view id) const {
    for (const auto& c : checks)
        if (c.id == id) return &c;
    return nullptr;
}

namespace {

Outcome outcome_from(const std::string& name) {
    if (name == "pass") return Outcome::pass;
    if (name == "fail") return Outcome::fail;
    return Outcome::skipped;
}

template <class T>
json optional_json(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

}  // namespace

json to_json(const Verdict& v) {
    json checks = json::array();
    for (const auto& c : v.checks) {
        json item = {{"id", c.id},
                     {"name", c.name},
                     {"result", outcome_name(c.outcome)},
                     {"reason", c.reason}};
        if (!c.files.empty()) item["files"] = c.files;
        if (c.id == "verify") {
            item["exit_code"] = optional_json(c.exit_code);
            item["timed_out"] = c.timed_out;
            item["seconds"] = c.seconds;
            item["output_path"] =
                c.output_path.empty() ? json(nullptr) : json(c.output_path.string());
            item["output_tail"] = c.output_tail;
        }
        checks.push_back(std::move(item));
    }
    json commits = json::array();
    for (const auto& c : v.commits) commits.push_back({{"id", c.id}, {"summary", c.summary}});
    json files = json::array();
    for (const auto& f : v.files) {
        json file = {{"path", f.path},
                     {"status", std::string(1, f.status)},
                     {"insertions", f.insertions},
                     {"deletions", f.deletions},
                     {"binary", f.binary}};
        if (f.old_path != f.path) file["old_path"] = f.old_path;
        files.push_back(std::move(file));
    }
    return {{"verdict", v.pass ? "PASS" : "FAIL"},
            {"run_id", v.run_id.empty() ? json(nullptr) : json(v.run_id)},
            {"issue", v.issue ? json(v.issue) : json(nullptr)},
            {"issue_url", v.issue_url.empty() ? json(nullptr) : json(v.issue_url)},
            {"agent", v.agent.empty() ? json(nullptr) : json(v.agent)},
            {"branch", v.branch.empty() ? json(nullptr) : json(v.branch)},
            {"base", v.base},
            {"head", v.head},
            {"agent_exit_code", optional_json(v.agent_exit_code)},
            {"run_seconds", optional_json(v.run_seconds)},
            {"marker", v.marker},
            {"ready_commit", v.ready_commit.empty() ? json(nullptr) : json(v.ready_commit)},
            {"commits", commits},
            {"files", files},
            {"insertions", v.insertions},
            {"deletions", v.deletions},
            {"checks", checks},
            {"check_seconds", v.check_seconds},
            {"report_dir", v.report_dir.string()}};
}

Verdict verdict_from_json(const json& j) {
    auto str = [&](const char* key) {
        return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    Verdict v;
    v.pass = str("verdict") == "PASS";
    v.run_id = str("run_id");
    v.issue = j.value("issue", json(0)).is_number() ? j["issue"].get<long>() : 0;
    v.issue_url = str("issue_url");
    v.agent = str("agent");
    v.branch = str("branch");
    v.base = str("base");
    v.head = str("head");
    if (j.contains("agent_exit_code") && j["agent_exit_code"].is_number())
        v.agent_exit_code = j["agent_exit_code"].get<int>();
    if (j.contains("run_seconds") && j["run_seconds"].is_number())
        v.run_seconds = j["run_seconds"].get<double>();
    v.marker = str("marker");
    v.ready_commit = str("ready_commit");
    for (const auto& c : j.value("commits", json::array()))
        v.commits.push_back({c.value("id", ""), c.value("summary", "")});
    for (const auto& f : j.value("files", json::array())) {
        git::FileChange change;
        change.path = f.value("path", "");
        change.old_path = f.value("old_path", change.path);
        const std::string status = f.value("status", "M");
        change.status = status.empty() ? 'M' : status[0];
        change.insertions = f.value("insertions", 0);
        change.deletions = f.value("deletions", 0);
        change.binary = f.value("binary", false);
        v.files.push_back(std::move(change));
    }
    v.insertions = j.value("insertions", 0);
    v.deletions = j.value("deletions", 0);
    for (const auto& c : j.value("checks", json::array())) {
        CheckItem item;
        item.id = c.value("id", "");
        item.name = c.value("name", "");
        item.outcome = outcome_from(c.value("result", ""));
        item.reason = c.value("reason", "");
        item.files = c.value("files", std::vector<std::string>{});
        if (c.contains("exit_code") && c["exit_code"].is_number())
            item.exit_code = c["exit_code"].get<int>();
        item.timed_out = c.value("timed_out", false);
        item.seconds = c.value("seconds", 0.0);
        if (c.contains("output_path") && c["output_path"].is_string())
            item.output_path = c["output_path"].get<std::string>();
        item.output_tail = c.value("output_tail", "");
        v.checks.push_back(std::move(item));
    }
    v.check_seconds = j.value("check_seconds", 0.0);
    v.report_dir = str("report_dir");
    return v;
}

}  // namespace cocode::check
