#include "protocol/textproto.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <random>

#include "core/json_text.h"

namespace cocode::protocol {
namespace {

using json = nlohmann::json;

struct Known {
    std::string_view name;
    CommandKind kind;
    bool has_body;
};
constexpr Known kCommands[] = {
    {"CREATE_FILE", CommandKind::create_file, true},
    {"EDIT_FILE", CommandKind::edit_file, true},
    {"DELETE_FILE", CommandKind::delete_file, false},
    {"READ_FILE", CommandKind::read_file, false},
    {"RUN_COMMAND", CommandKind::run_command, true},
    {"MESSAGE", CommandKind::message, true},
    {"DONE", CommandKind::done, true},
};

bool is_name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// Rule 2: key="value" pairs of the opening tag (key='value' too, as models sometimes write).
std::map<std::string, std::string, std::less<>> attributes(std::string_view tag) {
    std::map<std::string, std::string, std::less<>> out;
    std::size_t i = 0;
    while (i < tag.size()) {
        if (!is_name_char(tag[i])) {
            ++i;
            continue;
        }
        const std::size_t key_start = i;
        while (i < tag.size() && is_name_char(tag[i])) ++i;
        const std::string_view key = tag.substr(key_start, i - key_start);
        if (i + 1 >= tag.size() || tag[i] != '=' || (tag[i + 1] != '"' && tag[i + 1] != '\''))
            continue;
        const char quote = tag[i + 1];
        const std::size_t value_start = i + 2;
        const std::size_t value_end = tag.find(quote, value_start);
        if (value_end == std::string_view::npos) break;
        out.emplace(std::string(key),
                    std::string(tag.substr(value_start, value_end - value_start)));
        i = value_end + 1;
    }
    return out;
}

std::optional<long> line_number(std::string_view text) {
    long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// A body line that is its own closing tag behind one or more backslashes loses one backslash:
// `\[/CREATE_FILE]` writes `[/CREATE_FILE]`, `\\[/CREATE_FILE]` writes `\[/CREATE_FILE]`.
std::string_view unescape_line(std::string_view line, std::string_view closing, std::string& buf) {
    const std::string_view t = trim_blanks(line);
    if (t.size() <= closing.size() || t.front() != '\\' ||
        t.substr(t.size() - closing.size()) != closing)
        return line;
    const std::string_view slashes = t.substr(0, t.size() - closing.size());
    if (slashes.find_first_not_of('\\') != std::string_view::npos) return line;
    const std::size_t at = static_cast<std::size_t>(t.data() - line.data());
    buf.assign(line.substr(0, at));
    buf.append(line.substr(at + 1));
    return buf;
}

Command error_command(std::string_view name, std::size_t line, std::string message) {
    Command c;
    c.kind = CommandKind::error;
    c.name = std::string(name);
    c.line = line;
    c.error = std::move(message);
    return c;
}

}  // namespace

std::string_view trim_blanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::string_view command_name(CommandKind kind) {
    for (const auto& known : kCommands)
        if (known.kind == kind) return known.name;
    return "ERROR";
}

std::vector<Command> parse_inbox(std::string_view text) {
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start <= text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            if (start < text.size()) lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }

    std::vector<Command> out;
    std::string buf;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        // Rule 1: `[NAME` at the start of a trimmed line opens a command; rule 7: anything
        // else between blocks is text.
        const std::string_view t = trim_blanks(lines[i]);
        if (t.size() < 2 || t[0] != '[' || t[1] == '/') continue;
        std::size_t name_end = 1;
        while (name_end < t.size() && is_name_char(t[name_end])) ++name_end;
        const std::string_view name = t.substr(1, name_end - 1);
        if (name_end < t.size() && t[name_end] != ' ' && t[name_end] != ']' && t[name_end] != '\t')
            continue;
        const Known* known = nullptr;
        for (const auto& k : kCommands)
            if (k.name == name) known = &k;
        if (!known) continue;

        const std::size_t at = i + 1;  // 1-based line of the tag
        const std::size_t close = t.rfind(']');
        if (close == std::string_view::npos || close < name_end) {
            out.push_back(error_command(name, at,
                                        "the opening tag [" + std::string(name) + " on line " +
                                            std::to_string(at) + " has no closing ']'"));
            continue;
        }
        auto attrs = attributes(t.substr(name_end, close - name_end));
        Command c;
        c.kind = known->kind;
        c.name = std::string(name);
        c.line = at;

