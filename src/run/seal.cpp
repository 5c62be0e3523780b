#include "run/seal.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"
#include "core/sha256.h"

namespace cocode::run {
namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path seal_path(const fs::path& repo_root, const std::string& run_id) {
    return repo_root / kSealsDir / (run_id + ".json");
}

fs::path stop_request_path(const fs::path& repo_root, const std::string& run_id) {
    return repo_root / kSealsDir / (run_id + ".stop");
}

json sealed_plan_json(const SealedPlan& plan) {
    return {{"hash", plan.hash},
            {"files", plan.files},
            {"verify", plan.verify},
            {"left_out", plan.left_out},
            {"approved_by", plan.approved_by}};
}

SealedPlan sealed_plan_of(const json& object) {
    auto strings = [&](const char* key) {
        std::vector<std::string> out;
        for (const auto& item : json_value(object, key, json::array()))
            if (item.is_string()) out.push_back(item.get<std::string>());
        return out;
    };
    return {json_value(object, "hash", ""), strings("files"), strings("verify"),
            strings("left_out"), json_value(object, "approved_by", "")};
}

std::string seal_text(const Seal& seal) {
    json refs = json::array();
    for (const auto& ref : seal.refs) refs.push_back({{"name", ref.name}, {"commit", ref.commit}});
    json doc = {{"run_id", seal.run_id}, {"base_commit", seal.base_commit}, {"branch", seal.branch},
                {"marker", seal.marker}, {"config", seal.config_text},      {"refs", refs}};
    if (seal.pull_request) {
        json threads = json::array();
        for (const auto& t : seal.threads)
            threads.push_back({{"id", t.id}, {"path", t.path}, {"line", t.line}});
        doc["pull_request"] = {{"number", seal.pull_request}, {"threads", threads}};
    }
    if (seal.plan_round) doc["plan_round"] = true;
    if (!seal.requested_by.empty()) doc["requested_by"] = seal.requested_by;
    if (!seal.environment_key.empty()) doc["environment_key"] = seal.environment_key;
    if (!seal.issue_sha256.empty()) doc["issue_sha256"] = seal.issue_sha256;
    if (!seal.issue_labels.empty()) doc["issue_labels"] = seal.issue_labels;
    if (!seal.route.empty()) doc["route"] = seal.route;
    if (!seal.replay_task.empty()) doc["replay_task"] = seal.replay_task;
    if (seal.plan) doc["plan"] = sealed_plan_json(*seal.plan);
    return json_dump(doc, 2) + "\n";
}

Result<void> write_seal(const fs::path& repo_root, const Seal& seal) {
    const fs::path path = seal_path(repo_root, seal.run_id);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
        return Error::general("cannot create " + path.parent_path().string() + ": " + ec.message());
    return write_file_atomic(path, seal_text(seal), 0644, Durability::full);
}

Result<std::optional<Seal>> read_seal(const fs::path& repo_root, const std::string& run_id) {
    const fs::path path = seal_path(repo_root, run_id);
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::optional<Seal>{};
    auto text = read_file(path, std::size_t{4} << 20);
    if (!text) return std::move(text).error();
    auto seal = parse_seal(*text, path.string(), run_id);
    if (!seal) return std::move(seal).error();
    return std::optional<Seal>{std::move(seal).value()};
}

Result<Seal> parse_seal(std::string_view text, const std::string& source,
                        const std::string& run_id) {
    auto doc = parse_json_text(text, source, "a run's seal");
    if (!doc) return Error::general(doc.error().message);
    auto field = [&](const char* key) -> Result<std::string> {
        if (!doc->contains(key) || !(*doc)[key].is_string())
            return Error::general(source + ": field '" + key + "' is missing");
        return (*doc)[key].get<std::string>();
    };
    Seal seal;
    for (auto [key, slot] : {std::pair{"run_id", &seal.run_id},
                             {"base_commit", &seal.base_commit},
                             {"branch", &seal.branch},
                             {"marker", &seal.marker},
                             {"config", &seal.config_text}}) {
        auto value = field(key);
        if (!value) return std::move(value).error();
        *slot = *value;
    }
    if (seal.run_id != run_id)
        return Error::general(source + ": sealed for run " + seal.run_id + ", not " + run_id);
    if (doc->contains("refs") && (*doc)["refs"].is_array())
        for (const auto& ref : (*doc)["refs"])
            if (ref.is_object() && json_value(ref, "name", "") != "")
                seal.refs.push_back({json_value(ref, "name", ""), json_value(ref, "commit", "")});
    if (doc->contains("pull_request") && (*doc)["pull_request"].is_object()) {
        const json& pull = (*doc)["pull_request"];
        seal.pull_request = json_value(pull, "number", 0L);
        for (const auto& t : json_value(pull, "threads", json::array()))
            if (t.is_object() && json_value(t, "id", 0LL) > 0)
                seal.threads.push_back({json_value(t, "id", 0LL), json_value(t, "path", ""),
                                        json_value(t, "line", 0)});
    }
    seal.plan_round = json_value(*doc, "plan_round", false);
    seal.requested_by = json_value(*doc, "requested_by", "");
    seal.environment_key = json_value(*doc, "environment_key", "");
    seal.issue_sha256 = json_value(*doc, "issue_sha256", "");
    seal.route = json_value(*doc, "route", "");
    seal.replay_task = json_value(*doc, "replay_task", "");
    for (const auto& label : json_value(*doc, "issue_labels", json::array()))
        if (label.is_string()) seal.issue_labels.push_back(label.get<std::string>());
    if (doc->contains("plan") && (*doc)["plan"].is_object()) {
        seal.plan = sealed_plan_of((*doc)["plan"]);
        if (seal.plan->hash.empty() || seal.plan->files.empty())
            return Error::general(source + ": field 'plan' has no hash or no files");
    }
    return seal;
}

std::string issue_text_sha256(std::string_view title, std::string_view body) {
    Sha256 digest;
    digest.add(title);
    digest.add("\n");
    digest.add(body);
    return digest.hex();
}

}  // namespace cocode::run
