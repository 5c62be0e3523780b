// The chat client against a scripted chat-completions API over loopback TLS: the answer and
// its usage (one line per call in the usage log), the key as a Bearer token and nowhere in an
// error, a 429 with Retry-After waited out, streaming, and a clear error for a refused key.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "fake_chat.h"
#include "llm/chat.h"
#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ChatClientTest : public ::testing::Test {
  protected:
    void SetUp() override {
        tls_ = make_self_signed_certificate(dir_.path());
        // The client trusts the system CAs plus SSL_CERT_FILE, as a user's would.
        ::setenv("SSL_CERT_FILE", tls_.certificate.c_str(), 1);
    }
    void TearDown() override { ::unsetenv("SSL_CERT_FILE"); }

    llm::ChatOptions options(const FakeChat& chat) {
        llm::ChatOptions o;
        o.base_url = chat.base_url();
        o.model = "test-model";
        o.key = kKey;
        o.usage_log = dir_ / "usage.jsonl";
        return o;
    }

    static constexpr char kKey[] = "sk-test-0123456789abcdefghij";
    TempDir dir_;
    CertificateFiles tls_;
};

TEST_F(ChatClientTest, AnswersAndRecordsUsagePerCall) {
    FakeChat chat({{"first answer", "second answer"}, kKey, tls_, 0});
    auto client = llm::ChatClient::create(options(chat));
    ASSERT_TRUE(client.ok()) << client.error().message;
    auto one = (*client)->complete({{"user", std::string(400, 'x')}}, "seq1");
    ASSERT_TRUE(one.ok()) << one.error().message;
    EXPECT_EQ(one->content, "first answer");
    EXPECT_TRUE(one->usage.reported);
    EXPECT_EQ(one->usage.prompt_tokens, 100u);
    auto two = (*client)->complete({{"user", "again"}}, "seq2");
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(two->content, "second answer");
    EXPECT_EQ((*client)->total().total_tokens, one->usage.total_tokens + two->usage.total_tokens);

    const auto requests = chat.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].key, kKey);
    EXPECT_EQ(requests[0].model, "test-model");
    EXPECT_EQ(user_text(requests[1]), "again");
    const auto lines = read_lines(dir_ / "usage.jsonl");
    ASSERT_EQ(lines.size(), 2u);
    const json first = json::parse(lines[0]);
    EXPECT_EQ(first["call"], "seq1");
    EXPECT_EQ(first["prompt_tokens"], 100);
    EXPECT_EQ(first["estimated"], false);
    EXPECT_EQ(read_text(dir_ / "usage.jsonl").find(kKey), std::string::npos);
}

TEST_F(ChatClientTest, A429WithRetryAfterIsWaitedOut) {
    FakeChat chat({{"after the wait"}, kKey, tls_, 1});
    auto client = llm::ChatClient::create(options(chat));
    ASSERT_TRUE(client.ok());
    const auto started = std::chrono::steady_clock::now();
    auto reply = (*client)->complete({{"user", "hi"}});
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(reply->content, "after the wait");
    EXPECT_EQ(chat.limited(), 1);
    EXPECT_EQ(chat.requests().size(), 1u);
    EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST_F(ChatClientTest, StreamsTheAnswerPieceByPiece) {
    const std::string text(150, 'a');
    FakeChat chat({{text + "b"}, kKey, tls_, 0});
    auto o = options(chat);
    o.stream = true;
    std::vector<std::string> pieces;
    o.on_delta = [&](std::string_view piece) { pieces.emplace_back(piece); };
    auto client = llm::ChatClient::create(o);
    ASSERT_TRUE(client.ok());
    auto reply = (*client)->complete({{"user", "hi"}});
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(reply->content, text + "b");
    EXPECT_EQ(pieces.size(), 4u);  // 40-character pieces, as the server sent them
    EXPECT_TRUE(reply->usage.reported);
    EXPECT_EQ(reply->finish_reason, "stop");
    EXPECT_TRUE(chat.requests().at(0).stream);
}

TEST_F(ChatClientTest, ARefusedKeyIsAClearErrorThatNeverShowsTheKey) {
    FakeChat chat({{"x"}, "sk-the-right-key-0000000000", tls_, 0});
    auto client = llm::ChatClient::create(options(chat));
    ASSERT_TRUE(client.ok());
    auto reply = (*client)->complete({{"user", "hi"}});
    ASSERT_FALSE(reply.ok());
    EXPECT_NE(reply.error().message.find("chat API at https://127.0.0.1:"), std::string::npos)
        << reply.error().message;
    EXPECT_NE(reply.error().message.find("/v1/chat/completions: 401 Incorrect API key provided"),
              std::string::npos)
        << reply.error().message;
    EXPECT_EQ(reply.error().message.find(kKey), std::string::npos);
    EXPECT_EQ(chat.refused(), 1);  // not retried
}

TEST_F(ChatClientTest, AnUntrustedServerIsRefused) {
    TempDir other;
    FakeChat chat({{"x"}, kKey, make_self_signed_certificate(other.path()), 0});
    auto client = llm::ChatClient::create(options(chat));
    ASSERT_TRUE(client.ok());
    auto reply = (*client)->complete({{"user", "hi"}});
    ASSERT_FALSE(reply.ok());
    EXPECT_NE(reply.error().message.find("certificate not trusted"), std::string::npos)
        << reply.error().message;
    EXPECT_TRUE(chat.requests().empty());
}

TEST(ChatParse, CompletionsAndStreamsAreRead) {
    auto reply = llm::parse_completion(
        R"({"model":"m","choices":[{"message":{"role":"assistant","content":"hi"},)"
        R"("finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}})");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->content, "hi");
    EXPECT_EQ(reply->finish_reason, "length");
    EXPECT_EQ(reply->usage.total_tokens, 5u);
    EXPECT_FALSE(llm::parse_completion(R"({"choices":[]})"));
    EXPECT_FALSE(llm::parse_completion("not json"));

    llm::StreamReader reader;
    std::string seen;
    auto on = [&](std::string_view p) { seen += p; };
    // Split anywhere, even inside a line; comments and blank lines ignored.
    const std::string sse =
        ": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"he\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"llo\"},\"finish_reason\":\"stop\"}]}\r\n\r\n"
        "data: [DONE]\n\n";
    for (std::size_t i = 0; i < sse.size(); i += 7) reader.feed(sse.substr(i, 7), on);
    EXPECT_EQ(seen, "hello");
    EXPECT_EQ(reader.reply().content, "hello");
    EXPECT_TRUE(reader.done());
}

}  // namespace
}  // namespace cocode::test
