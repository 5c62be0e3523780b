#include "run/states.h"

#include <array>
#include <utility>

namespace cocode::run {
namespace {

constexpr std::array<std::pair<RunStatus, std::string_view>, 5> kStatuses{{
    {RunStatus::queued, "queued"},
    {RunStatus::running, "running"},
    {RunStatus::completed, "completed"},
    {RunStatus::failed, "failed"},
    {RunStatus::unknown, "unknown"},
}};

constexpr std::array<std::pair<StopReason, std::string_view>, 13> kReasons{{
    {StopReason::none, ""},
    {StopReason::timeout, "timeout"},
    {StopReason::idle, "idle"},
    {StopReason::output_cap, "output-cap"},
    {StopReason::budget, "budget"},
    {StopReason::interrupted, "interrupted"},
    {StopReason::missing_dependency, "missing-dependency"},
    {StopReason::setup, "setup"},
    {StopReason::spawn, "spawn"},
    {StopReason::crashed, "crashed"},
    {StopReason::ready_quiet, "ready-quiet"},
    {StopReason::restarting, "restarting"},
    {StopReason::other, "other"},
}};

}  // namespace

std::string_view status_name(RunStatus status) {
    for (const auto& [value, name] : kStatuses)
        if (value == status) return name;
    return "unknown";
}

std::optional<RunStatus> parse_status(std::string_view text) {
    for (const auto& [value, name] : kStatuses)
        if (name == text && value != RunStatus::unknown) return value;
    return std::nullopt;
}

std::string_view reason_name(StopReason reason) {
    for (const auto& [value, name] : kReasons)
        if (value == reason) return name;
    return "other";
}

StopReason parse_reason(std::string_view text) {
    for (const auto& [value, name] : kReasons)
        if (name == text && value != StopReason::other) return value;
    return StopReason::other;
}

}  // namespace cocode::run
