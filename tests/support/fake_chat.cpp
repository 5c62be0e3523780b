#include "fake_chat.h"

#include <httplib.h>

#include <thread>

#include "loopback_server.h"

namespace cocode::test {
namespace {
using json = nlohmann::json;
}

struct FakeChat::Server {
    std::unique_ptr<httplib::Server> http;
    std::thread thread;
    mutable std::mutex mutex;
    std::vector<ChatRequest> requests;
    int refused = 0, limited = 0;
};

FakeChat::FakeChat(Options options) : options_(std::move(options)), server_(new Server) {
    Server& s = *server_;
    if (options_.tls.certificate.empty())
        s.http = std::make_unique<httplib::Server>();
    else
        s.http = std::make_unique<httplib::SSLServer>(options_.tls.certificate.c_str(),
                                                      options_.tls.private_key.c_str());
    s.http->Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                httplib::Response& res) {
        Server& st = *server_;
        json body = json::parse(req.body, nullptr, false);
        if (!body.is_object()) {
            res.status = 400;
            res.set_content(R"({"error":{"message":"the body is not JSON"}})", "application/json");
            return;
        }
        std::string auth =
            req.has_header("Authorization") ? req.get_header_value("Authorization") : std::string();
        std::string key = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : std::string();
        std::string content;
        {
            std::lock_guard<std::mutex> lock(st.mutex);
            if (!options_.key.empty() && key != options_.key) {
                ++st.refused;
                res.status = 401;
                res.set_content(R"({"error":{"message":"Incorrect API key provided"}})",
                                "application/json");
                return;
            }
            if (st.limited < options_.rate_limited) {
                ++st.limited;
                res.status = 429;
                res.set_header("Retry-After", "1");
                res.set_content(R"({"error":{"message":"Rate limit reached"}})",
                                "application/json");
                return;
            }
            const std::size_t n = st.requests.size();
            st.requests.push_back({key, body.value("model", ""), body.value("messages", json()),
                                   body.value("stream", false), std::chrono::steady_clock::now()});
            content =
                n < options_.replies.size() ? options_.replies[n] : "I have nothing more to do.";
        }
        std::size_t prompt_chars = 0;
        for (const auto& m : body.value("messages", json::array()))
            if (m.is_object() && m.contains("content") && m["content"].is_string())
                prompt_chars += m["content"].get_ref<const std::string&>().size();
        const auto prompt_tokens = static_cast<std::uint64_t>(static_cast<double>(prompt_chars) *
                                                              options_.tokens_per_char);
        const json usage = {{"prompt_tokens", prompt_tokens},
                            {"completion_tokens", content.size() / 4},
                            {"total_tokens", prompt_tokens + content.size() / 4}};
        const std::string model = body.value("model", "");
        if (body.value("stream", false)) {
            // Pieces of ~40 characters, then the usage chunk, then [DONE].
            std::string events;
            for (std::size_t at = 0; at < content.size(); at += 40) {
                json chunk = {{"id", "c"},
                              {"object", "chat.completion.chunk"},
                              {"model", model},
                              {"choices",
                               {{{"index", 0},
                                 {"delta", {{"content", content.substr(at, 40)}}},
                                 {"finish_reason", nullptr}}}}};
                events += "data: " + chunk.dump() + "\n\n";
            }
            json last = {
                {"id", "c"},
                {"object", "chat.completion.chunk"},
                {"model", model},
                {"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}},
                {"usage", usage}};
            events += "data: " + last.dump() + "\n\ndata: [DONE]\n\n";
            res.set_content(events, "text/event-stream");
            return;
        }
        json answer = {{"id", "chatcmpl-1"},
                       {"object", "chat.completion"},
                       {"model", model},
                       {"choices",
                        {{{"index", 0},
                          {"message", {{"role", "assistant"}, {"content", content}}},
                          {"finish_reason", "stop"}}}},
                       {"usage", usage}};
        res.set_content(answer.dump(), "application/json");
    });
    port_ = start_on_loopback(*s.http, s.thread, "fake chat API");
}

FakeChat::~FakeChat() {
    server_->http->stop();
    if (server_->thread.joinable()) server_->thread.join();
}

std::string FakeChat::base_url() const {
    return std::string(options_.tls.certificate.empty() ? "http" : "https") +
           "://127.0.0.1:" + std::to_string(port_) + "/v1";
}

std::vector<ChatRequest> FakeChat::requests() const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    return server_->requests;
}

int FakeChat::refused() const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    return server_->refused;
}

int FakeChat::limited() const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    return server_->limited;
}

std::string user_text(const ChatRequest& request) {
    std::string out;
    for (const auto& m : request.messages)
        if (m.is_object() && m.value("role", "") == "user") out += m.value("content", "");
    return out;
}

}  // namespace cocode::test
