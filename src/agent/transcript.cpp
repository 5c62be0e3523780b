#include "agent/transcript.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "config/presets.h"
#include "core/json_text.h"
#include "core/terminal_text.h"

namespace cocode::agent {
namespace {

using json = nlohmann::json;

constexpr std::size_t kResultLines = 4;     // of a tool's output, shown
constexpr std::size_t kLineWidth = 200;     // characters of one shown line
constexpr std::size_t kCommandWidth = 300;  // of a command shown on one line

std::string str(const json& object, const char* key) {
    if (!object.is_object()) return {};
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

// One line for a terminal, at most `width` bytes (cut on a UTF-8 boundary).
std::string shown(std::string_view text, std::size_t width = kLineWidth) {
    std::string line = terminal_safe_line(text);
    if (line.size() <= width) return line;
    std::size_t cut = width;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    return line.substr(0, cut) + "…";
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text.empty()) return lines;
    std::size_t start = 0;
    while (true) {
        std::size_t nl = text.find('\n', start);
        lines.push_back(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    return lines;
}

// Assistant text: every line of it, as written.
void text_lines(std::string_view text, std::vector<std::string>& out) {
    for (auto line : split_lines(text)) out.push_back(terminal_safe_line(line));
}

// A tool's output under its call: the first lines, then how many more there were.
void result_lines(std::string_view output, bool error, std::vector<std::string>& out) {
    auto lines = split_lines(output);
    if (lines.empty()) {
        out.push_back(error ? "  < error (no output)" : "  < (no output)");
        return;
    }
    for (std::size_t i = 0; i < lines.size() && i < kResultLines; ++i)
        out.push_back((i == 0 ? (error ? "  < error: " : "  < ") : "    ") + shown(lines[i]));
    if (lines.size() > kResultLines)
        out.push_back("    … " + std::to_string(lines.size() - kResultLines) + " more lines");
}

// What a tool call is about, in one line: its command, else its file, else its input.
std::string tool_subject(const json& input) {
    if (input.is_object() && input.contains("commands") && input["commands"].is_array()) {
        std::string joined;  // cline's run_commands: several commands in one call
        for (const auto& c : input["commands"])
            if (c.is_string()) joined += (joined.empty() ? "" : "; ") + c.get<std::string>();
        if (!joined.empty()) return joined;
    }
    for (const char* key : {"command", "cmd", "file_path", "path", "absolute_path", "pattern",
                            "url", "query", "description", "prompt"}) {
        std::string value = str(input, key);
        if (!value.empty()) return value;
    }
    return input.is_null() ? std::string() : json_dump(input);
}

// One tool call, as every stream's is shown: `> name: what it is about`.
std::string tool_line(const std::string& name, const json& input) {
    return "> " + shown(name, 64) + ": " + shown(tool_subject(input), kCommandWidth);
}

std::string short_id(const std::string& id) { return id.substr(0, 8); }

// codex shows commands as the shell line it ran, `/bin/bash -lc "…"`: the part inside is what
// the model asked for.
std::string unwrap_shell(const std::string& command) {
    for (const char* shell : {"/bin/bash -lc ", "/bin/bash -c ", "bash -lc ", "bash -c ",
                              "/bin/zsh -lc ", "/bin/sh -c ", "sh -c "}) {
        const std::string prefix(shell);
        if (command.rfind(prefix, 0) != 0 || command.size() < prefix.size() + 2) continue;
        const char quote = command[prefix.size()];
        if ((quote != '"' && quote != '\'') || command.back() != quote) continue;
        const std::string inner =
            command.substr(prefix.size() + 1, command.size() - prefix.size() - 2);
        if (quote == '\'') return inner.find('\'') == std::string::npos ? inner : command;
        std::string out;  // inside double quotes a backslash escapes only $ ` " \ and newline
        for (std::size_t i = 0; i < inner.size(); ++i) {
            if (inner[i] == '\\' && i + 1 < inner.size() &&
                std::string_view("$`\"\\\n").find(inner[i + 1]) != std::string_view::npos)
                ++i;
            out += inner[i];
        }
        return out;
    }
    return command;
}

std::string seconds(const json& ms) {
    if (!ms.is_number()) return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", ms.get<double>() / 1000.0);
    return buf;
}

// The agent protocol's log line: {"timestamp": …, "level": …, "message": …}.
std::optional<std::string> protocol_log(const json& entry) {
    if (!entry.is_object() || !entry.contains("message") || entry.contains("type"))
        return std::nullopt;
    std::string time = str(entry, "timestamp");
    if (time.empty()) time = str(entry, "time");
    std::string level = str(entry, "level");
    for (auto& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return shown(time.empty() ? "-" : time, 64) + " " + shown(level.empty() ? "-" : level, 16) +
           " " + terminal_safe_line(str(entry, "message"));
}

}  // namespace

namespace {

constexpr std::pair<StreamKind, std::string_view> kKindNames[] = {
    {StreamKind::claude, "claude"},   {StreamKind::codex, "codex"},
    {StreamKind::gemini, "gemini"},   {StreamKind::qwen, "qwen"},
    {StreamKind::copilot, "copilot"}, {StreamKind::opencode, "opencode"},
    {StreamKind::pi, "pi"},           {StreamKind::cline, "cline"},
    {StreamKind::droid, "droid"}};

bool one_of(const std::string& type, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), type) != names.end();
}

}  // namespace

StreamKind declared_stream(const config::AgentConfig& agent) {
    const config::CliPreset* cli = config::cli_preset(agent);
    return cli ? stream_kind(cli->stream) : StreamKind::unknown;
}

StreamKind stream_kind(std::string_view name) {
    for (const auto& [kind, text] : kKindNames)
        if (text == name) return kind;
    return StreamKind::unknown;
}

std::string_view stream_kind_name(StreamKind kind) {
    for (const auto& [k, text] : kKindNames)
        if (k == kind) return text;
    return "unknown";
}

StreamKind recognise(const json& event, StreamKind declared) {
    const std::string type = str(event, "type");
    if (type.empty()) return StreamKind::unknown;
    if (declared != StreamKind::unknown) return declared;
    // copilot: dotted event names with their data, and a result naming its sessionId.
    if (type.find('.') != std::string::npos && event.contains("data")) return StreamKind::copilot;
    if (type == "result" && event.contains("sessionId")) return StreamKind::copilot;
    // codex: dotted event names, and `error` without a timestamp.
    if (type.find('.') != std::string::npos) return StreamKind::codex;
    // opencode (and kilo): each event names its sessionID and carries a part.
    if (event.contains("sessionID") && event.contains("part")) return StreamKind::opencode;
    // cline: each line is stamped `ts`.
    if (event.contains("ts") && one_of(type, {"hook_event", "agent_event", "run_result", "error"}))
        return StreamKind::cline;
    // pi: its own event names.
    if (one_of(type, {"agent_start", "agent_end", "turn_start", "turn_end", "message_start",
                      "message_update", "message_end", "tool_execution_start",
                      "tool_execution_update", "tool_execution_end"}) ||
        (type == "session" && event.contains("version") && event.contains("cwd")))
        return StreamKind::pi;
    // droid: claude's session_id with events of its own, and an init that names no claude.
    if (event.contains("session_id") &&
        (one_of(type, {"tool_call", "tool_result", "completion"}) ||
         (type == "message" && event.contains("role")) ||
         (type == "system" && str(event, "subtype") == "init" &&
          !event.contains("claude_code_version") && !event.contains("qwen_code_version"))))
        return StreamKind::droid;
    // claude (and qwen, which says so in its init): every event carries its session_id.
    if (event.contains("session_id") &&
        one_of(type, {"system", "assistant", "user", "result", "stream_event"}))
        return event.contains("qwen_code_version") ? StreamKind::qwen : StreamKind::claude;
    // gemini: every event carries a timestamp.
    if (event.contains("timestamp") &&
        one_of(type, {"init", "message", "tool_use", "tool_result", "result", "error"}))
        return StreamKind::gemini;
    if (type == "error" && event.contains("message")) return StreamKind::codex;
    return StreamKind::unknown;
}

void TranscriptRenderer::feed(std::string_view line, std::vector<std::string>& out) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    json event;
    if (!line.empty() && line.front() == '{') event = json::parse(line, nullptr, false);
    StreamKind kind = event.is_object() ? recognise(event, declared_) : StreamKind::unknown;
    // A qwen stream said so once, in its init; its other events are claude's shapes.
    if (kind == StreamKind::claude && kind_ == StreamKind::qwen) kind = StreamKind::qwen;
    // gemini's message parts are joined until something else comes.
    const bool gemini_text = kind == StreamKind::gemini && str(event, "type") == "message" &&
                             str(event, "role") == "assistant";
    if (!gemini_text) flush(out);
    if (kind == StreamKind::unknown) {
        if (auto log = protocol_log(event))
            out.push_back(*log);
        else
            out.push_back(terminal_safe_line(line));
        return;
    }
    kind_ = kind;
    switch (kind) {
        case StreamKind::claude:
        case StreamKind::qwen:
            claude(event, out);
            break;
        case StreamKind::codex:
            codex(event, out);
            break;
        case StreamKind::gemini:
            gemini(event, out);
            break;
        case StreamKind::copilot:
            copilot(event, out);
            break;
        case StreamKind::opencode:
            opencode(event, out);
            break;
        case StreamKind::pi:
            pi(event, out);
            break;
        case StreamKind::cline:
            cline(event, out);
            break;
        case StreamKind::droid:
            droid(event, out);
            break;
        case StreamKind::unknown:
            break;
    }
}

void TranscriptRenderer::flush(std::vector<std::string>& out) {
    if (pending_.empty()) return;
    text_lines(pending_, out);
    pending_.clear();
}

void TranscriptRenderer::claude(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "system") {
        if (str(event, "subtype") != "init") return;
        const bool qwen = event.contains("qwen_code_version");
        out.push_back(std::string(qwen ? "[session] qwen " : "[session] claude ") +
                      shown(str(event, qwen ? "qwen_code_version" : "claude_code_version"), 32) +
                      ", model " + shown(str(event, "model"), 64) + ", in " +
                      shown(str(event, "cwd")) + " (" +
                      shown(short_id(str(event, "session_id")), 8) + ")");
        return;
    }
    if (type == "assistant" || type == "user") {
        const json& content =
            event.contains("message") ? json_value(event["message"], "content", json()) : json();
        if (content.is_string()) {
            if (type == "assistant") text_lines(content.get<std::string>(), out);
            return;
        }
        if (!content.is_array()) return;
        for (const auto& block : content) {
            const std::string kind = str(block, "type");
            if (kind == "text" && type == "assistant") {
                text_lines(str(block, "text"), out);
            } else if (kind == "thinking") {
                out.push_back("(thinking) " + shown(str(block, "thinking")));
            } else if (kind == "tool_use") {
                out.push_back(tool_line(str(block, "name"), json_value(block, "input", json())));
            } else if (kind == "tool_result") {
                std::string output;
                const json& c = json_value(block, "content", json());
                if (c.is_string()) {
                    output = c.get<std::string>();
                } else if (c.is_array()) {
                    for (const auto& part : c)
                        if (str(part, "type") == "text") output += str(part, "text") + "\n";
                }
                result_lines(output, json_value(block, "is_error", false) == true, out);
            }
        }
        return;
    }
    if (type == "result") {
        std::string line = "[result] " + shown(str(event, "subtype"), 32);
        if (json_value(event, "is_error", false) == true) line += " (error)";
        if (event.contains("num_turns")) line += ", " + str(event, "num_turns") + " turns";
        if (auto s = seconds(json_value(event, "duration_ms", json())); !s.empty())
            line += ", " + s;
        if (event.contains("total_cost_usd") && event["total_cost_usd"].is_number()) {
            char buf[32];
            std::snprintf(buf, sizeof buf, ", $%.4f", event["total_cost_usd"].get<double>());
            line += buf;
        }
        out.push_back(line);
        if (json_value(event, "is_error", false) == true) text_lines(str(event, "result"), out);
    }
}

