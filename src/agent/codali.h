// The `codali` built-in agent (docs/protocols.md, "Codali"): a session with a chat model that
// asks for the context it needs with AGENT_REQUEST envelopes — answered from an index of the
// worktree in one CODALI_RESPONSE each — and changes files with the text protocol's commands.
// On DONE the check judges the worktree as it stands; a FAIL goes back to the model as a
// critic.result, up to `critic_rounds` times; a PASS commits with the ready marker. The whole
// conversation is sent on every call; past 90 % of the context window, older turns are
// summarised by the summary model and replaced by the summary and the most recent turns.
//
// Everything it keeps is in the run folder: codali/session.json (the conversation, so that a
// restart resumes it), codali/summary-N.md, index/ (the worktree's index), critic/round-N/
// (the verify logs of each critic round), usage.jsonl, output.md.
#pragma once

#include "agent/builtin.h"

namespace cocode::agent {

class CodaliAgent final : public Agent {
  public:
    CodaliAgent(config::AgentConfig agent, Critic critic);
    int execute(const RunContext& context) override;
    std::string type() const override { return "codali"; }

  private:
    config::AgentConfig agent_;
    Critic critic_;
};

inline constexpr char kCodaliDir[] = "codali";  // in the run folder
inline constexpr char kIndexDir[] = "index";    // in the run folder

// The instructions a codali model gets as its system message.
std::string codali_instructions();

}  // namespace cocode::agent