        const std::string closing = "[/" + std::string(name) + "]";
        if (known->has_body) {
            // Rules 3 and 4: the body verbatim up to a line that is exactly the closing tag.
            std::size_t j = i + 1;
            bool closed = false;
            for (; j < lines.size(); ++j) {
                if (trim_blanks(lines[j]) == closing) {
                    closed = true;
                    break;
                }
                std::string_view line = unescape_line(lines[j], closing, buf);
                c.body.append(line);
                c.body.push_back('\n');
            }
            if (!closed) {
                out.push_back(error_command(name, at,
                                            "[" + std::string(name) + "] on line " +
                                                std::to_string(at) +
                                                " is never closed: expected a line " + closing +
                                                " (nothing after it ran)"));
                break;
            }
            i = j;
        } else if (i + 1 < lines.size() && trim_blanks(lines[i + 1]) == closing) {
            ++i;  // a self-closing command closed anyway: harmless
        }

        const bool needs_path =
            c.kind == CommandKind::create_file || c.kind == CommandKind::edit_file ||
            c.kind == CommandKind::delete_file || c.kind == CommandKind::read_file;
        if (needs_path) {
            auto path = attrs.find("path");
            if (path == attrs.end() || trim_blanks(path->second).empty()) {
                out.push_back(error_command(name, at,
                                            std::string(name) + " on line " + std::to_string(at) +
                                                ": missing required attribute path=\"…\""));
                continue;
            }
            c.path = path->second;
        }
        if (c.kind == CommandKind::edit_file) {
            bool bad = false;
            for (auto [key, slot] :
                 {std::pair{"start_line", &c.start_line}, {"end_line", &c.end_line}}) {
                auto it = attrs.find(key);
                auto value =
                    it == attrs.end() ? std::nullopt : line_number(trim_blanks(it->second));
                if (!value || *value < (std::string_view(key) == "end_line" ? 0 : 1)) {
                    out.push_back(error_command(
                        name, at,
                        "EDIT_FILE on line " + std::to_string(at) + ": " + key +
                            (it == attrs.end()
                                 ? " is missing"
                                 : " must be a line number (got '" + it->second + "')") +
                            "; expected start_line=\"N\" end_line=\"M\", 1-based, inclusive"));
                    bad = true;
                    break;
                }
                *slot = *value;
            }
            if (bad) continue;
        }
        if (c.kind == CommandKind::run_command) {
            while (!c.body.empty() && (c.body.back() == '\n' || c.body.back() == '\r'))
                c.body.pop_back();
            if (trim_blanks(c.body).empty()) {
                out.push_back(error_command(
                    name, at,
                    "RUN_COMMAND on line " + std::to_string(at) + ": no command between the tags"));
                continue;
            }
        }
        out.push_back(std::move(c));
    }
    return out;
}

std::string escape_body(std::string_view content, std::string_view name) {
    const std::string closing = "[/" + std::string(name) + "]";
    std::string out;
    out.reserve(content.size() + 16);
    while (!content.empty()) {
        const std::size_t nl = content.find('\n');
        const std::string_view line = content.substr(0, nl);
        const std::string_view t = trim_blanks(line);
        const std::size_t slashes = t.find_first_not_of('\\');
        if (t.size() >= closing.size() && slashes != std::string_view::npos &&
            t.substr(slashes) == closing) {
            const std::size_t at = static_cast<std::size_t>(t.data() - line.data());
            out.append(line.substr(0, at));
            out.push_back('\\');
            out.append(line.substr(at));
        } else {
            out.append(line);
        }
        out.push_back('\n');
        if (nl == std::string_view::npos) break;
        content.remove_prefix(nl + 1);
    }
    return out;
}

