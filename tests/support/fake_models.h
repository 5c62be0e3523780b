// The model APIs of the coding CLIs, scripted, on 127.0.0.1: Anthropic Messages (with SSE
// streaming), OpenAI Responses (SSE; its WebSocket upgrade refused with 426, which makes codex
// fall back to HTTPS at once), Gemini generateContent / streamGenerateContent, and OpenAI chat
// completions (the OpenAI-compatible provider the other CLIs are pointed at). The
// real CLIs talk to it and run for real: each turn, the model asks for the next shell command
// of the script through the CLI's own shell tool, and when the script is done it answers with
// the final text. Which turn it is comes from the request itself (how many tool results it
// carries since its last prompt: a resumed session starts the script again), so the CLIs' side
// requests (titles, routing, token counts) are answered too.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tls.h"

namespace cocode::test {

struct ModelRequest {
    std::string api;   // anthropic, openai, gemini, openai-chat
    std::string path;  // with the query
    std::string key;   // the credential it carried (x-api-key, Bearer, x-goog-api-key)
    std::string model;
    // The words of each user message that is not a tool's result (nor the CLI's own context),
    // oldest first — the prompts of the conversation the request carries (a resumed session
    // carries its earlier rounds').
    std::vector<std::string> prompts;
};

// What one answer reports it used: every answer of the fake says the same.
struct ServedTokens {
    long input = 0;  // all input tokens, cached included
    long output = 0;
    long cached = 0;  // of input
};
inline constexpr ServedTokens kAnswerUsage{1200, 50, 200};

class FakeModels {
  public:
    struct Options {
        std::vector<std::string> commands;  // the shell commands the model asks for, in order
        std::string answer = "Done.";       // the final text
        std::string key;                    // the credential every request must carry
        CertificateFiles tls;               // empty certificate: plain HTTP
    };
    explicit FakeModels(Options options);
    ~FakeModels();
    FakeModels(const FakeModels&) = delete;
    FakeModels& operator=(const FakeModels&) = delete;

    // http(s)://127.0.0.1:<port>; each CLI's base URL: claude and gemini take it as is,
    // codex with /v1.
    std::string origin() const;
    int port() const { return port_; }
    std::vector<ModelRequest> requests() const;
    int refused() const;  // requests without the right key, answered 401
    // The tokens the answers of `api` reported, summed (kAnswerUsage each); for openai-chat
    // only the answers to requests that offered tools (the turns of the agent).
    ServedTokens served(const std::string& api) const;

  private:
    struct Server;
    Options options_;
    std::unique_ptr<Server> server_;
    int port_ = 0;
};

}  // namespace cocode::test