void TranscriptRenderer::codex(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "thread.started") {
        out.push_back("[session] codex thread " + shown(short_id(str(event, "thread_id")), 8));
    } else if (type == "error") {
        out.push_back("[error] " + shown(str(event, "message")));
    } else if (type == "turn.completed") {
        const json& usage = json_value(event, "usage", json::object());
        out.push_back("[result] turn completed, " + shown(str(usage, "input_tokens"), 16) +
                      " tokens in, " + shown(str(usage, "output_tokens"), 16) + " out");
    } else if (type == "turn.failed") {
        out.push_back("[result] turn failed: " +
                      shown(str(json_value(event, "error", json::object()), "message")));
    } else if (type == "item.started" || type == "item.completed") {
        const json& item = json_value(event, "item", json::object());
        const std::string kind = str(item, "type");
        const bool done = type == "item.completed";
        if (kind == "agent_message" && done) {
            text_lines(str(item, "text"), out);
        } else if (kind == "reasoning" && done) {
            out.push_back("(thinking) " + shown(str(item, "text")));
        } else if (kind == "command_execution") {
            if (!done) {
                out.push_back("> shell: " +
                              shown(unwrap_shell(str(item, "command")), kCommandWidth));
            } else {
                const std::string code = str(item, "exit_code");
                std::vector<std::string> shown_output;
                result_lines(str(item, "aggregated_output"), code != "0", shown_output);
                if (code != "0" && !code.empty()) out.push_back("  < exit " + shown(code, 8));
                out.insert(out.end(), shown_output.begin(), shown_output.end());
            }
        } else if (kind == "file_change" && done) {
            std::string files;
            for (const auto& change : json_value(item, "changes", json::array()))
                files +=
                    (files.empty() ? "" : ", ") + str(change, "kind") + " " + str(change, "path");
            out.push_back("> edit: " + shown(files, kCommandWidth));
        } else if (kind == "mcp_tool_call" && !done) {
            out.push_back("> " + shown(str(item, "server") + "." + str(item, "tool"), 64));
        } else if (kind == "web_search" && !done) {
            out.push_back("> search: " + shown(str(item, "query")));
        } else if (kind == "todo_list" && done) {
            for (const auto& todo : json_value(item, "items", json::array()))
                out.push_back(
                    std::string(json_value(todo, "completed", false) ? "  [x] " : "  [ ] ") +
                    shown(str(todo, "text")));
        } else if (kind == "error" && done) {
            out.push_back("[error] " + shown(str(item, "message")));
        }
    }
}

