// What the dashboard shows of a run, decided here; its server (tools/cocode-dispatch/dashboard)
// reads the files, asks git and serves. Each is tabled in tests/unit/ui_views_test.cpp.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cocode::ui {

// A run id the dashboard's routes take: letters, digits, `-` and `_`, under 128 characters.
bool safe_run_id(std::string_view id);

// Where a run's verdict was published, from its events (the last PUBLISH event): its comment
// and pull request, each only when it is an http(s) address of `project` (OWNER/NAME) with
// nothing that could leave an attribute. The events file is the agent's to write: a link
// elsewhere, or of another scheme, is not shown.
nlohmann::json published_links(std::string_view events, const std::string& project);

// The commits a run's diff covers, as its pull request would: the sealed base to the branch's
// head, or to the READY commit once the branch is gone. Nothing unless both are full object ids
// (`is_object_id`, git's rule): a value read from a run never reaches git as an option.
struct DiffRange {
    std::string base, head;
    bool operator==(const DiffRange&) const = default;
};
std::optional<DiffRange> diff_range(std::string_view sealed_base, std::string_view branch_head,
                                    std::string_view ready_commit,
                                    const std::function<bool(std::string_view)>& is_object_id);

}  // namespace cocode::ui
