// What an agent is doing, readable: the coding CLIs stream JSON events (claude's
// `stream-json`, codex's `--json`, gemini's `stream-json`, and those of qwen, copilot, opencode
// and kilo, pi, cline and droid), one per line. This turns them into
// lines a person reads — assistant text, each tool call with its command or file, tool results
// shortened, the final result — and finds the final answer for output.md. Lines in the agent
// protocol's JSON log format read as `time LEVEL message`; anything else passes through.
//
// Every line it produces is safe for a terminal: control characters and escape sequences from
// the agent are shown escaped (core/terminal_text.h), never interpreted.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace cocode::agent {

// Which CLI's stream a line belongs to: the one its preset declares (a preset's `stream`, the
// run's info), else told from the line itself where the shapes say it.
enum class StreamKind { unknown, claude, codex, gemini, qwen, copilot, opencode, pi, cline, droid };
std::string_view stream_kind_name(StreamKind kind);
StreamKind stream_kind(std::string_view name);  // a preset's stream name; unknown for text
StreamKind declared_stream(const config::AgentConfig& agent);  // its preset's, if any
StreamKind recognise(const nlohmann::json& event, StreamKind declared = StreamKind::unknown);

class TranscriptRenderer {
  public:
    explicit TranscriptRenderer(StreamKind declared = StreamKind::unknown) : declared_(declared) {}
    // One line of the agent's output, without its newline. Appends what it renders to.
    void feed(std::string_view line, std::vector<std::string>& out);
    // Releases text held back to join it with what follows (gemini streams a message in
    // parts): at the end of the output, or when nothing new came for a while.
    void flush(std::vector<std::string>& out);
    // The stream recognised so far.
    StreamKind kind() const { return kind_; }

  private:
    void claude(const nlohmann::json& event, std::vector<std::string>& out);
    void codex(const nlohmann::json& event, std::vector<std::string>& out);
    void gemini(const nlohmann::json& event, std::vector<std::string>& out);
    void copilot(const nlohmann::json& event, std::vector<std::string>& out);
    void opencode(const nlohmann::json& event, std::vector<std::string>& out);
    void pi(const nlohmann::json& event, std::vector<std::string>& out);
    void cline(const nlohmann::json& event, std::vector<std::string>& out);
    void droid(const nlohmann::json& event, std::vector<std::string>& out);

    StreamKind declared_ = StreamKind::unknown;
    StreamKind kind_ = StreamKind::unknown;
    std::string pending_;  // gemini assistant text not yet shown
};

// The final answer in a CLI's stream: claude's result, codex's last agent message, the text
// gemini's assistant wrote after its last tool call; else the last assistant text there is.
// nullopt when `stream` is not one of these streams.
std::optional<std::string> final_answer(std::string_view stream,
                                        StreamKind declared = StreamKind::unknown);

// The CLI's own session named in its stream (claude's session_id, codex's thread id, gemini's
// session_id), from the first event that names it; nullopt when none does.
std::optional<std::string> session_of(std::string_view stream,
                                      StreamKind declared = StreamKind::unknown);

}  // namespace cocode::agent