std::string format_outcome(const Outcome& outcome) {
    std::string out = outcome.success ? "[OK] " : "[FAILED] ";
    out += outcome.command + ": " + outcome.summary + "\n";
    if (!outcome.output.empty()) {
        std::string_view rest = outcome.output;
        bool first = true;
        while (!rest.empty()) {
            const std::size_t nl = rest.find('\n');
            out += first ? "  Output: " : "  ";
            out.append(rest.substr(0, nl));
            out += '\n';
            first = false;
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
    }
    return out;
}

json session_json(const Session& s) {
    json results = json::array();
    for (const auto& r : s.last_results)
        results.push_back({{"success", r.success},
                           {"command", r.command},
                           {"summary", r.summary},
                           {"output", r.output}});
    return {{"sessionId", s.session_id},
            {"task", s.task},
            {"sequenceNumber", s.sequence_number},
            {"isComplete", s.is_complete},
            {"createdAt", s.created_at},
            {"updatedAt", s.updated_at},
            {"lastResults", results},
            {"readFileRequests", s.read_file_requests},
            {"processedInbox", s.processed_inbox},
            {"tokensUsed", s.tokens_used},
            {"summary", s.summary}};
}

Result<Session> parse_session(std::string_view text, const std::string& source) {
    auto j = json::parse(text, nullptr, false);
    auto bad = [&](const std::string& what) {
        return Error::general(source + ": not a session file (" + what + ")");
    };
    if (j.is_discarded() || !j.is_object()) return bad("expected a JSON object");
    Session s;
    try {
        s.session_id = j.at("sessionId").get<std::string>();
        s.task = j.at("task").get<std::string>();
        s.sequence_number = j.at("sequenceNumber").get<int>();
        s.is_complete = j.at("isComplete").get<bool>();
        s.created_at = j.value("createdAt", "");
        s.updated_at = j.value("updatedAt", "");
        for (const auto& r : j.value("lastResults", json::array()))
            s.last_results.push_back({r.at("success").get<bool>(),
                                      r.at("command").get<std::string>(),
                                      r.at("summary").get<std::string>(), r.value("output", "")});
        s.read_file_requests = j.value("readFileRequests", std::vector<std::string>{});
        s.processed_inbox = j.value("processedInbox", std::vector<std::string>{});
        s.tokens_used = j.value("tokensUsed", std::uint64_t{0});
        s.summary = j.value("summary", "");
    } catch (const json::exception& e) {
        return bad(e.what());
    }
    if (s.session_id.size() != 8 ||
        s.session_id.find_first_not_of("0123456789abcdef") != std::string::npos)
        return bad("sessionId must be 8 hex characters");
    if (s.sequence_number < 1) return bad("sequenceNumber must be at least 1");
    return s;
}

std::string new_session_id() {
    std::random_device device;
    const std::uint32_t bits = device();
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(8, '0');
    for (int i = 0; i < 8; ++i)
        out[static_cast<std::size_t>(i)] = kHex[(bits >> (28 - 4 * i)) & 15];
    return out;
}

std::string outbox_name(const std::string& session_id, int sequence) {
    std::string number = std::to_string(sequence);
    if (number.size() < 4) number.insert(0, 4 - number.size(), '0');
    return session_id + "_seq" + number + ".txt";
}

std::string_view commands_text() {
    static constexpr std::string_view kText =
        R"(Commands:

[CREATE_FILE path="relative/path"]
the whole file content
[/CREATE_FILE]
  Creates or overwrites a file; folders are made as needed.

[EDIT_FILE path="relative/path" start_line="N" end_line="M"]
replacement lines
[/EDIT_FILE]
  Replaces lines N to M (1-based, inclusive) with the lines given, which may be more or fewer.
  An empty body deletes the lines; end_line="N-1" inserts before line N.

[DELETE_FILE path="relative/path"]
  Deletes a file.

[READ_FILE path="relative/path"]
  Its content comes in the next message, under "Requested File Contents".

[RUN_COMMAND]
shell command
[/RUN_COMMAND]
  Runs with /bin/sh -c in the workspace root, with a time limit (30 seconds unless configured);
  you get the exit code and the first 4000 characters of its output. Nothing it starts is
  left running after it.

[MESSAGE]
text for the user
[/MESSAGE]

[DONE]
summary of what you did
[/DONE]
  Ends the session: your work is committed and checked. Send it only when the task is complete
  and tested.

Rules:
- Tags stand on lines of their own. A closing tag is a line that is exactly [/NAME].
- Bodies are taken verbatim, indentation included. To write a line that is exactly a closing
  tag inside a body, put a backslash before it: \[/CREATE_FILE] writes [/CREATE_FILE]
  (\\[/CREATE_FILE] writes \[/CREATE_FILE]).
- Paths are relative to the workspace root. Absolute paths, paths leaving the workspace,
  symbolic links that lead out of it, and anything under .git are rejected.
- Read a file before you edit it: line numbers are those of its current content.
- A failed command does not stop the ones after it; read the results and correct.)";
    return kText;
}

std::string_view protocol_text() {
    static const std::string text =
        std::string(
            R"(CodingAgent protocol 1.0. You work on a task in a workspace you cannot see directly. Each
message you get (like this one) holds everything: these instructions, the workspace's files,
the results of your previous commands, the files you asked to read, and the task. You answer
with commands in the blocks below; text outside the blocks is ignored, so you may explain.
Commands run in the order you write them.)") +
        "\n\n" + std::string(commands_text());
    return text;
}

