// Where the coding CLIs keep their own sessions, found by the id their stream names
// (claude's and gemini's session_id, codex's thread_id): what a round resumes
// (docs/review.md, "The CLI's own session") and where codex says which model it ran.
// - claude: <$CLAUDE_CONFIG_DIR, else ~/.claude>/projects/<the folder's name>/<id>.jsonl;
// - codex: <$CODEX_HOME, else ~/.codex>/sessions/<year>/<month>/<day>/rollout-…-<id>.jsonl;
// - gemini: <its home>/.gemini/tmp/<project>/chats/session-…-<first 8 of id>.json[l], its home
//   being the run's own when cocode gives it one, else $GEMINI_CLI_HOME, else HOME.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "config/config.h"

namespace cocode::agent {

// gemini's home when cocode gives a run one of its own (a base_url: config/presets.cpp).
std::filesystem::path own_gemini_home(const std::filesystem::path& run_folder);

// The file of session `id` of a CLI of `type`, when it is on this machine. `gemini_home`:
// the run's own gemini home, or empty for gemini's usual one. `home`: the HOME the CLI ran
// with (a sandboxed run's own: run::RunFiles::home), whose default folders are looked in
// instead of the variables and HOME of ours; empty: ours.
std::optional<std::filesystem::path> session_file(config::AgentType type, const std::string& id,
                                                  const std::filesystem::path& gemini_home = {},
                                                  const std::filesystem::path& home = {});

// The model codex ran thread `id` with, as its session file records it (under `home` as for
// session_file); "" when unknown.
std::string codex_session_model(const std::string& id, const std::filesystem::path& home = {});

}  // namespace cocode::agent
