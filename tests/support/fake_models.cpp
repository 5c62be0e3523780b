#include "fake_models.h"

#include <httplib.h>

#include <atomic>
#include <map>
#include <thread>

#include "loopback_server.h"

namespace cocode::test {
namespace {

using json = nlohmann::json;

std::string header(const httplib::Request& req, const char* name) {
    return req.has_header(name) ? req.get_header_value(name) : std::string();
}

// The credential of a request, whichever way its API sends it.
std::string credential(const httplib::Request& req) {
    std::string bearer = header(req, "Authorization");
    if (bearer.rfind("Bearer ", 0) == 0) return bearer.substr(7);
    for (const char* name : {"x-api-key", "x-goog-api-key"})
        if (auto value = header(req, name); !value.empty()) return value;
    return req.has_param("key") ? req.get_param_value("key") : std::string();
}

// Server-sent events, written at once and the stream ended.
void send_events(httplib::Response& res, std::string body) {
    auto shared = std::make_shared<std::string>(std::move(body));
    res.set_chunked_content_provider("text/event-stream",
                                     [shared](size_t, httplib::DataSink& sink) {
                                         sink.write(shared->data(), shared->size());
                                         sink.done();
                                         return true;
                                     });
}

std::string event(const std::string& name, const json& data) {
    return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

// A value that satisfies a (Gemini-style, upper-case types) JSON schema.
json sample(const json& schema) {
    std::string type = schema.is_object() ? schema.value("type", "OBJECT") : "OBJECT";
    for (auto& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (schema.is_object() && schema.contains("enum") && !schema["enum"].empty())
        return schema["enum"][0];
    if (type == "OBJECT") {
        json out = json::object();
        if (schema.is_object() && schema.contains("properties"))
            for (const auto& [name, property] : schema["properties"].items())
                out[name] = sample(property);
        return out;
    }
    if (type == "INTEGER" || type == "NUMBER") return 10;
    if (type == "BOOLEAN") return false;
    if (type == "ARRAY") return json::array();
    return "ok";
}

}  // namespace

struct FakeModels::Server {
    httplib::Server* http = nullptr;
    std::unique_ptr<httplib::Server> owned;
    std::thread thread;
    mutable std::mutex mutex;
    std::vector<ModelRequest> requests;
    int refused = 0;
    std::atomic<long> replies{0};
    std::map<std::string, ServedTokens> served;

    void count(const std::string& api) {
        std::lock_guard<std::mutex> lock(mutex);
        ServedTokens& t = served[api];
        t.input += kAnswerUsage.input;
        t.output += kAnswerUsage.output;
        t.cached += kAnswerUsage.cached;
    }
};

FakeModels::FakeModels(Options options) : options_(std::move(options)), server_(new Server) {
    Server& s = *server_;
    if (options_.tls.certificate.empty())
        s.owned = std::make_unique<httplib::Server>();
    else
        s.owned = std::make_unique<httplib::SSLServer>(options_.tls.certificate.c_str(),
                                                       options_.tls.private_key.c_str());
    s.http = s.owned.get();

    // Records the request; false (answered 401) when it lacks the key.
    auto admit = [this](const httplib::Request& req, httplib::Response& res, const char* api,
                        const std::string& model, std::vector<std::string> prompts = {}) {
        Server& st = *server_;
        std::lock_guard<std::mutex> lock(st.mutex);
        st.requests.push_back({api, req.path, credential(req), model, std::move(prompts)});
        if (credential(req) == options_.key) return true;
        ++st.refused;
        res.status = 401;
        res.set_content(R"({"error":{"type":"authentication_error","message":"invalid key"}})",
                        "application/json");
        return false;
    };

    // Anthropic Messages.
    s.http->Post(R"(/v1/messages/count_tokens)",
                 [admit](const httplib::Request& req, httplib::Response& res) {
                     if (!admit(req, res, "anthropic", "")) return;
                     res.set_content(R"({"input_tokens":10})", "application/json");
                 });
    s.http->Post(R"(/v1/messages)", [this, admit](const httplib::Request& req,
                                                  httplib::Response& res) {
        json body = json::parse(req.body, nullptr, false);
        if (!body.is_object()) body = json::object();
        // Tool results since the last prompt (a user message that is not a tool's result).
        std::size_t results = 0;
        std::vector<std::string> prompts;
        for (const auto& message : body.value("messages", json::array())) {
            if (message.value("role", "") != "user") continue;
            std::size_t here = 0;
            std::string words;
            if (message.contains("content") && message["content"].is_string())
                words = message["content"].get<std::string>();
            if (message.contains("content") && message["content"].is_array())
                for (const auto& block : message["content"]) {
                    here += block.value("type", "") == "tool_result";
                    if (block.value("type", "") == "text") words += block.value("text", "");
                }
            // What claude adds by itself (a file changed, the context) comes as
            // <system-reminder> blocks, and a resumed session has "(no content)" where an
            // empty message was; a prompt has words besides them.
            std::string said = words;
            for (std::size_t at; (at = said.find("<system-reminder>")) != std::string::npos;) {
                const std::size_t end = said.find("</system-reminder>", at);
                said.erase(at, end == std::string::npos ? std::string::npos : end + 18 - at);
            }
            if (said == "(no content)") said.clear();
            if (here == 0 && said.find_first_not_of(" \t\r\n") != std::string::npos) {
                prompts.push_back(words);
                results = 0;
            }
            results += here;
        }
        if (!admit(req, res, "anthropic", body.value("model", ""), prompts)) return;
        bool has_bash = false;
        for (const auto& tool : body.value("tools", json::array()))
            has_bash = has_bash || tool.value("name", "") == "Bash";
        json content = json::array();
        std::string stop = "end_turn";
        if (has_bash && results < options_.commands.size()) {
            content.push_back({{"type", "text"}, {"text", "Step " + std::to_string(results + 1)}});
            content.push_back({{"type", "tool_use"},
                               {"id", "toolu_" + std::to_string(results) + "_" +
                                          std::to_string(++server_->replies)},
                               {"name", "Bash"},
                               {"input",
                                {{"command", options_.commands[results]},
                                 {"description", "step " + std::to_string(results + 1)}}}});
            stop = "tool_use";
        } else {
            content.push_back({{"type", "text"}, {"text", options_.answer}});
        }
        // Ids unique over the fake's life: a resumed session keeps the earlier ones, and a
        // message id seen again would be taken for the same message.
        json message = {{"id", "msg_" + std::to_string(++server_->replies)},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"model", body.value("model", "claude")},
                        {"content", content},
                        {"stop_reason", stop},
                        {"stop_sequence", nullptr},
                        {"usage",
                         {{"input_tokens", kAnswerUsage.input - kAnswerUsage.cached},
                          {"cache_read_input_tokens", kAnswerUsage.cached},
                          {"cache_creation_input_tokens", 0},
                          {"output_tokens", kAnswerUsage.output}}}};
        server_->count("anthropic");
        if (!body.value("stream", false)) {
            res.set_content(message.dump(), "application/json");
            return;
        }
        json start = message;
        start["content"] = json::array();
        start["stop_reason"] = nullptr;
        std::string out = event("message_start", {{"type", "message_start"}, {"message", start}});
        for (std::size_t i = 0; i < content.size(); ++i) {
            const json& block = content[i];
            const bool text = block["type"] == "text";
            json empty = text ? json{{"type", "text"}, {"text", ""}}
                              : json{{"type", "tool_use"},
                                     {"id", block["id"]},
                                     {"name", block["name"]},
                                     {"input", json::object()}};
            json delta =
                text ? json{{"type", "text_delta"}, {"text", block["text"]}}
                     : json{{"type", "input_json_delta"}, {"partial_json", block["input"].dump()}};
            out += event("content_block_start",
                         {{"type", "content_block_start"}, {"index", i}, {"content_block", empty}});
            out += event("content_block_delta",
                         {{"type", "content_block_delta"}, {"index", i}, {"delta", delta}});
            out += event("content_block_stop", {{"type", "content_block_stop"}, {"index", i}});
        }
        out +=
            event("message_delta", {{"type", "message_delta"},
                                    {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                                    {"usage", {{"output_tokens", kAnswerUsage.output}}}});
        out += event("message_stop", {{"type", "message_stop"}});
        send_events(res, std::move(out));
    });

    // OpenAI Responses. The WebSocket transport codex tries first is refused as a gateway
    // without it refuses it: 426, after which codex uses HTTPS at once.
    s.http->Get(R"(/v1/responses)", [](const httplib::Request&, httplib::Response& res) {
        res.status = 426;
        res.set_content(R"({"error":"websockets are not supported here"})", "application/json");
    });
    s.http->Get(R"(/v1/models)", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"object":"list","data":[]})", "application/json");
    });
    s.http->Post(R"(/v1/responses)", [this, admit](const httplib::Request& req,
                                                   httplib::Response& res) {
        json body = json::parse(req.body, nullptr, false);
        if (!body.is_object()) body = json::object();
        // Tool results since the last prompt; tools come at the top level and, in codex's
        // code mode, in namespaces of an additional_tools input item.
        std::size_t results = 0;
        std::vector<std::string> prompts;
        std::vector<std::pair<std::string, std::string>> tools;  // type, name
        auto collect = [&](const json& list, auto& self) -> void {
            for (const auto& tool : list) {
                if (tool.contains("tools")) self(tool["tools"], self);
                tools.emplace_back(tool.value("type", ""), tool.value("name", ""));
            }
        };
        collect(body.value("tools", json::array()), collect);
        for (const auto& item : body.value("input", json::array())) {
            const std::string type = item.value("type", "");
            results += type == "function_call_output" || type == "custom_tool_call_output";
            if (type == "additional_tools") collect(item.value("tools", json::array()), collect);
            if (type != "message" || item.value("role", "") != "user") continue;
            std::string words;
            for (const auto& part : item.value("content", json::array()))
                if (part.is_object()) words += part.value("text", "");
            // What codex adds by itself comes as user messages too: its environment and the
            // project's instructions, each in tags (<environment_context>, <INSTRUCTIONS>).
            const std::size_t first = words.find_first_not_of(" \t\r\n");
            if (first == std::string::npos || words[first] == '<' ||
                words.compare(first, 11, "# AGENTS.md") == 0)
                continue;
            prompts.push_back(words);
            results = 0;
        }
        if (!admit(req, res, "openai", body.value("model", ""), prompts)) return;
        auto has = [&](const char* type, const char* name) {
            return std::any_of(tools.begin(), tools.end(),
                               [&](const auto& t) { return t.first == type && t.second == name; });
        };
        json items = json::array();
        if (results < options_.commands.size() &&
            (has("custom", "exec") || has("function", "exec_command") ||
             has("function", "shell"))) {
            const std::string& command = options_.commands[results];
            // Ids unique over the fake's life: a resumed session keeps the earlier ones.
            const std::string n =
                std::to_string(results) + "_" + std::to_string(++server_->replies);
            const std::string call = "call_" + n;
            items.push_back({{"type", "message"},
                             {"id", "msg_" + n},
                             {"role", "assistant"},
                             {"status", "completed"},
                             {"content",
                              {{{"type", "output_text"},
                                {"text", "Step " + std::to_string(results + 1)},
                                {"annotations", json::array()}}}}});
            if (has("custom", "exec")) {
                items.push_back({{"type", "custom_tool_call"},
                                 {"id", "ctc_" + n},
                                 {"call_id", call},
                                 {"name", "exec"},
                                 {"status", "completed"},
                                 {"input", "const r = await tools.exec_command({cmd: " +
                                               json(command).dump() + "}); text(r.output);"}});
            } else {
                const bool exec = has("function", "exec_command");
                json arguments =
                    exec ? json{{"cmd", command}} : json{{"command", {"bash", "-lc", command}}};
                items.push_back({{"type", "function_call"},
                                 {"id", "fc_" + n},
                                 {"call_id", call},
                                 {"name", exec ? "exec_command" : "shell"},
                                 {"status", "completed"},
                                 {"arguments", arguments.dump()}});
            }
        } else {
            items.push_back({{"type", "message"},
                             {"id", "msg_final_" + std::to_string(++server_->replies)},
                             {"role", "assistant"},
                             {"status", "completed"},
                             {"content",
                              {{{"type", "output_text"},
                                {"text", options_.answer},
                                {"annotations", json::array()}}}}});
        }
        json response = {{"id", "resp_" + std::to_string(++server_->replies)},
                         {"object", "response"},
                         {"status", "in_progress"},
                         {"model", body.value("model", "")},
                         {"output", json::array()}};
        std::string out =
            event("response.created", {{"type", "response.created"}, {"response", response}});
        for (std::size_t i = 0; i < items.size(); ++i) {
            out += event(
                "response.output_item.added",
                {{"type", "response.output_item.added"}, {"output_index", i}, {"item", items[i]}});
            out += event(
                "response.output_item.done",
                {{"type", "response.output_item.done"}, {"output_index", i}, {"item", items[i]}});
        }
        response["status"] = "completed";
        response["output"] = items;
        response["usage"] = {{"input_tokens", kAnswerUsage.input},
                             {"input_tokens_details", {{"cached_tokens", kAnswerUsage.cached}}},
                             {"output_tokens", kAnswerUsage.output},
                             {"output_tokens_details", {{"reasoning_tokens", 0}}},
                             {"total_tokens", kAnswerUsage.input + kAnswerUsage.output}};
        server_->count("openai");
        out +=
            event("response.completed", {{"type", "response.completed"}, {"response", response}});
        send_events(res, std::move(out));
    });

