// What the built-in agents (agent/builtin.cpp, agent/codali.cpp) share: their output to the
// run folder's stdout and stderr files, the environment their commands get, the chat client of
// their configuration, and the commit that hands their work in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/builtin.h"
#include "llm/chat.h"
#include "protocol/executor.h"

namespace cocode::agent::detail {

// A line on stdout (agent-stdout.txt), flushed so that `logs --follow` sees it.
void say(std::string_view text);
// `why`, redacted, as the last line on stderr (the run's error_summary); returns `code`.
int fail(int code, const std::string& why);

std::string env_of(const RunContext& context, const std::string& name);

// How the model's commands are carried out in the worktree `root` (canonical): the agent's
// command timeout, each line shown on stdout, and the agent's environment without any secret
// (its own key, whatever name it has, and every variable cocode knows to hold one).
protocol::ExecutorOptions executor_options(const config::AgentConfig& agent,
                                           const RunContext& context,
                                           const std::filesystem::path& root);

struct Model {
    std::unique_ptr<llm::ChatClient> client;
    std::string describe;  // "openai model gpt-4o-mini at https://…"
};
// The chat client of the agent's configuration (another model of the same provider with
// `model_override`); a missing key is ExitCode::missing.
Result<Model> make_model(const config::AgentConfig& agent, const RunContext& context,
                         const std::optional<std::string>& model_override = std::nullopt);

int exit_code_of(const Error& error);

// `git add -A` and a commit with `message` in the worktree (the hook sees it like any commit).
Result<void> commit_all(const RunContext& context, const std::string& message);
// A commit subject from a model's summary: its first line, at most 72 characters.
std::string commit_subject(const std::string& summary, long issue);

}  // namespace cocode::agent::detail
