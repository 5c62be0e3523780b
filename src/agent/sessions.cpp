#include "agent/sessions.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/files.h"
#include "core/json_text.h"

namespace cocode::agent {

namespace fs = std::filesystem;

namespace {

// A folder under `home` when given; else named by a variable of ours, else under our HOME;
// empty when neither is set.
fs::path configured_or_home(const char* variable, const char* under_home, const fs::path& home) {
    if (!home.empty()) return home / under_home;
    if (const char* configured = std::getenv(variable); configured && *configured)
        return configured;
    if (const char* ours = std::getenv("HOME"); ours && *ours) return fs::path(ours) / under_home;
    return {};
}

// A file in `dir` (and, to `depth`, its subfolders) named `prefix…suffix` and, when `holding`
// is given, holding it. The folder is a sandboxed agent's HOME: what it left there is read as
// data — no link followed (to a folder or a file of the host's), no FIFO waited on, 16 MiB
// of a file at most.
std::optional<fs::path> file_in(const fs::path& dir, int depth, std::string_view prefix,
                                std::string_view suffix, std::string_view holding = {}) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const fs::file_type type = it->symlink_status(ec).type();
        if (type == fs::file_type::directory) {
            if (depth > 0)
                if (auto found = file_in(it->path(), depth - 1, prefix, suffix, holding))
                    return found;
        } else if (type == fs::file_type::regular && name.size() >= prefix.size() + suffix.size() &&
                   name.rfind(prefix, 0) == 0 &&
                   name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            if (holding.empty()) return it->path();
            if (read_file_from(it->path(), 0, std::size_t{16} << 20).find(holding) !=
                std::string::npos)
                return it->path();
        }
    }
    return std::nullopt;
}

}  // namespace

fs::path own_gemini_home(const fs::path& run_folder) { return run_folder / "gemini-home"; }

std::optional<fs::path> session_file(config::AgentType type, const std::string& id,
                                     const fs::path& gemini_home, const fs::path& home) {
    if (id.empty()) return std::nullopt;
    switch (type) {
        case config::AgentType::claude:
            if (const fs::path dir = configured_or_home("CLAUDE_CONFIG_DIR", ".claude", home);
                !dir.empty())
                return file_in(dir / "projects", 1, id, ".jsonl");
            break;
        case config::AgentType::codex:
            if (const fs::path dir = configured_or_home("CODEX_HOME", ".codex", home); !dir.empty())
                return file_in(dir / "sessions", 3, "rollout-", "-" + id + ".jsonl");
            break;
        case config::AgentType::gemini: {
            const fs::path its =
                gemini_home.empty() ? configured_or_home("GEMINI_CLI_HOME", "", home) : gemini_home;
            if (its.empty()) break;
            const std::string suffix = "-" + id.substr(0, 8) + ".json";
            const std::string quoted = "\"" + id + "\"";
            if (auto found = file_in(its / ".gemini/tmp", 2, "session-", suffix, quoted))
                return found;
            return file_in(its / ".gemini/tmp", 2, "session-", suffix + "l", quoted);
        }
        case config::AgentType::command:
        case config::AgentType::cli:
        case config::AgentType::textproto:
        case config::AgentType::perplexity:
        case config::AgentType::xai:
        case config::AgentType::codali:
            break;
    }
    return std::nullopt;
}

std::string codex_session_model(const std::string& id, const fs::path& home) {
    auto file = session_file(config::AgentType::codex, id, {}, home);
    if (!file) return {};
    // Each turn's context names its model: {"type":"turn_context","payload":{"model":…}}.
    auto model_of = [](const nlohmann::json& entry) {
        return json_value(json_value(entry, "payload", nlohmann::json::object()), "model", "");
    };
    const auto entry =
        first_json_line(read_file_from(*file, 0, std::size_t{4} << 20), "\"turn_context\"",
                        [&](const nlohmann::json& e) { return !model_of(e).empty(); });
    return entry ? model_of(*entry) : std::string();
}

}  // namespace cocode::agent
