#include "ui/views.h"

#include "core/json_text.h"

namespace cocode::ui {

bool safe_run_id(std::string_view id) {
    return !id.empty() && id.size() < 128 &&
           id.find_first_not_of(
               "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") ==
               std::string_view::npos;
}

nlohmann::json published_links(std::string_view events, const std::string& project) {
    using json = nlohmann::json;
    json out = json::object();
    auto ours = [&](const json& url) {
        if (!url.is_string()) return false;
        const std::string u = url.get<std::string>();
        return (u.rfind("https://", 0) == 0 || u.rfind("http://", 0) == 0) &&
               u.find("/" + project + "/") != std::string::npos &&
               u.find_first_of(" \"'<>\\") == std::string::npos;
    };
    for (std::size_t start = 0; start < events.size();) {
        std::size_t nl = events.find('\n', start);
        if (nl == std::string_view::npos) nl = events.size();
        const std::string_view line = events.substr(start, nl - start);
        start = nl + 1;
        if (line.find("\"PUBLISH\"") == std::string_view::npos) continue;
        const json event = json::parse(line, nullptr, false);
        if (json_value(event, "type", std::string()) != "PUBLISH") continue;
        out = json::object();
        for (const char* key : {"comment", "pull_request"})
            if (event.contains(key) && ours(event[key])) out[key] = event[key];
    }
    return out;
}

std::optional<DiffRange> diff_range(std::string_view sealed_base, std::string_view branch_head,
                                    std::string_view ready_commit,
                                    const std::function<bool(std::string_view)>& is_object_id) {
    const std::string_view head = branch_head.empty() ? ready_commit : branch_head;
    if (!is_object_id(sealed_base) || !is_object_id(head)) return std::nullopt;
    return DiffRange{std::string(sealed_base), std::string(head)};
}

}  // namespace cocode::ui