void TranscriptRenderer::gemini(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "init") {
        out.push_back("[session] gemini, model " + shown(str(event, "model"), 64) + " (" +
                      shown(short_id(str(event, "session_id")), 8) + ")");
    } else if (type == "message") {
        if (str(event, "role") == "assistant") pending_ += str(event, "content");
    } else if (type == "tool_use") {
        out.push_back(tool_line(str(event, "tool_name"), json_value(event, "parameters", json())));
    } else if (type == "tool_result") {
        const bool error = str(event, "status") == "error";
        std::string output = str(event, "output");
        if (error && output.empty())
            output = str(json_value(event, "error", json::object()), "message");
        result_lines(output, error, out);
    } else if (type == "error") {
        out.push_back("[error] " + shown(str(event, "message")));
    } else if (type == "result") {
        const json& stats = json_value(event, "stats", json::object());
        std::string line = "[result] " + shown(str(event, "status"), 32);
        if (stats.contains("tool_calls")) line += ", " + str(stats, "tool_calls") + " tool calls";
        if (stats.contains("total_tokens")) line += ", " + str(stats, "total_tokens") + " tokens";
        if (auto s = seconds(json_value(stats, "duration_ms", json())); !s.empty())
            line += ", " + s;
        out.push_back(line);
        if (event.contains("error"))
            out.push_back("[error] " + shown(str(event["error"], "message")));
    }
}

