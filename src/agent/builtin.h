// The agents cocode runs itself over a chat model (docs/configuration.md, docs/protocols.md):
// `textproto`, the CodingAgent text protocol over the chat API or through files a person pastes
// into; the runner contract's REST backends `perplexity` and `xai`, one request whose answer is the
// output; and `codali` (agent/codali.h), Codali envelopes with the check in the loop. They
// implement the runner contract's Agent interface (execute with a RunContext, type) and run as a
// process the supervisor starts (`cocode-dispatch agent`), so the sandbox, the process group, the
// timeouts and the kill rules apply to them and to what they start.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "protocol/envelope.h"

namespace cocode::agent {

// seeds/conductor-loop-runner-contract.md, plus what cocode gives every agent.
struct RunContext {
    std::string run_id;
    std::string project_id;
    std::string task_id;
    std::string prompt;
    std::filesystem::path working_dir;
    std::filesystem::path stdout_path;
    std::filesystem::path stderr_path;
    std::map<std::string, std::string> environment;
    std::filesystem::path run_folder;  // JRUN_RUN_FOLDER
    std::string ready_marker;          // COCODE_READY_MARKER
    long issue = 0;                    // COCODE_ISSUE_NUMBER
};

class Agent {
  public:
    virtual ~Agent() = default;
    // Runs to the end; the exit code by the protocol's table (0 done, 1 failed, 2 invalid
    // configuration, 3 a missing key). The reason of a failure is the last line on stderr.
    virtual int execute(const RunContext& context) = 0;
    virtual std::string type() const = 0;
};

// The check as a critic of the worktree as it stands (check/critic.h, given by the tool that
// can reach it): a codali session hears its verdict on DONE. Without one, DONE commits.
using Critic =
    std::function<Result<protocol::CriticResult>(const std::filesystem::path& worktree, int round)>;

// The agent for a built-in type (config::is_builtin), or a usage error.
Result<std::unique_ptr<Agent>> make_builtin_agent(const config::AgentConfig& agent,
                                                  Critic critic = nullptr);

// The run context from the environment the dispatcher gave the agent (COCODE_*, JRUN_*) and
// the run folder's prompt.md.
Result<RunContext> context_from_environment(const std::vector<std::string>& environment);

// Where a built-in agent keeps its files in the run folder.
inline constexpr char kOutboxDir[] = "outbox";       // {sessionId}_seq{NNNN}.txt
inline constexpr char kInboxDir[] = "inbox";         // the model's answers, pasted or received
inline constexpr char kSessionsDir[] = "sessions";   // {sessionId}.json
inline constexpr char kUsageFile[] = "usage.jsonl";  // one line per chat call

}  // namespace cocode::agent