    // Gemini: /v1beta/models/<model>:<method>.
    s.http->Post(R"(/v1beta/models/([^:/]+):(\w+))", [this, admit](const httplib::Request& req,
                                                                   httplib::Response& res) {
        const std::string model = req.matches[1];
        const std::string method = req.matches[2];
        json body = json::parse(req.body, nullptr, false);
        if (!body.is_object()) body = json::object();
        // Tool results since the last prompt (a user turn of words, not of tool results).
        std::size_t results = 0;
        std::vector<std::string> prompts;
        for (const auto& content : body.value("contents", json::array())) {
            if (content.value("role", "") != "user") continue;
            for (const auto& part : content.value("parts", json::array())) {
                results += part.contains("functionResponse");
                if (!part.contains("text") || !part["text"].is_string()) continue;
                // gemini's own context (the date, the folder) is a part in tags.
                const std::string words = part["text"];
                const std::size_t first = words.find_first_not_of(" \t\r\n");
                if (first == std::string::npos || words[first] == '<') continue;
                prompts.push_back(words);
                results = 0;
            }
        }
        if (!admit(req, res, "gemini", model, prompts)) return;
        if (method == "countTokens") {
            res.set_content(R"({"totalTokens":10})", "application/json");
            return;
        }
        const json config = body.value("generationConfig", json::object());
        json parts = json::array();
        if (config.contains("responseJsonSchema") || config.contains("responseSchema")) {
            // A side request that wants JSON (gemini routes each prompt to a model this way).
            const json& schema = config.contains("responseJsonSchema")
                                     ? config["responseJsonSchema"]
                                     : config["responseSchema"];
            parts.push_back({{"text", sample(schema).dump()}});
        } else {
            bool has_shell = false;
            for (const auto& tool : body.value("tools", json::array()))
                for (const auto& f : tool.value("functionDeclarations", json::array()))
                    has_shell = has_shell || f.value("name", "") == "run_shell_command";
            if (has_shell && results < options_.commands.size()) {
                parts.push_back({{"text", "Step " + std::to_string(results + 1)}});
                parts.push_back({{"functionCall",
                                  {{"name", "run_shell_command"},
                                   {"args",
                                    {{"command", options_.commands[results]},
                                     {"description", "step " + std::to_string(results + 1)}}}}}});
            } else {
                parts.push_back({{"text", options_.answer}});
            }
        }
        json answer = {{"candidates",
                        {{{"content", {{"role", "model"}, {"parts", parts}}},
                          {"finishReason", "STOP"},
                          {"index", 0}}}},
                       {"usageMetadata",
                        {{"promptTokenCount", kAnswerUsage.input},
                         {"cachedContentTokenCount", kAnswerUsage.cached},
                         {"candidatesTokenCount", kAnswerUsage.output},
                         {"totalTokenCount", kAnswerUsage.input + kAnswerUsage.output}}},
                       {"modelVersion", model}};
        server_->count("gemini");
        if (method == "streamGenerateContent")
            send_events(res, "data: " + answer.dump() + "\r\n\r\n");
        else
            res.set_content(answer.dump(), "application/json");
    });

