// What `logs` shows of the coding CLIs' streams, against streams recorded from the real CLIs
// (tests/golden/streams/*.jsonl, each driven by a scripted fake of its provider's API), and
// the final answer that goes into output.md.
#include "agent/transcript.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test_support.h"

namespace cocode::agent {
namespace {

namespace fs = std::filesystem;
using test::read_text;

const fs::path kStreams = fs::path(COCODE_SOURCE_DIR) / "tests/golden/streams";
constexpr char kAnswer[] = "Done: the fix is committed.\nThe file fix.txt now says fixed.";

std::string render(const std::string& stream, StreamKind* kind = nullptr,
                   StreamKind declared = StreamKind::unknown) {
    TranscriptRenderer renderer(declared);
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < stream.size()) {
        std::size_t nl = stream.find('\n', start);
        if (nl == std::string::npos) nl = stream.size();
        renderer.feed(std::string_view(stream).substr(start, nl - start), lines);
        start = nl + 1;
    }
    renderer.flush(lines);
    if (kind) *kind = renderer.kind();
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    return out;
}

// A CLI's recorded stream and the format it is told to be from its lines alone (kilo prints
// opencode's).
struct Recorded {
    const char* cli;
    const char* kind;
};
void PrintTo(const Recorded& r, std::ostream* out) { *out << r.cli; }

class RecordedStream : public ::testing::TestWithParam<Recorded> {};

TEST_P(RecordedStream, RendersAsTheGoldenFileSays) {
    const std::string cli = GetParam().cli;
    StreamKind kind = StreamKind::unknown;
    std::string rendered = render(read_text(kStreams / (cli + ".jsonl")), &kind);
    EXPECT_EQ(stream_kind_name(kind), GetParam().kind);
    const fs::path golden = kStreams / (cli + ".txt");
    if (std::getenv("UPDATE_GOLDEN")) test::write_text(golden, rendered);
    EXPECT_EQ(rendered, read_text(golden)) << "UPDATE_GOLDEN=1 rewrites " << golden;
    // What a reader needs is there: the tool call's command, its output shortened, the
    // agent's ANSI colours shown escaped, the answer.
    EXPECT_NE(rendered.find(": printf 'checking"), std::string::npos) << rendered;
    EXPECT_NE(rendered.find("more lines"), std::string::npos) << rendered;
    EXPECT_EQ(rendered.find('\x1b'), std::string::npos) << rendered;
    EXPECT_NE(rendered.find("Done: the fix is committed.\nThe file fix.txt now says fixed.\n"),
              std::string::npos)
        << rendered;
    EXPECT_NE(rendered.find("[result] "), std::string::npos) << rendered;
}

TEST_P(RecordedStream, TheFinalAnswerIsTheLastThingTheAgentSaid) {
    const std::string stream = read_text(kStreams / (std::string(GetParam().cli) + ".jsonl"));
    EXPECT_EQ(final_answer(stream), kAnswer);
    // Told which it is (the preset's declared stream), the same.
    EXPECT_EQ(final_answer(stream, stream_kind(GetParam().kind)), kAnswer);
}

TEST_P(RecordedStream, ADeclaredStreamRendersAsOneToldFromItsLines) {
    const std::string stream = read_text(kStreams / (std::string(GetParam().cli) + ".jsonl"));
    EXPECT_EQ(render(stream, nullptr, stream_kind(GetParam().kind)), render(stream));
}

INSTANTIATE_TEST_SUITE_P(Clis, RecordedStream,
                         ::testing::Values(Recorded{"claude", "claude"}, Recorded{"codex", "codex"},
                                           Recorded{"gemini", "gemini"},
                                           Recorded{"copilot", "copilot"},
                                           Recorded{"opencode", "opencode"},
                                           Recorded{"kilo", "opencode"}, Recorded{"qwen", "qwen"},
                                           Recorded{"pi", "pi"}, Recorded{"cline", "cline"},
                                           Recorded{"droid", "droid"}),
                         [](const auto& each) { return std::string(each.param.cli); });

TEST(Transcript, ProtocolLogLinesAndPlainTextRead) {
    EXPECT_EQ(render(R"({"timestamp": "2026-01-01T12:00:00Z", "level": "info", "message": "Start"})"
                     "\n[INFO] plain line\n{not json\n"),
              "2026-01-01T12:00:00Z INFO Start\n[INFO] plain line\n{not json\n");
}

TEST(Transcript, AnAgentsEscapeSequencesAreShownNeverInterpreted) {
    std::string rendered = render(
        "\x1b]0;owned\x07\x1b[2Jtext\n"
        R"({"type":"item.completed","item":{"type":"agent_message",)"
        R"("text":"\u001b[31mred\u001b[0m"}})");
    EXPECT_EQ(rendered, "\\e]0;owned\\x07\\e[2Jtext\n\\e[31mred\\e[0m\n");
}

TEST(Transcript, GeminiMessagePartsAreJoinedIntoLines) {
    std::string rendered = render(
        R"({"type":"message","timestamp":"t","role":"assistant","content":"Hel","delta":true})"
        "\n"
        R"({"type":"message","timestamp":"t","role":"assistant","content":"lo\nworld","delta":true})"
        "\n"
        R"({"type":"result","timestamp":"t","status":"success","stats":{"tool_calls":0}})");
    EXPECT_EQ(rendered, "Hello\nworld\n[result] success, 0 tool calls\n");
}

TEST(Transcript, NotAStreamHasNoFinalAnswer) {
    EXPECT_EQ(final_answer("plain output\nmore\n"), std::nullopt);
    // A claude run cut off before its result: the last assistant text.
    EXPECT_EQ(
        final_answer(
            R"({"type":"assistant","session_id":"s","message":{"content":[{"type":"text","text":"partial"}]}})"),
        "partial");
}

}  // namespace
}  // namespace cocode::agent
