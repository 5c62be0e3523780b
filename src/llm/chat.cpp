#include "llm/chat.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "github/http.h"

namespace cocode::llm {
namespace {

using json = nlohmann::json;

std::uint64_t estimate_tokens(std::size_t characters) { return (characters + 3) / 4; }

std::uint64_t number(const json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

void read_usage(const json& chunk, Usage& usage) {
    auto it = chunk.find("usage");
    if (it == chunk.end() || !it->is_object()) return;
    usage.prompt_tokens = number(*it, "prompt_tokens");
    usage.completion_tokens = number(*it, "completion_tokens");
    usage.total_tokens = number(*it, "total_tokens");
    if (usage.total_tokens == 0) usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    usage.reported = true;
}

}  // namespace

std::optional<Reply> parse_completion(std::string_view body) {
    auto parsed = json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
    auto choices = parsed.find("choices");
    if (choices == parsed.end() || !choices->is_array() || choices->empty() ||
        !(*choices)[0].is_object())
        return std::nullopt;
    const json& choice = (*choices)[0];
    Reply reply;
    if (auto message = choice.find("message"); message != choice.end() && message->is_object())
        reply.content = json_value(*message, "content", std::string{});
    else
        return std::nullopt;
    reply.finish_reason = json_value(choice, "finish_reason", std::string{});
    reply.model = json_value(parsed, "model", std::string{});
    read_usage(parsed, reply.usage);
    return reply;
}

void StreamReader::feed(std::string_view bytes,
                        const std::function<void(std::string_view)>& on_delta) {
    pending_.append(bytes);
    std::size_t start = 0, end;
    while ((end = pending_.find('\n', start)) != std::string::npos) {
        std::string_view line(pending_.data() + start, end - start);
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.substr(0, 5) != "data:") continue;  // comments, event names, blank separators
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (line == "[DONE]") {
            done_ = true;
            continue;
        }
        auto chunk = json::parse(line, nullptr, false);
        if (chunk.is_discarded() || !chunk.is_object()) continue;
        if (reply_.model.empty()) reply_.model = json_value(chunk, "model", std::string{});
        read_usage(chunk, reply_.usage);
        auto choices = chunk.find("choices");
        if (choices == chunk.end() || !choices->is_array() || choices->empty()) continue;
        const json& choice = (*choices)[0];
        if (!choice.is_object()) continue;
        if (auto reason = choice.find("finish_reason");
            reason != choice.end() && reason->is_string())
            reply_.finish_reason = reason->get<std::string>();
        auto delta = choice.find("delta");
        if (delta == choice.end() || !delta->is_object()) continue;
        auto content = delta->find("content");
        if (content == delta->end() || !content->is_string()) continue;
        const auto& text = content->get_ref<const std::string&>();
        reply_.content += text;
        if (on_delta && !text.empty()) on_delta(text);
    }
    pending_.erase(0, start);
}

ChatClient::ChatClient(ChatOptions options) : options_(std::move(options)) {}
ChatClient::~ChatClient() = default;

Result<std::unique_ptr<ChatClient>> ChatClient::create(ChatOptions options) {
    auto base = github::parse_base_url(options.base_url, "base_url");
    if (!base.ok()) return std::move(base).error();
    if (options.model.empty())
        return Error::usage("chat: no model (set the agent's `model` in " +
                            std::string(".cocode/config.json") + ")");
    std::unique_ptr<ChatClient> self(new ChatClient(std::move(options)));
    const ChatOptions& o = self->options_;
    github::HttpOptions http;
    http.base = *base;
    http.service = "chat API at " + base->origin();
    http.github_api = false;
    http.read_timeout = o.request_timeout;
    http.max_attempts = o.max_attempts;
    http.max_wait = o.max_wait;
    http.notice = o.notice;
    auto auth =
        o.key ? github::token_auth(*o.key, "the agent's key", true) : github::anonymous_auth();
    auto client = github::HttpClient::create(std::move(http), std::move(auth));
    if (!client.ok()) return std::move(client).error();
    self->http_ = std::move(client).value();
    self->path_ = "/chat/completions";
    return self;
}

Result<Reply> ChatClient::complete(const std::vector<Message>& messages, std::string_view label) {
    json body = {{"model", options_.model}, {"messages", json::array()}};
    std::size_t prompt_characters = 0;
    for (const auto& m : messages) {
        body["messages"].push_back({{"role", m.role}, {"content", m.content}});
        prompt_characters += m.content.size();
    }
    if (options_.stream) {
        body["stream"] = true;
        body["stream_options"] = {{"include_usage", true}};
    }
    // Every call gets the whole wait budget: a long session is many calls.
    http_->renew_wait_budget();
    const auto started = std::chrono::steady_clock::now();
    const std::string what = http_->base().path_prefix + path_;

    std::optional<Reply> reply;
    if (options_.stream) {
        StreamReader reader;
        int current_attempt = 0;
        auto response =
            http_->request_streamed("POST", path_, body, [&](std::string_view chunk, int attempt) {
                // A stream broken and asked again starts over.
                if (attempt != current_attempt) reader = StreamReader{}, current_attempt = attempt;
                reader.feed(chunk, options_.on_delta);
                return true;
            });
        if (!response.ok()) return std::move(response).error();
        if (!response->ok())
            return github::response_error("POST", what, response.value(), http_->auth(),
                                          http_->service());
        reply = reader.reply();
    } else {
        auto response = http_->request("POST", path_, body);
        if (!response.ok()) return std::move(response).error();
        if (!response->ok())
            return github::response_error("POST", what, response.value(), http_->auth(),
                                          http_->service());
        reply = parse_completion(response->body);
        if (!reply)
            return Error::general(http_->service() + ": POST " + what +
                                  ": the answer is not a chat completion (no choices[0].message)");
    }
    reply->elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (!reply->usage.reported) {
        reply->usage.prompt_tokens = estimate_tokens(prompt_characters);
        reply->usage.completion_tokens = estimate_tokens(reply->content.size());
        reply->usage.total_tokens = reply->usage.prompt_tokens + reply->usage.completion_tokens;
    }
    total_.prompt_tokens += reply->usage.prompt_tokens;
    total_.completion_tokens += reply->usage.completion_tokens;
    total_.total_tokens += reply->usage.total_tokens;
    if (options_.usage_log) {
        json line = {{"time", format_utc_timestamp(std::chrono::system_clock::now())},
                     {"call", std::string(label)},
                     {"model", reply->model.empty() ? options_.model : reply->model},
                     {"prompt_tokens", reply->usage.prompt_tokens},
                     {"completion_tokens", reply->usage.completion_tokens},
                     {"total_tokens", reply->usage.total_tokens},
                     {"estimated", !reply->usage.reported},
                     {"elapsed_ms", reply->elapsed.count()}};
        if (auto kept = append_line_locked(*options_.usage_log, json_dump(line)); !kept)
            return std::move(kept).error();
    }
    return std::move(*reply);
}

}  // namespace cocode::llm