    // OpenAI chat completions, as OpenAI-compatible providers serve it: the API of copilot,
    // opencode, kilo, qwen, pi, cline and droid pointed at a provider of one's own. Each CLI
    // names its shell tool its own way (bash, run_shell_command, Execute, run_commands) and
    // shapes its arguments its own way (a command, or a list of commands): the fake calls the
    // one the request offers, filling what its schema requires. A request without tools (a
    // CLI's title for its session) is answered and not counted with the turns.
    s.http->Post(R"(/v1/chat/completions)", [this, admit](const httplib::Request& req,
                                                          httplib::Response& res) {
        json body = json::parse(req.body, nullptr, false);
        if (!body.is_object()) body = json::object();
        std::size_t results = 0;
        std::vector<std::string> prompts;
        for (const auto& message : body.value("messages", json::array())) {
            const std::string role = message.value("role", "");
            if (role == "tool") ++results;
            if (role != "user") continue;
            std::string words;
            if (message.contains("content") && message["content"].is_string())
                words = message["content"].get<std::string>();
            if (message.contains("content") && message["content"].is_array())
                for (const auto& part : message["content"])
                    if (part.value("type", "") == "text") words += part.value("text", "");
            prompts.push_back(words);
            results = 0;
        }
        const std::string model = body.value("model", "gpt-fake");
        if (!admit(req, res, "openai-chat", model, prompts)) return;
        static const char* kShells[] = {"bash",    "shell",    "run_shell_command",
                                        "Execute", "execute",  "run_commands",
                                        "exec",    "terminal", "execute_command"};
        const json* shell = nullptr;
        const json tools = body.value("tools", json::array());
        for (const char* name : kShells)
            for (const auto& tool : tools)
                if (!shell && tool.contains("function") &&
                    tool["function"].value("name", "") == name)
                    shell = &tool["function"];
        json message = {{"role", "assistant"}};
        std::string finish = "stop";
        if (shell && results < options_.commands.size()) {
            const json parameters = shell->value("parameters", json::object());
            json args = json::object();
            for (const auto& required : parameters.value("required", json::array()))
                if (required.is_string())
                    args[required.get<std::string>()] = sample(parameters["properties"].value(
                        required.get<std::string>(), json::object()));
            const std::string& command = options_.commands[results];
            if (parameters.contains("properties") && parameters["properties"].contains("commands"))
                args["commands"] = json::array({command});
            else
                args["command"] = command;
            message["content"] = nullptr;
            message["tool_calls"] = json::array(
                {{{"id",
                   "call_" + std::to_string(results) + "_" + std::to_string(++server_->replies)},
                  {"type", "function"},
                  {"function", {{"name", (*shell)["name"]}, {"arguments", args.dump()}}}}});
            finish = "tool_calls";
        } else {
            message["content"] = tools.empty() ? std::string("Fix the file") : options_.answer;
        }
        const json usage = {{"prompt_tokens", kAnswerUsage.input},
                            {"completion_tokens", kAnswerUsage.output},
                            {"total_tokens", kAnswerUsage.input + kAnswerUsage.output},
                            {"prompt_tokens_details", {{"cached_tokens", kAnswerUsage.cached}}}};
        if (!tools.empty()) server_->count("openai-chat");
        const std::string id = "chatcmpl-" + std::to_string(++server_->replies);
        if (!body.value("stream", false)) {
            res.set_content(
                json{{"id", id},
                     {"object", "chat.completion"},
                     {"created", 1},
                     {"model", model},
                     {"choices",
                      json::array(
                          {{{"index", 0}, {"message", message}, {"finish_reason", finish}}})},
                     {"usage", usage}}
                    .dump(),
                "application/json");
            return;
        }
        json delta = message;
        if (delta.contains("tool_calls")) delta["tool_calls"][0]["index"] = 0;
        auto chunk = [&](const json& choices, const json& extra) {
            json c = {{"id", id},
                      {"object", "chat.completion.chunk"},
                      {"created", 1},
                      {"model", model},
                      {"choices", choices}};
            for (const auto& [k, v] : extra.items()) c[k] = v;
            return "data: " + c.dump() + "\n\n";
        };
        std::string out =
            chunk(json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}}}),
                  json::object());
        out += chunk(
            json::array({{{"index", 0}, {"delta", json::object()}, {"finish_reason", finish}}}),
            json::object());
        out += chunk(json::array(), {{"usage", usage}});
        out += "data: [DONE]\n\n";
        send_events(res, std::move(out));
    });

    port_ = start_on_loopback(*s.http, s.thread, "fake model API");
}

FakeModels::~FakeModels() {
    server_->http->stop();
    if (server_->thread.joinable()) server_->thread.join();
}

std::string FakeModels::origin() const {
    return std::string(options_.tls.certificate.empty() ? "http" : "https") +
           "://127.0.0.1:" + std::to_string(port_);
}

std::vector<ModelRequest> FakeModels::requests() const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    return server_->requests;
}

ServedTokens FakeModels::served(const std::string& api) const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    auto it = server_->served.find(api);
    return it == server_->served.end() ? ServedTokens{} : it->second;
}

int FakeModels::refused() const {
    std::lock_guard<std::mutex> lock(server_->mutex);
    return server_->refused;
}

}  // namespace cocode::test
