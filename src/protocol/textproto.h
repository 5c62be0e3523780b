// The CodingAgent text protocol (seeds/codingagent-text-protocol.md, version 1.0): the outbox
// a local agent sends a model (HEADER, PROTOCOL, CONTEXT, PROMPT), the inbox the model answers
// with (command blocks CREATE_FILE … DONE among free text), the results fed back as `[OK]` /
// `[FAILED]` lines, and the session kept as JSON. Where the seed is wrong, docs/protocols.md
// says what cocode does instead: a body line equal to its own closing tag is written with a
// leading backslash (`\[/CREATE_FILE]`), which the parser removes.
//
// Pure text in, text out: executing the commands is protocol/executor.h.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::protocol {

inline constexpr char kProtocolVersion[] = "1.0";

enum class CommandKind {
    create_file,
    edit_file,
    delete_file,
    read_file,
    run_command,
    message,
    done,
    error,  // a malformed block: `error` says what, `name` which command it meant
};
std::string_view command_name(CommandKind kind);  // "CREATE_FILE"; "ERROR" for error

struct Command {
    CommandKind kind = CommandKind::error;
    std::string name;                   // the tag as written ("EDIT_FILE"), also for errors
    std::string path;                   // CREATE_FILE, EDIT_FILE, DELETE_FILE, READ_FILE
    long start_line = 0, end_line = 0;  // EDIT_FILE, 1-based, inclusive
    // The lines between the tags, each ending in '\n' (file content, replacement, the command,
    // the message, DONE's summary), with the escape undone.
    std::string body;
    std::string error;     // kind == error
    std::size_t line = 0;  // 1-based line of the opening tag
};

// A line without the blanks around it (spaces, tabs, a CR): how both protocols read a line —
// the text protocol's tags and the Codali envelopes' headers alike.
std::string_view trim_blanks(std::string_view line);

// The commands of an inbox in order of appearance, by the seed's seven rules. Never fails:
// a malformed block is a Command of kind error, which the model sees as a [FAILED] result.
std::vector<Command> parse_inbox(std::string_view text);

// `content` as the body of a block named `name` (CREATE_FILE…): each line that would read as
// the block's closing tag gets the escape's backslash, so parse_inbox gives `content` back.
std::string escape_body(std::string_view content, std::string_view name);

// One command's outcome, as the seed's CommandResult and the next outbox show it.
struct Outcome {
    bool success = false;
    std::string command;  // "CREATE_FILE"
    std::string summary;  // "Created 'src/a.cc'"; "REJECTED: Path is outside workspace"
    std::string output;   // RUN_COMMAND's output, already capped; else empty
};
// "[OK] CREATE_FILE: Created 'src/a.cc'" and, for output, "  Output: …" lines.
std::string format_outcome(const Outcome& outcome);

// The session file, sessions/{sessionId}.json, in the seed's names, plus what cocode keeps to
// resume a run: the inbox files already read, tokens spent, the turns taken.
struct Session {
    std::string session_id;  // 8 hex characters
    std::string task;
    int sequence_number = 1;  // of the next outbox
    bool is_complete = false;
    std::string created_at, updated_at;
    std::vector<Outcome> last_results;
    std::vector<std::string> read_file_requests;
    std::vector<std::string> processed_inbox;  // inbox file names, in the order read
    std::uint64_t tokens_used = 0;
    std::string summary;  // DONE's
};
nlohmann::json session_json(const Session& session);
// `source` names the file in errors.
Result<Session> parse_session(std::string_view text, const std::string& source);

// A fresh 8-character hex id from 32 random bits.
std::string new_session_id();
// "{sessionId}_seq{NNNN}.txt".
std::string outbox_name(const std::string& session_id, int sequence);

// The PROTOCOL section: the full instructions, identical in every outbox.
std::string_view protocol_text();
// Its part from "Commands:" on: the command blocks and their rules, which the codali agent's
// models use too.
std::string_view commands_text();

// The workspace as the CONTEXT section lists it: files with sizes, or, past `limit` lines, a
// summary by folder with its number of files (the deepest level that fits), so that a
// 20,000-file repository does not make a 20,000-line outbox. `size_of` is asked only for the
// files shown one by one (a stat of every file of a big worktree would cost more than the rest
// of the turn); a file it has no size for is gone, and not shown.
using SizeOf = std::function<std::optional<std::uint64_t>(const std::string&)>;
std::string render_listing(std::vector<std::string> paths, std::size_t limit,
                           const SizeOf& size_of);

// A file asked for with READ_FILE, as the next outbox shows it.
struct RequestedFile {
    std::string path;
    std::optional<std::string> content;  // nullopt when it could not be read
    std::string note;                    // why not, or that it was cut short
};

// The whole outbox for `session`'s current sequence: HEADER, PROTOCOL, CONTEXT (listing, the
// previous results from sequence 2 on, the requested files), PROMPT (the task at sequence 1,
// else the continuation prompt).
std::string render_outbox(const Session& session, std::string_view listing,
                          const std::vector<RequestedFile>& requested);

inline constexpr char kContinuationPrompt[] =
    "Continue working on the task based on the results above. If the task is complete, send "
    "[DONE] with a summary.";

}  // namespace cocode::protocol
