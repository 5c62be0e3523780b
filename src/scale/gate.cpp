#include "scale/gate.h"

#include "core/terminal_text.h"
#include "scale/trigger.h"

namespace cocode::scale {

std::string gate_written(const github::PullRequest& pull, const check::GateDecision& decision) {
    return pull.head_sha + " " + decision.description;
}

Result<GateRefresh> refresh_gate(github::GitHub& github, const config::Config& config,
                                 const github::PullRequest& pull, const std::string& last) {
    GateRefresh out;
    const std::string pr = "pull request #" + std::to_string(pull.number);
    if (config.gate.approvals <= 0) {
        out.notice = "gate: off (gate.approvals is 0)";
        return out;
    }
    const auto pair = pair_of_branch(pull.head_ref, config.branch_prefix);
    if (!pair || !config.find_agent(pair->agent) ||
        (!pull.head_repository.empty() && pull.head_repository != github.repo().full())) {
        out.notice = "gate: " + pr + " is not on a branch of cocode's (" +
                     terminal_safe_line(pull.head_ref) + ")";
        return out;
    }
    out.pair = true;
    auto decision = check::read_gate(github, config, pull, pair->issue, pair->agent);
    if (!decision) return std::move(decision).error();
    out.decision = std::move(*decision);
    if (!last.empty() && last == gate_written(pull, out.decision)) {
        out.notice = "gate: " + pr + " unchanged";
        return out;
    }
    if (auto written = check::write_gate(github, config, pull, pair->agent, out.decision); !written)
        return std::move(written).error();
    out.notice = "gate: " + pr + " " + out.decision.state + ": " + out.decision.description;
    return out;
}

Result<GateRefresh> refresh_gate_of(github::GitHub& github, const config::Config& config,
                                    long number) {
    auto pull = github.pull_request(number);
    if (!pull) return std::move(pull).error();
    return refresh_gate(github, config, *pull);
}

Result<std::string> requester_of(github::GitHub& github) {
    auto login = github.token_login();
    if (!login) return std::move(login).error();
    return login->empty() ? std::string() : "@" + *login;
}

}  // namespace cocode::scale
