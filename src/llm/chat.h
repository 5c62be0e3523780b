// A chat-completions client (OpenAI's `POST {base}/chat/completions`, which hosted and
// self-hosted servers alike speak: OpenAI, Perplexity, xAI, llama.cpp's server, vLLM, Ollama),
// over the same HTTPS client as GitHub's (github/http.h): TLS verified against the system CAs,
// proxies from the environment, timeouts, retries with backoff on 5xx and 429, Retry-After
// honoured. The key comes from an environment variable the configuration names, never from
// the configuration itself, and is sent only to the configured base URL.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::github {
class HttpClient;
}

namespace cocode::llm {

struct Message {
    std::string role;  // system, user, assistant
    std::string content;
};

struct Usage {
    std::uint64_t prompt_tokens = 0;
    std::uint64_t completion_tokens = 0;
    std::uint64_t total_tokens = 0;
    bool reported = false;  // the server said; else estimated (4 characters a token)
};

struct Reply {
    std::string content;
    std::string finish_reason;
    std::string model;  // as the server names it
    Usage usage;
    std::chrono::milliseconds elapsed{0};
};

struct ChatOptions {
    std::string base_url;  // "https://api.openai.com/v1": chat/completions is appended
    std::string model;
    std::optional<std::string> key;  // sent as a Bearer token when set
    std::chrono::milliseconds request_timeout{std::chrono::minutes(5)};
    int max_attempts = 5;
    std::chrono::seconds max_wait{600};  // backoff and Retry-After, added up, per call
    bool stream = false;                 // server-sent events; each piece to on_delta
    std::function<void(std::string_view)> on_delta;
    std::function<void(std::string_view)> notice;  // "retrying in 2 s: 502 …"
    // Where each call's usage is appended (one JSON line: time, model, tokens, elapsed).
    std::optional<std::filesystem::path> usage_log;
};

class ChatClient {
  public:
    static Result<std::unique_ptr<ChatClient>> create(ChatOptions options);
    ~ChatClient();
    ChatClient(const ChatClient&) = delete;
    ChatClient& operator=(const ChatClient&) = delete;

    // One completion of `messages`. An Error when no answer came (transport, retries spent, a
    // 4xx), naming the service, the status and the server's message, never the key.
    Result<Reply> complete(const std::vector<Message>& messages, std::string_view label = "");

    const Usage& total() const { return total_; }

  private:
    explicit ChatClient(ChatOptions options);
    ChatOptions options_;
    std::string path_;  // the base's path + /chat/completions
    std::unique_ptr<github::HttpClient> http_;
    Usage total_;
};

// The assistant's text, finish reason, model and usage of a chat.completion object; nullopt
// when the body is not one.
std::optional<Reply> parse_completion(std::string_view body);

// Server-sent events of a streamed completion, fed as they arrive: `data:` lines of
// chat.completion.chunk objects, then `data: [DONE]`.
class StreamReader {
  public:
    // Feeds bytes; each piece of assistant text goes to `on_delta` as it completes a line.
    void feed(std::string_view bytes, const std::function<void(std::string_view)>& on_delta);
    Reply reply() const { return reply_; }
    bool done() const { return done_; }

  private:
    std::string pending_;
    Reply reply_;
    bool done_ = false;
};

}  // namespace cocode::llm
