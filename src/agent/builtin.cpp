#include "agent/builtin.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "agent/builtin_support.h"
#include "agent/codali.h"
#include "config/presets.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/redact.h"
#include "core/run_id.h"
#include "git/cli.h"
#include "llm/chat.h"
#include "proc/command.h"
#include "proc/environment.h"
#include "protocol/executor.h"
#include "protocol/textproto.h"
#include "run/run_folder.h"

namespace cocode::agent {
namespace fs = std::filesystem;

namespace detail {

// What the agent writes to its stdout and stderr (the run folder's agent-stdout.txt and
// agent-stderr.txt, opened by the supervisor), a line at a time so `logs --follow` sees it.
void say(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(int code, const std::string& why) {
    const std::string line = redact(why) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
    return code;
}

std::string env_of(const RunContext& context, const std::string& name) {
    auto it = context.environment.find(name);
    return it == context.environment.end() ? std::string() : it->second;
}

protocol::ExecutorOptions executor_options(const config::AgentConfig& agent,
                                           const RunContext& context, const fs::path& root) {
    const auto secrets = config::secret_variables();
    protocol::ExecutorOptions options;
    options.root = root;
    options.command_timeout = agent.chat->command_timeout;
    for (const auto& [name, value] : context.environment) {
        if ((agent.token_env && name == *agent.token_env) || config::is_github_credential(name) ||
            std::find(secrets.begin(), secrets.end(), name) != secrets.end())
            continue;
        options.environment.push_back(name + "=" + value);
    }
    options.show = [](std::string_view line) { say(line); };
    return options;
}

Result<Model> make_model(const config::AgentConfig& agent, const RunContext& context,
                         const std::optional<std::string>& model_override) {
    const config::ChatSettings& chat = *agent.chat;
    const config::ChatProvider* provider = config::chat_provider(chat.provider);
    llm::ChatOptions options;
    options.base_url = agent.base_url.value_or(std::string(provider->base_url));
    options.model = model_override.value_or(agent.model.value_or(std::string(provider->model)));
    if (agent.token_env) {
        const std::string key = env_of(context, *agent.token_env);
        if (key.empty())
            return Error::missing("agent '" + agent.name + "': " + *agent.token_env +
                                  " is not set (the key of provider " + chat.provider +
                                  "; export it where cocode-dispatch runs)");
        remember_secret(key);
        options.key = key;
    }
    options.request_timeout = chat.request_timeout;
    options.stream = chat.stream;
    if (chat.stream)
        options.on_delta = [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        };
    options.notice = [](std::string_view line) { fail(0, std::string(line)); };
    options.usage_log = context.run_folder / kUsageFile;
    auto client = llm::ChatClient::create(std::move(options));
    if (!client.ok()) return std::move(client).error();
    Model model;
    model.describe = chat.provider + " model " +
                     model_override.value_or(agent.model.value_or(std::string(provider->model))) +
                     " at " + agent.base_url.value_or(std::string(provider->base_url));
    model.client = std::move(client).value();
    return model;
}

int exit_code_of(const Error& error) { return static_cast<int>(error.code); }

Result<void> commit_all(const RunContext& context, const std::string& message) {
    if (auto added = git::git_output(context.working_dir, {"add", "-A"}); !added)
        return std::move(added).error();
    git::GitOptions with_message;
    with_message.input = message;
    // The agent's own commit, in its sandbox: the post-commit hook records READY.
    with_message.hooks = true;
    auto committed = git::git_output(context.working_dir,
                                     {"commit", "--allow-empty", "-q", "-F", "-"}, with_message);
    if (!committed) return std::move(committed).error();
    return {};
}

std::string commit_subject(const std::string& summary, long issue) {
    std::string subject = first_line(summary);
    if (subject.size() > 72) subject = subject.substr(0, 69) + "...";
    if (subject.find_first_not_of(" \t") == std::string::npos)
        subject = "Work on issue #" + std::to_string(issue);
    return subject;
}

}  // namespace detail

namespace {

using namespace detail;

// The runner contract's REST backend: the prompt as one chat request, the answer as output.
class ChatAgent final : public Agent {
  public:
    explicit ChatAgent(config::AgentConfig agent) : agent_(std::move(agent)) {}
    std::string type() const override { return std::string(config::type_name(agent_.type)); }