namespace {

// The text of a content list of {type: text, text} parts (pi's, copilot's results).
std::string text_parts(const json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string text;
    if (content.is_array())
        for (const auto& part : content)
            if (str(part, "type") == "text") text += str(part, "text");
    return text;
}

}  // namespace

void TranscriptRenderer::copilot(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    const json& data = json_value(event, "data", json::object());
    if (type == "assistant.message") {
        text_lines(str(data, "content"), out);
    } else if (type == "tool.execution_start") {
        out.push_back(tool_line(str(data, "toolName"), json_value(data, "arguments", json())));
    } else if (type == "tool.execution_complete") {
        const bool ok = json_value(data, "success", true) == true;
        const json& result = json_value(data, "result", json::object());
        std::string output = str(result, "content");
        if (!ok && output.empty())
            output = str(json_value(data, "error", json::object()), "message");
        result_lines(output, !ok, out);
    } else if (type == "session.error") {
        out.push_back("[error] " + shown(str(data, "message")));
    } else if (type == "result") {
        std::string line = "[result] exit " + shown(str(event, "exitCode"), 8);
        const json& usage = json_value(event, "usage", json::object());
        if (auto s = seconds(json_value(usage, "sessionDurationMs", json())); !s.empty())
            line += ", " + s;
        out.push_back(line);
    }
}

