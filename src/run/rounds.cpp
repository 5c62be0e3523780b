#include "run/rounds.h"

#include <map>

#include "core/files.h"
#include "core/json_text.h"

namespace cocode::run {
namespace fs = std::filesystem;

std::optional<Judged> read_judged(const fs::path& run_folder) {
    const fs::path path = RunFiles{run_folder}.check_json();
    auto text = read_file_no_follow(path, std::size_t{16} << 20);
    if (!text) return std::nullopt;
    auto doc = parse_json_text(*text, path.string(), "a verdict");
    if (!doc || !doc->is_object()) return std::nullopt;
    const std::string verdict = json_value(*doc, "verdict", "");
    if (verdict != "PASS" && verdict != "FAIL") return std::nullopt;
    return Judged{verdict == "PASS", json_value(*doc, "head", "")};
}

std::vector<RoundSeen> rounds_of(
    const std::vector<RunRecord>& runs, long issue, const std::string& agent,
    const std::function<std::optional<Judged>(const RunRecord&)>& judged_of) {
    std::map<int, const RunRecord*> newest;  // runs are oldest first: the last one wins
    for (const auto& run : runs)
        if (run.issue == issue && run.agent == agent) newest[run.round] = &run;
    std::vector<RoundSeen> rounds;
    for (const auto& [number, run] : newest)
        rounds.push_back({number, *run, judged_of ? judged_of(*run) : read_judged(run->folder)});
    return rounds;
}

RoundDecision decide_round(const std::vector<RoundSeen>& all, int max_rounds, bool plan) {
    RoundDecision d;
    if (all.empty()) {
        d.why_not = "there is no run to continue";
        return d;
    }
    d.number = all.back().number + 1;
    std::vector<RoundSeen> history;  // the rounds of the kind to start
    for (const auto& r : all)
        if (r.run.plan_round == plan) history.push_back(r);
    auto failed = [](const RoundSeen& r) { return r.judged && !r.judged->pass; };
    const std::string kind = plan ? "plan rounds" : "rounds";
    if (static_cast<int>(history.size()) + 1 > max_rounds) {
        d.why_not = "the " + std::string(plan ? "plan round" : "round") +
                    " cap is reached (review.max_rounds = " + std::to_string(max_rounds) + ")";
    } else if (!plan && history.size() >= 2 && failed(history.back()) &&
               failed(history[history.size() - 2])) {
        d.why_not = kind + " " + std::to_string(history[history.size() - 2].number) + " and " +
                    std::to_string(history.back().number) + " both failed their check";
    } else {
        d.go = true;
    }
    return d;
}

}  // namespace cocode::run
