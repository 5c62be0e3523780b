// GitHub Actions (GITHUB_ACTIONS=true): the report to $GITHUB_STEP_SUMMARY, `verdict`,
// `report-path`, `comment-url` and `pr-url` to $GITHUB_OUTPUT, failed checks as `::error::`
// workflow commands.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "check/verdict.h"
#include "core/result.h"

namespace cocode::check {

struct ActionsOutputs {
    std::string verdict;  // PASS or FAIL
    std::filesystem::path report_path;
    std::string comment_url;
    std::string pr_url;
    // Written after the above: a run's `branch` and `run-id`; the comparison's `best-agent` and
    // `verdicts` ({"agent": "PASS", …}).
    std::vector<std::pair<std::string, std::string>> more;
};

// Appends one step output to $GITHUB_OUTPUT (under a lock): `name=value` when the value is one
// line, else the delimited form with a delimiter no value can contain by chance or design (a
// random one, as GitHub's own toolkit uses). Nothing when GITHUB_OUTPUT is not set.
Result<void> append_actions_output(const std::string& name, const std::string& value);

// Appends the summary and the outputs to the files Actions names (each appended under a lock).
Result<void> write_actions_outputs(const std::string& markdown, const ActionsOutputs& outputs);

// `cost-usd` (the runs' cost together; empty when any is not known) and `tokens`
// ({"input", "output", "cached"}, summed) of the verdicts' runs.
std::vector<std::pair<std::string, std::string>> usage_outputs(
    const std::vector<Verdict>& verdicts);

// One `::error title=…::…` line per failed check, escaped as workflow commands require.
std::vector<std::string> error_annotations(const Verdict& verdict);

}  // namespace cocode::check
