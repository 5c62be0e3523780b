// A chat-completions API on 127.0.0.1, scripted: the built-in agents' model. It answers each
// POST /v1/chat/completions with the next reply of its script (plain, or as server-sent events
// when the request asks to stream), reports usage, refuses a request without the key (401),
// and can answer the first requests 429 with Retry-After, as a rate-limited provider does.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tls.h"

namespace cocode::test {

struct ChatRequest {
    std::string key;  // the Bearer credential it carried
    std::string model;
    nlohmann::json messages;
    bool stream = false;
    std::chrono::steady_clock::time_point at;
};

class FakeChat {
  public:
    struct Options {
        std::vector<std::string> replies;  // in order; past the end, a reply with no command
        std::string key;                   // "" accepts any request
        CertificateFiles tls;              // empty certificate: plain HTTP
        int rate_limited = 0;              // the first N requests answered 429, Retry-After: 1
        // Prompt tokens reported per character of the messages: 0.25 is 4 characters a token;
        // more is a tokenizer that makes more tokens of the same text.
        double tokens_per_char = 0.25;
    };
    explicit FakeChat(Options options);
    ~FakeChat();
    FakeChat(const FakeChat&) = delete;
    FakeChat& operator=(const FakeChat&) = delete;

    std::string base_url() const;               // http(s)://127.0.0.1:<port>/v1
    std::vector<ChatRequest> requests() const;  // those answered (not 429 or 401)
    int refused() const;                        // 401s
    int limited() const;                        // 429s

  private:
    struct Server;
    Options options_;
    std::unique_ptr<Server> server_;
    int port_ = 0;
};

// What the user message of a request held: the outbox the agent sent.
std::string user_text(const ChatRequest& request);

}  // namespace cocode::test