void TranscriptRenderer::opencode(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    const json& part = json_value(event, "part", json::object());
    if (type == "text") {
        text_lines(str(part, "text"), out);
    } else if (type == "reasoning") {
        out.push_back("(thinking) " + shown(str(part, "text")));
    } else if (type == "tool_use") {
        const json& state = json_value(part, "state", json::object());
        out.push_back(tool_line(str(part, "tool"), json_value(state, "input", json())));
        if (str(state, "status") == "completed" || str(state, "status") == "error")
            result_lines(str(state, str(state, "status") == "error" ? "error" : "output"),
                         str(state, "status") == "error", out);
    } else if (type == "step_finish" && str(part, "reason") != "tool-calls") {
        const json& tokens = json_value(part, "tokens", json::object());
        out.push_back("[result] " + shown(str(part, "reason"), 32) + ", " +
                      shown(str(tokens, "total"), 16) + " tokens");
    } else if (type == "error") {
        const json& error = json_value(event, "error", json::object());
        std::string message = str(json_value(error, "data", json::object()), "message");
        out.push_back("[error] " + shown(message.empty() ? str(error, "name") : message));
    }
}

void TranscriptRenderer::pi(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "session") {
        out.push_back("[session] pi (" + shown(short_id(str(event, "id")), 8) + ")");
    } else if (type == "message_end") {
        const json& message = json_value(event, "message", json::object());
        if (str(message, "role") == "assistant")
            text_lines(text_parts(json_value(message, "content", json())), out);
        if (str(message, "stopReason") == "error")
            out.push_back("[error] " + shown(str(message, "errorMessage")));
    } else if (type == "tool_execution_start") {
        out.push_back(tool_line(str(event, "toolName"), json_value(event, "args", json())));
    } else if (type == "tool_execution_end") {
        const bool error = json_value(event, "isError", false) == true;
        result_lines(
            text_parts(json_value(json_value(event, "result", json::object()), "content", json())),
            error, out);
    } else if (type == "agent_end") {
        out.push_back("[result] done");
    }
}

void TranscriptRenderer::cline(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "agent_event") {
        const json& e = json_value(event, "event", json::object());
        const std::string kind = str(e, "type");
        const std::string content = str(e, "contentType");
        if (kind == "content_end" && content == "text") {
            text_lines(str(e, "text"), out);
        } else if (kind == "content_end" && content == "reasoning") {
            out.push_back("(thinking) " + shown(str(e, "text")));
        } else if (kind == "content_start" && content == "tool") {
            out.push_back(tool_line(str(e, "toolName"), json_value(e, "input", json())));
        } else if (kind == "content_end" && content == "tool") {
            std::string output;
            bool error = !str(e, "error").empty();
            const json& results = json_value(e, "output", json());
            if (results.is_array()) {
                for (const auto& r : results) {
                    output += str(r, "result");
                    error = error || json_value(r, "success", true) != true;
                }
            } else {
                output = results.is_string() ? results.get<std::string>() : str(e, "error");
            }
            result_lines(output, error, out);
        } else if (kind == "error") {
            out.push_back("[error] " +
                          shown(str(json_value(e, "error", json::object()), "message")));
        }
    } else if (type == "run_result") {
        out.push_back("[result] " + shown(str(event, "finishReason"), 32) + ", " +
                      shown(str(event, "iterations"), 8) + " iterations" +
                      (event.contains("durationMs")
                           ? ", " + seconds(json_value(event, "durationMs", json()))
                           : std::string()));
    } else if (type == "error") {
        out.push_back("[error] " + shown(str(event, "message")));
    }
}

void TranscriptRenderer::droid(const json& event, std::vector<std::string>& out) {
    const std::string type = str(event, "type");
    if (type == "system") {
        if (str(event, "subtype") == "init")
            out.push_back("[session] droid, model " + shown(str(event, "model"), 64) + " (" +
                          shown(short_id(str(event, "session_id")), 8) + ")");
    } else if (type == "message") {
        if (str(event, "role") == "assistant") text_lines(str(event, "text"), out);
    } else if (type == "tool_call") {
        out.push_back(tool_line(str(event, "toolName"), json_value(event, "parameters", json())));
    } else if (type == "tool_result") {
        const bool error = json_value(event, "isError", false) == true;
        std::string output = str(event, "value");
        if (error && output.empty())
            output = str(json_value(event, "error", json::object()), "message");
        result_lines(output, error, out);
    } else if (type == "completion") {
        std::string line = "[result] " + shown(str(event, "numTurns"), 8) + " turns";
        if (auto s = seconds(json_value(event, "durationMs", json())); !s.empty()) line += ", " + s;
        out.push_back(line);
    } else if (type == "error") {
        out.push_back("[error] " + shown(str(event, "message")));
    }
}

