#include "check/actions.h"

#include <cstdio>
#include <cstdlib>
#include <random>

#include "core/files.h"

namespace cocode::check {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

// Workflow command escaping: data escapes %, CR, LF; properties also ':' and ','.
std::string escape(std::string_view text, bool property) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '%':
                out += "%25";
                break;
            case '\r':
                out += "%0D";
                break;
            case '\n':
                out += "%0A";
                break;
            case ':':
                out += property ? "%3A" : ":";
                break;
            case ',':
                out += property ? "%2C" : ",";
                break;
            default:
                out += c;
        }
    }
    return out;
}

}  // namespace

Result<void> append_actions_output(const std::string& name, const std::string& value) {
    const std::string file = env("GITHUB_OUTPUT");
    if (file.empty()) return {};
    if (value.find('\n') == std::string::npos) return append_line_locked(file, name + "=" + value);
    std::random_device random;
    std::string delimiter;
    do {
        delimiter = "ghadelimiter_";
        for (int i = 0; i < 4; ++i) {
            char part[9];
            std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
            delimiter += part;
        }
    } while (value.find(delimiter) != std::string::npos);
    return append_line_locked(file, name + "<<" + delimiter + "\n" + value + "\n" + delimiter);
}

Result<void> write_actions_outputs(const std::string& markdown, const ActionsOutputs& outputs) {
    if (const std::string summary = env("GITHUB_STEP_SUMMARY"); !summary.empty())
        if (auto w = append_line_locked(summary, markdown); !w) return w;
    for (const auto& [name, value] :
         {std::pair<std::string, std::string>{"verdict", outputs.verdict},
          {"report-path", outputs.report_path.string()},
          {"comment-url", outputs.comment_url},
          {"pr-url", outputs.pr_url}})
        if (auto w = append_actions_output(name, value); !w) return w;
    for (const auto& [name, value] : outputs.more)
        if (auto w = append_actions_output(name, value); !w) return w;
    return {};
}

std::vector<std::pair<std::string, std::string>> usage_outputs(
    const std::vector<Verdict>& verdicts) {
    run::Tokens tokens;
    double cost = 0;
    bool known = !verdicts.empty();
    for (const auto& v : verdicts) {
        if (v.usage) tokens += v.usage->tokens;
        if (v.usage && v.usage->cost_usd)
            cost += *v.usage->cost_usd;
        else
            known = false;
    }
    const nlohmann::json counts = {
        {"input", tokens.input}, {"output", tokens.output}, {"cached", tokens.cached}};
    return {{"cost-usd", known ? nlohmann::json(cost).dump() : ""}, {"tokens", counts.dump()}};
}

std::vector<std::string> error_annotations(const Verdict& v) {
    std::vector<std::string> lines;
    for (const auto& c : v.checks) {
        if (c.outcome != Outcome::fail) continue;
        std::string title = "cocode check: " + c.name;
        if (!v.agent.empty()) title += " (" + v.agent + ")";
        lines.push_back("::error title=" + escape(title, true) + "::" + escape(c.reason, false));
    }
    return lines;
}

}  // namespace cocode::check
