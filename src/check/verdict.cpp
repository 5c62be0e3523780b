#include "check/verdict.h"

#include "core/json_text.h"

namespace cocode::check {
using json = nlohmann::json;

std::string first_failure(const Verdict& verdict) {
    for (const auto& item : verdict.checks)
        if (item.outcome == Outcome::fail)
            return item.name + (item.reason.empty() ? "" : ": " + item.reason);
    return {};
}

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
    json out = {{"verdict", v.pass ? "PASS" : "FAIL"},
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
    if (v.usage) out["usage"] = run::usage_json(*v.usage);
    if (!v.rounds.empty()) {
        out["round"] = v.round;
        json rounds = json::array();
        for (const auto& r : v.rounds)
            rounds.push_back({{"round", r.number},
                              {"trigger", r.trigger},
                              {"verdict", r.pass ? json(*r.pass ? "PASS" : "FAIL") : json(nullptr)},
                              {"from", r.from},
                              {"to", r.to},
                              {"run_id", r.run_id},
                              {"plan", r.plan}});
        out["rounds"] = std::move(rounds);
    }
    if (v.plan_round) {
        json plan = {{"text", v.plan_text}, {"why_not", v.plan_why_not}};
        if (!v.plan_rejected_by.empty()) plan["rejected_by"] = v.plan_rejected_by;
        if (v.plan)
            plan.update({{"hash", v.plan->hash},
                         {"questions", v.plan->questions},
                         {"files", v.plan->files},
                         {"tests", v.plan->tests},
                         {"steps", v.plan->steps}});
        out["plan_round"] = std::move(plan);
    }
    if (!v.requested_by.empty()) out["requested_by"] = v.requested_by;
    if (v.plan_rules) out["plan"] = run::sealed_plan_json(*v.plan_rules);
    return out;
}

namespace {

// The strings of a list member, leaving out what is not a string.
std::vector<std::string> string_list(const nlohmann::json& object, std::string_view key) {
    std::vector<std::string> out;
    const nlohmann::json list = json_value(object, key, nlohmann::json::array());
    if (!list.is_array()) return out;
    for (const auto& item : list)
        if (item.is_string()) out.push_back(item.get<std::string>());
    return out;
}

}  // namespace

Verdict verdict_from_json(const json& j) {
    auto str = [&](const char* key) {
        return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    Verdict v;
    v.pass = str("verdict") == "PASS";
    v.run_id = str("run_id");
    v.issue = json_value(j, "issue", 0L);
    v.issue_url = str("issue_url");
    v.agent = str("agent");
    v.branch = str("branch");
    v.base = str("base");
    v.head = str("head");
    if (j.contains("agent_exit_code") && j["agent_exit_code"].is_number_integer())
        v.agent_exit_code = json_value(j, "agent_exit_code", 0);
    if (j.contains("run_seconds") && j["run_seconds"].is_number())
        v.run_seconds = j["run_seconds"].get<double>();
    if (j.contains("usage")) v.usage = run::usage_from_json(j["usage"]);
    v.marker = str("marker");
    v.ready_commit = str("ready_commit");
    for (const auto& c : json_value(j, "commits", json::array()))
        v.commits.push_back({json_value(c, "id", ""), json_value(c, "summary", "")});
    for (const auto& f : json_value(j, "files", json::array())) {
        git::FileChange change;
        change.path = json_value(f, "path", "");
        change.old_path = json_value(f, "old_path", change.path);
        const std::string status = json_value(f, "status", "M");
        change.status = status.empty() ? 'M' : status[0];
        change.insertions = json_value(f, "insertions", 0);
        change.deletions = json_value(f, "deletions", 0);
        change.binary = json_value(f, "binary", false);
        v.files.push_back(std::move(change));
    }
    v.files_total = json_value(j, "files_total", std::size_t{0});
    v.insertions = json_value(j, "insertions", 0);
    v.deletions = json_value(j, "deletions", 0);
    for (const auto& c : json_value(j, "checks", json::array())) {
        CheckItem item;
        item.id = json_value(c, "id", "");
        item.name = json_value(c, "name", "");
        item.outcome = outcome_from(json_value(c, "result", ""));
        item.reason = json_value(c, "reason", "");
        item.files = string_list(c, "files");
        if (c.contains("exit_code") && c["exit_code"].is_number_integer())
            item.exit_code = json_value(c, "exit_code", 0);
        item.timed_out = json_value(c, "timed_out", false);
        item.seconds = json_value(c, "seconds", 0.0);
        if (c.contains("output_path") && c["output_path"].is_string())
            item.output_path = c["output_path"].get<std::string>();
        item.output_tail = json_value(c, "output_tail", "");
        v.checks.push_back(std::move(item));
    }
    v.check_seconds = json_value(j, "check_seconds", 0.0);
    v.report_dir = str("report_dir");
    v.round = json_value(j, "round", 1);
    for (const auto& r : json_value(j, "rounds", json::array())) {
        RoundLine line;
        line.number = json_value(r, "round", 1);
        line.trigger = json_value(r, "trigger", "");
        const std::string verdict = json_value(r, "verdict", "");
        if (verdict == "PASS" || verdict == "FAIL") line.pass = verdict == "PASS";
        line.from = json_value(r, "from", "");
        line.to = json_value(r, "to", "");
        line.run_id = json_value(r, "run_id", "");
        line.plan = json_value(r, "plan", false);
        v.rounds.push_back(std::move(line));
    }
    if (j.contains("plan_round") && j["plan_round"].is_object()) {
        const json& plan = j["plan_round"];
        v.plan_round = true;
        v.plan_text = json_value(plan, "text", "");
        v.plan_why_not = json_value(plan, "why_not", "");
        v.plan_rejected_by = json_value(plan, "rejected_by", "");
        if (json_value(plan, "hash", "") != "")
            v.plan = WorkPlan{string_list(plan, "questions"), string_list(plan, "files"),
                              string_list(plan, "tests"), string_list(plan, "steps"),
                              json_value(plan, "hash", "")};
    }
    v.requested_by = json_value(j, "requested_by", "");
    if (j.contains("plan") && j["plan"].is_object()) v.plan_rules = run::sealed_plan_of(j["plan"]);
    return v;
}

}  // namespace cocode::check