std::optional<std::string> session_of(std::string_view stream, StreamKind declared) {
    std::size_t start = 0;
    while (start < stream.size()) {
        std::size_t end = stream.find('\n', start);
        if (end == std::string_view::npos) end = stream.size();
        const json event = json::parse(stream.substr(start, end - start), nullptr, false);
        start = end + 1;
        if (!event.is_object()) continue;
        const StreamKind kind = recognise(event, declared);
        std::string id;
        switch (kind) {
            case StreamKind::codex:
                id = str(event, "thread_id");
                break;
            case StreamKind::copilot:
                id = str(event, "sessionId");
                break;
            case StreamKind::opencode:
                id = str(event, "sessionID");
                break;
            case StreamKind::pi:
                if (str(event, "type") == "session") id = str(event, "id");
                break;
            case StreamKind::cline:
                break;  // its sessions are not named in its stream
            case StreamKind::unknown:
                break;
            default:
                id = str(event, "session_id");
        }
        // An id is a plain token (a UUID, ses_…): anything else is not taken as one.
        if (!id.empty() && id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
            }))
            return id;
    }
    return std::nullopt;
}

std::optional<std::string> final_answer(std::string_view stream, StreamKind declared) {
    StreamKind kind = StreamKind::unknown;
    std::optional<std::string> result;     // claude's result event
    std::optional<std::string> last_text;  // the last assistant text, any CLI
    std::string gemini_since_tool;         // gemini: assistant text after its last tool call
    std::size_t start = 0;
    while (start < stream.size()) {
        std::size_t nl = stream.find('\n', start);
        std::string_view line = stream.substr(
            start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        start = nl == std::string_view::npos ? stream.size() : nl + 1;
        if (line.empty() || line.front() != '{') continue;
        json event = json::parse(line, nullptr, false);
        if (!event.is_object()) continue;
        StreamKind k = recognise(event, declared);
        if (k == StreamKind::unknown) continue;
        kind = k;
        const std::string type = str(event, "type");
        if (k == StreamKind::copilot) {
            if (type == "assistant.message") {
                const std::string text = str(json_value(event, "data", json::object()), "content");
                if (!text.empty()) last_text = text;
            }
        } else if (k == StreamKind::opencode) {
            if (type == "text") last_text = str(json_value(event, "part", json::object()), "text");
        } else if (k == StreamKind::pi) {
            const json& message = json_value(event, "message", json::object());
            if (type == "message_end" && str(message, "role") == "assistant") {
                const std::string text = text_parts(json_value(message, "content", json()));
                if (!text.empty()) last_text = text;
            }
        } else if (k == StreamKind::cline) {
            const json& e = json_value(event, "event", json::object());
            if (type == "run_result" && event.contains("text")) result = str(event, "text");
            if (type == "agent_event" && str(e, "type") == "content_end" &&
                str(e, "contentType") == "text")
                last_text = str(e, "text");
        } else if (k == StreamKind::droid) {
            if (type == "completion" && event.contains("finalText"))
                result = str(event, "finalText");
            if (type == "message" && str(event, "role") == "assistant")
                last_text = str(event, "text");
        } else if (k == StreamKind::claude || k == StreamKind::qwen) {
            if (type == "result" && event.contains("result")) result = str(event, "result");
            if (type != "assistant" || !event.contains("message")) continue;
            const json& content = json_value(event["message"], "content", json());
            std::string text;
            if (content.is_array())
                for (const auto& block : content)
                    if (str(block, "type") == "text") text += str(block, "text");
            if (!text.empty()) last_text = text;
        } else if (k == StreamKind::codex) {
            if (type == "item.completed" &&
                str(json_value(event, "item", json::object()), "type") == "agent_message")
                last_text = str(event["item"], "text");
        } else if (type == "message" && str(event, "role") == "assistant") {
            gemini_since_tool += str(event, "content");
            last_text = gemini_since_tool;
        } else if (type == "tool_use" || type == "tool_result") {
            gemini_since_tool.clear();
        }
    }
    if (kind == StreamKind::unknown) return std::nullopt;
    if (result) return result;
    return last_text.value_or("");
}

}  // namespace cocode::agent