    int execute(const RunContext& context) override {
        auto model = make_model(agent_, context);
        if (!model.ok()) return fail(exit_code_of(model.error()), model.error().message);
        say("asking " + model->describe);
        auto reply = model->client->complete({{"user", context.prompt}}, "prompt");
        if (!reply.ok()) return fail(exit_code_of(reply.error()), reply.error().message);
        if (!agent_.chat->stream)
            say(reply->content);
        else
            say("");
        std::string output = reply->content;
        if (output.empty() || output.back() != '\n') output += '\n';
        if (auto written = write_file_atomic(context.run_folder / "output.md", output); !written)
            return fail(1, "cannot write output.md: " + written.error().message);
        return 0;
    }

  private:
    config::AgentConfig agent_;
};

// The inbox file to read next: the oldest by write time (then by name) not yet read.
std::optional<fs::path> next_inbox(const fs::path& inbox, const std::vector<std::string>& done) {
    std::error_code ec;
    std::optional<fs::path> best;
    struct timespec best_time {};
    for (fs::directory_iterator it(inbox, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (it->path().extension() != ".txt" || name.front() == '.') continue;
        if (std::find(done.begin(), done.end(), name) != done.end()) continue;
        struct stat st {};
        if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        const auto& t = st.st_mtim;
        if (!best || t.tv_sec < best_time.tv_sec ||
            (t.tv_sec == best_time.tv_sec &&
             (t.tv_nsec < best_time.tv_nsec ||
              (t.tv_nsec == best_time.tv_nsec && it->path() < *best)))) {
            best = it->path();
            best_time = t;
        }
    }
    return best;
}

// Blocks until an unread .txt file is in `inbox` (inotify; a look every second besides).
fs::path wait_for_inbox(const fs::path& inbox, const std::vector<std::string>& done) {
    UniqueFd watch(::inotify_init1(IN_CLOEXEC));
    if (watch.valid())
        ::inotify_add_watch(watch.get(), inbox.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO);
    while (true) {
        if (auto found = next_inbox(inbox, done)) return *found;
        if (watch.valid()) {
            pollfd p{watch.get(), POLLIN, 0};
            if (::poll(&p, 1, 1000) > 0) {
                char buf[4096];
                (void)!::read(watch.get(), buf, sizeof buf);
            }
        } else {
            ::sleep(1);
        }
    }
}

// The CodingAgent text protocol, session by session (seeds/codingagent-text-protocol.md).
class TextProtoAgent final : public Agent {
  public:
    explicit TextProtoAgent(config::AgentConfig agent) : agent_(std::move(agent)) {}
    std::string type() const override { return std::string(config::type_name(agent_.type)); }

    int execute(const RunContext& context) override {
        const config::ChatSettings& chat = *agent_.chat;
        const fs::path folder = context.run_folder;
        for (const char* dir : {kOutboxDir, kInboxDir, kSessionsDir}) {
            std::error_code ec;
            fs::create_directories(folder / dir, ec);
            if (ec) return fail(1, "cannot make " + (folder / dir).string() + ": " + ec.message());
        }
        std::optional<Model> model;
        if (chat.transport == config::Transport::http) {
            auto made = make_model(agent_, context);
            if (!made.ok()) return fail(exit_code_of(made.error()), made.error().message);
            model = std::move(made).value();
        }
        auto session = load_or_start(context);
        if (!session.ok()) return fail(1, session.error().message);
        Session& s = *session;
        if (s.is_complete) {
            say("session " + s.session_id + " is complete already: " + s.summary);
            return 0;
        }
        std::error_code canonical_ec;
        const fs::path root = fs::canonical(context.working_dir, canonical_ec);
        if (canonical_ec)
            return fail(
                1, "the worktree " + context.working_dir.string() + ": " + canonical_ec.message());
        protocol::Executor executor(executor_options(agent_, context, root));
        say("textproto session " + s.session_id + " over " +
            (model ? model->describe
                   : "files: paste answers into " + (folder / kInboxDir).string()));

        while (true) {
            const int turns = s.sequence_number - 1;
            if (turns >= chat.max_turns)
                return stop(context, s,
                            "the turn limit of " + std::to_string(chat.max_turns) +
                                " was reached without DONE (max_turns)");
            if (s.tokens_used >= chat.token_budget)
                return stop(context, s,
                            "the token budget of " + std::to_string(chat.token_budget) +
                                " was spent without DONE (" + std::to_string(s.tokens_used) +
                                " used; token_budget)");
            const std::string listing = protocol::workspace_listing(root, kListingLimit);
            const std::string outbox =
                protocol::render_outbox(s, listing, executor.read_requested(s.read_file_requests));
            const std::string name = protocol::outbox_name(s.session_id, s.sequence_number);
            const fs::path outbox_path = folder / kOutboxDir / name;
            if (auto written = write_file_atomic(outbox_path, outbox, 0644, Durability::content);
                !written)
                return fail(1, "cannot write the outbox: " + written.error().message);

            // An answer already there (pasted, or received before a restart) is read first.
            std::optional<fs::path> reply_path = next_inbox(folder / kInboxDir, s.processed_inbox);
            if (!reply_path && model) {
                say("--- sequence " + std::to_string(s.sequence_number) + ": asking the model");
                auto reply = model->client->complete({{"user", outbox}}, name);
                if (!reply.ok()) {
                    (void)save(s);
                    return fail(exit_code_of(reply.error()), reply.error().message);
                }
                s.tokens_used += reply->usage.total_tokens;
                reply_path = folder / kInboxDir / name;
                if (auto kept =
                        write_file_atomic(*reply_path, reply->content, 0644, Durability::content);
                    !kept)
                    return fail(1, "cannot keep the answer: " + kept.error().message);
            } else if (!reply_path) {
                say("--- sequence " + std::to_string(s.sequence_number) + ": outbox " +
                    outbox_path.string());
                say("Paste everything between the lines into the chat, then save the model's "
                    "whole answer as a .txt file in " +
                    (folder / kInboxDir).string());
                say("----8<----");
                say(outbox);
                say("----8<----");
                reply_path = wait_for_inbox(folder / kInboxDir, s.processed_inbox);
                say("--- read " + reply_path->filename().string());
            }
            auto text = read_file(*reply_path, kMaxInbox);
            if (!text.ok()) return fail(1, text.error().message);
            if (!model) s.tokens_used += (outbox.size() + text->size() + 3) / 4;  // estimated

            auto commands = protocol::parse_inbox(*text);
            auto execution = executor.execute(commands);
            s.processed_inbox.push_back(reply_path->filename().string());
            s.last_results = std::move(execution.results);
            s.read_file_requests = std::move(execution.read_requests);
            ++s.sequence_number;
            if (execution.done) {
                s.summary = execution.summary;
                if (int code = finish(context, s); code != 0) return code;
                return 0;
            }
            if (auto saved = save(s); !saved.ok()) return fail(1, saved.error().message);
        }
    }

  private:
    using Session = protocol::Session;
    static constexpr std::size_t kListingLimit = 400;
    static constexpr std::size_t kMaxInbox = std::size_t{8} << 20;

    fs::path session_path(const std::string& id) const {
        return folder_ / kSessionsDir / (id + ".json");
    }

    Result<void> save(Session& s) {
        s.updated_at = format_utc_timestamp(std::chrono::system_clock::now());
        return write_file_atomic(session_path(s.session_id),
                                 json_dump(protocol::session_json(s), 2) + "\n", 0644,
                                 Durability::content);
    }

    // The run's unfinished session when there is one (a restart resumes it), else a new one.
    Result<Session> load_or_start(const RunContext& context) {
        folder_ = context.run_folder;
        std::error_code ec;
        std::optional<fs::path> newest;
        fs::file_time_type newest_time{};
        for (fs::directory_iterator it(folder_ / kSessionsDir, ec), end; !ec && it != end;
             it.increment(ec)) {
            if (it->path().extension() != ".json") continue;
            auto t = it->last_write_time(ec);
            if (!newest || t > newest_time) newest = it->path(), newest_time = t;
        }
        if (newest) {
            auto text = read_file(*newest);
            if (!text.ok()) return std::move(text).error();
            auto s = protocol::parse_session(*text, newest->string());
            if (!s.ok()) return std::move(s).error();
            say("resuming session " + s->session_id + " at sequence " +
                std::to_string(s->sequence_number));
            return s;
        }
        Session s;
        s.session_id = protocol::new_session_id();
        s.task = context.prompt;
        s.created_at = format_utc_timestamp(std::chrono::system_clock::now());
        if (auto saved = save(s); !saved.ok()) return std::move(saved).error();
        return s;
    }

    // A session that ends without DONE: exit 1, the reason on stderr and in output.md.
    int stop(const RunContext& context, Session& s, const std::string& why) {
        (void)save(s);
        (void)write_file_atomic(
            context.run_folder / "output.md",
            "The session " + s.session_id + " ended without DONE: " + why + "\n");
        return fail(1, why);
    }

    // DONE: everything in the worktree committed with the ready marker (the hook records
    // READY, the check judges it), then the session closed.
    int finish(const RunContext& context, Session& s) {
        std::string message = commit_subject(s.summary, context.issue) + "\n\n";
        if (s.summary.find('\n') + 1 < s.summary.size()) message += s.summary + "\n";
        message += "Session " + s.session_id + ", " + std::to_string(s.sequence_number - 1) +
                   " turns, by cocode's " + type() + " agent.\n\n" + context.ready_marker + "\n";
        if (auto committed = commit_all(context, message); !committed)
            return stop(context, s, committed.error().message);
        s.is_complete = true;
        if (auto saved = save(s); !saved.ok()) return fail(1, saved.error().message);
        std::string output = s.summary.empty() ? std::string("(no summary)\n") : s.summary;
        if (output.back() != '\n') output += '\n';
        (void)write_file_atomic(context.run_folder / "output.md", output);
        say("DONE after " + std::to_string(s.sequence_number - 1) + " turns, " +
            std::to_string(s.tokens_used) + " tokens; committed with the ready marker");
        return 0;
    }

    config::AgentConfig agent_;
    fs::path folder_;
};

}  // namespace

Result<std::unique_ptr<Agent>> make_builtin_agent(const config::AgentConfig& agent, Critic critic) {
    if (!config::is_builtin(agent.type) || !agent.chat)
        return Error::usage("agent '" + agent.name + "' is of type " +
                            std::string(config::type_name(agent.type)) +
                            ", not a built-in agent (textproto, perplexity, xai, codali)");
    if (agent.type == config::AgentType::codali)
        return std::unique_ptr<Agent>(new CodaliAgent(agent, std::move(critic)));
    if (agent.chat->textproto) return std::unique_ptr<Agent>(new TextProtoAgent(agent));
    return std::unique_ptr<Agent>(new ChatAgent(agent));
}

Result<RunContext> context_from_environment(const std::vector<std::string>& environment) {
    RunContext context;
    for (const auto& entry : environment) {
        const auto eq = entry.find('=');
        if (eq != std::string::npos)
            context.environment[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    for (const char* name : {"COCODE_REPO_PATH", "JRUN_RUN_FOLDER", "JRUN_ID"})
        if (env_of(context, name).empty())
            return Error::usage(std::string(name) +
                                " is not set: `cocode-dispatch agent` is started by the "
                                "dispatcher for a run, not by hand");
    context.run_id = env_of(context, "JRUN_ID");
    context.project_id = env_of(context, "JRUN_PROJECT_ID");
    context.task_id = env_of(context, "JRUN_TASK_ID");
    context.working_dir = env_of(context, "COCODE_REPO_PATH");
    context.run_folder = env_of(context, "JRUN_RUN_FOLDER");
    context.ready_marker = env_of(context, "COCODE_READY_MARKER");
    context.issue = std::atol(env_of(context, "COCODE_ISSUE_NUMBER").c_str());
    run::RunFiles files{context.run_folder};
    context.stdout_path = files.stdout_file();
    context.stderr_path = files.stderr_file();
    auto prompt = read_file(files.prompt());
    if (!prompt.ok()) return std::move(prompt).error();
    context.prompt = std::move(prompt).value();
    if (context.ready_marker.empty())
        return Error::usage("COCODE_READY_MARKER is not set: the agent could not mark its commit");
    return context;
}

}  // namespace cocode::agent