std::string render_listing(std::vector<std::string> paths, std::size_t limit,
                           const SizeOf& size_of) {
    std::string out = "## Workspace Files\n";
    if (paths.empty()) return out + "(empty workspace)\n";
    if (!std::is_sorted(paths.begin(), paths.end())) std::sort(paths.begin(), paths.end());
    auto file_line = [&](const std::string& path) {
        const auto size = size_of(path);
        return size ? "  " + path + " (" + std::to_string(*size) + " bytes)\n" : std::string();
    };
    if (paths.size() <= limit) {
        const std::size_t before = out.size();
        for (const auto& p : paths) out += file_line(p);
        return out.size() == before ? out + "(empty workspace)\n" : out;
    }
    // The folder of `path` `depth` levels deep ("a/b/"), or empty when it is less deep.
    auto folder_at = [](std::string_view path, std::size_t depth) {
        std::size_t at = 0;
        for (std::size_t seen = 0; seen < depth; ++seen) {
            at = path.find('/', at);
            if (at == std::string_view::npos) return std::string_view();
            ++at;
        }
        return path.substr(0, at);
    };
    // Entries at a depth: the files above it, and its folders (contiguous in sorted order).
    auto entries_at = [&](std::size_t depth) {
        std::size_t count = 0;
        std::string_view last;
        for (const auto& p : paths) {
            const std::string_view folder = folder_at(p, depth);
            if (folder.empty())
                ++count;
            else if (folder != last)
                ++count, last = folder;
        }
        return count;
    };
    std::size_t depth = 1;
    while (entries_at(depth + 1) <= limit) ++depth;
    out += std::to_string(paths.size()) + " files: more than " + std::to_string(limit) +
           " to list, so folders " + std::to_string(depth) +
           " deep are summarised (RUN_COMMAND with ls or find shows inside one)\n";
    // Files and folders together, in path order.
    std::vector<std::pair<std::string_view, std::size_t>> rows;  // name, files (0: a file)
    for (const auto& p : paths) {
        const std::string_view folder = folder_at(p, depth);
        if (folder.empty())
            rows.emplace_back(p, 0);
        else if (!rows.empty() && rows.back().second > 0 && rows.back().first == folder)
            ++rows.back().second;
        else
            rows.emplace_back(folder, 1);
    }
    std::sort(rows.begin(), rows.end());
    std::size_t shown = 0;
    for (const auto& [name, files] : rows) {
        if (shown++ == limit) {
            out += "  … and " + std::to_string(rows.size() - limit) + " more\n";
            break;
        }
        if (files == 0)
            out += file_line(std::string(name));
        else
            out += "  " + std::string(name) + " (" + std::to_string(files) + " files)\n";
    }
    return out;
}

std::string render_outbox(const Session& session, std::string_view listing,
                          const std::vector<RequestedFile>& requested) {
    std::string out;
    out.reserve(listing.size() + protocol_text().size() + session.task.size() * 2 + 4096);
    out += "=== HEADER ===\n";
    out += "Session: " + session.session_id + "\n";
    out += "Sequence: " + std::to_string(session.sequence_number) + "\n";
    out += "Task: " + session.task;
    if (out.back() != '\n') out += '\n';
    out += "\n=== PROTOCOL ===\n";
    out += protocol_text();
    out += "\n\n=== CONTEXT ===\n";
    out += listing;
    if (session.sequence_number > 1) {
        out += "\n## Previous Command Results\n";
        if (session.last_results.empty()) out += "(no commands were found in your last answer)\n";
        for (const auto& r : session.last_results) out += format_outcome(r);
    }
    if (!requested.empty()) {
        out += "\n## Requested File Contents\n";
        for (const auto& f : requested) {
            out += "--- " + f.path + " ---\n";
            if (f.content) {
                out += *f.content;
                if (!f.content->empty() && f.content->back() != '\n') out += '\n';
            }
            if (!f.note.empty()) out += "(" + f.note + ")\n";
            out += "--- end " + f.path + " ---\n";
        }
    }
    out += "\n=== PROMPT ===\n";
    if (session.sequence_number == 1) {
        out += session.task;
        if (out.back() != '\n') out += '\n';
    } else {
        out += kContinuationPrompt;
        out += '\n';
    }
    return out;
}

}  // namespace cocode::protocol
