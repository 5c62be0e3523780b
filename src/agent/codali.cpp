#include "agent/codali.h"

#include <algorithm>
#include <set>

#include "agent/builtin_support.h"
#include "agent/codali_needs.h"
#include "core/files.h"
#include "core/json_text.h"
#include "index/worktree_index.h"
#include "protocol/executor.h"
#include "protocol/textproto.h"

namespace cocode::agent {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace detail;

namespace {

constexpr char kSessionFile[] = "session.json";
// Messages kept whole when history is summarised: the last two exchanges.
constexpr std::size_t kRecentMessages = 4;
constexpr double kSummariseAt = 0.9;

// The session as kept in codali/session.json.
struct State {
    std::string task;  // the first user message, without any summary
    std::vector<llm::Message> messages;
    std::string summary;  // of what history was replaced
    int turns = 0;
    int critic_rounds = 0;
    int summaries = 0;
    std::uint64_t tokens_used = 0;
    double tokens_per_char = 0.25;  // estimated, then corrected from the server's usage
    std::vector<std::string> plan_targets;
    bool complete = false;
};

json state_json(const State& s) {
    json messages = json::array();
    for (const auto& m : s.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    return {{"task", s.task},
            {"messages", messages},
            {"summary", s.summary},
            {"turns", s.turns},
            {"criticRounds", s.critic_rounds},
            {"summaries", s.summaries},
            {"tokensUsed", s.tokens_used},
            {"tokensPerChar", s.tokens_per_char},
            {"planTargets", s.plan_targets},
            {"isComplete", s.complete}};
}

Result<State> parse_state(const std::string& text, const fs::path& source) {
    auto parsed = parse_json_text(text, source.string(), "a codali session");
    if (!parsed) return std::move(parsed).error();
    const json& j = *parsed;
    State s;
    try {
        s.task = j.at("task").get<std::string>();
        for (const auto& m : j.at("messages"))
            s.messages.push_back(
                {m.at("role").get<std::string>(), m.at("content").get<std::string>()});
        s.summary = j.value("summary", "");
        s.turns = j.value("turns", 0);
        s.critic_rounds = j.value("criticRounds", 0);
        s.summaries = j.value("summaries", 0);
        s.tokens_used = j.value("tokensUsed", std::uint64_t{0});
        s.tokens_per_char = j.value("tokensPerChar", 0.25);
        s.plan_targets = j.value("planTargets", std::vector<std::string>{});
        s.complete = j.value("isComplete", false);
    } catch (const json::exception& e) {
        return Error::general(source.string() + ": not a codali session (" + e.what() + ")");
    }
    if (s.messages.size() < 2) return Error::general(source.string() + ": no conversation");
    return s;
}

std::size_t characters(const std::vector<llm::Message>& messages) {
    std::size_t n = 0;
    for (const auto& m : messages) n += m.content.size() + 16;
    return n;
}

// The reply without the envelopes found in it, for the text-protocol parser.
std::string without(std::string_view reply, const std::vector<protocol::FoundRequest>& found) {
    std::string rest;
    std::size_t at = 0;
    for (const auto& f : found) {
        if (f.begin > at) rest.append(reply.substr(at, f.begin - at));
        at = std::max(at, f.end);
    }
    if (at < reply.size()) rest.append(reply.substr(at));
    return rest;
}

bool needs_index(const protocol::AgentRequest& request) {
    return std::any_of(request.needs.begin(), request.needs.end(), [](const protocol::Need& n) {
        return n.type.rfind("docdex.", 0) == 0 || n.type == "file.list";
    });
}

}  // namespace

std::string codali_instructions() {
    return std::string(
               "You are a coding agent working on a task in a git repository that you cannot see "
               "directly. cocode, the tool you talk to, runs what you ask in the repository and "
               "answers with the results. Every path is relative to the repository's root.\n\n"
               "## Asking for context\n\n"
               "Ask for exactly the context you need with an envelope in this form (YAML; the "
               "same as a JSON object with \"envelope\": \"AGENT_REQUEST v1\" is read too):\n\n"
               "AGENT_REQUEST v1\n"
               "role: architect\n"
               "request_id: req-1\n"
               "needs:\n"
               "  - type: docdex.search\n"
               "    query: \"parse config\"\n"
               "    limit: 5\n"
               "  - type: file.read\n"
               "    path: \"src/config.py\"\n"
               "context:\n"
               "  summary: \"Find where the configuration is read\"\n\n"
               "role is one of librarian, architect, builder, critic, interpreter. The needs "
               "you can send:\n"
               "- file.read (path): a whole file.\n"
               "- file.list (root, pattern): files under root matching a glob such as "
               "\"**/*.py\".\n"
               "- docdex.search (query, limit): files ranked by relevance (BM25), each with "
               "doc_id, path, line and snippet; a file defining a symbol you name ranks first.\n"
               "- docdex.snippet (doc_id, window): the lines around a search hit.\n"
               "- docdex.open (path or doc_id; start_line and end_line, or window): a range of "
               "lines.\n"
               "- docdex.tree (maxDepth): the folders and files.\n"
               "- docdex.symbols (file): the definitions in a file, with their lines.\n"
               "- docdex.impact (file): which files import or include it (inbound) and what it "
               "imports (outbound).\n"
               "Every need is answered in one CODALI_RESPONSE v1; a need that cannot be "
               "answered is named in meta.warnings. Content may be cut to fit a budget; the cut "
               "is noted.\n\n"
               "## Changing files\n\n"
               "Change the repository with these command blocks; they run in the order written, "
               "and their results come in the next message.\n\n") +
           std::string(protocol::commands_text()) +
           "\n\n## Finishing\n\n"
           "When the task is complete and tested, send [DONE] with a summary. cocode then checks "
           "the repository as it stands (which files changed, the project's own tests). If the "
           "check fails, its reasons come back as a critic.result in a CODALI_RESPONSE: fix them "
           "and send [DONE] again. When it passes, your work is committed. Do not commit "
           "yourself.\n";
}

CodaliAgent::CodaliAgent(config::AgentConfig agent, Critic critic)
    : agent_(std::move(agent)), critic_(std::move(critic)) {}

int CodaliAgent::execute(const RunContext& context) {
    const config::ChatSettings& chat = *agent_.chat;
    const fs::path folder = context.run_folder;
    const fs::path own = folder / kCodaliDir;
    std::error_code ec;
    fs::create_directories(own, ec);
    if (ec) return fail(1, "cannot make " + own.string() + ": " + ec.message());

    auto model = make_model(agent_, context);
    if (!model) return fail(exit_code_of(model.error()), model.error().message);
    std::optional<Model> summariser;
    if (chat.summary_model && *chat.summary_model != agent_.model.value_or("")) {
        auto made = make_model(agent_, context, chat.summary_model);
        if (!made) return fail(exit_code_of(made.error()), made.error().message);
        summariser = std::move(made).value();
    }
    const fs::path root = fs::canonical(context.working_dir, ec);
    if (ec) return fail(1, "the worktree " + context.working_dir.string() + ": " + ec.message());

    // The index: without it (Xapian refused the folder), docdex needs answer with a warning.
    std::unique_ptr<index::WorktreeIndex> index;
    std::vector<std::string> index_warnings;
    if (auto opened = index::WorktreeIndex::open(folder / kIndexDir, root); opened) {
        index = std::move(opened).value();
        auto stats = index->update();
        if (!stats) {
            index_warnings.push_back("docdex_index_failed: " + stats.error().message);
            index.reset();
        } else {
            say("indexed " + std::to_string(stats->files) + " files (" +
                std::to_string(stats->indexed) + " read) in " +
                std::to_string(static_cast<long>(stats->milliseconds)) + " ms");
            if (!stats->warning.empty()) index_warnings.push_back(stats->warning);
        }
    } else {
        index_warnings.push_back("docdex_index_failed: " + opened.error().message);
    }
    // Said once here rather than by the update that first misses it: a restarted session,
    // whose index is built already, must say it too.
    auto about_ctags = [](const std::string& w) { return w.rfind("ctags_unavailable", 0) == 0; };
    if (auto ctags = index::ctags_version();
        !ctags && std::none_of(index_warnings.begin(), index_warnings.end(), about_ctags))
        index_warnings.push_back("ctags_unavailable: " + ctags.error().message);
    for (const auto& w : index_warnings) say("warning: " + w);

    // A restart resumes the conversation; a new session starts from the task.
    const fs::path session_path = own / kSessionFile;
    State s;
    if (fs::exists(session_path, ec)) {
        auto text = read_file(session_path);
        if (!text) return fail(1, text.error().message);
        auto loaded = parse_state(*text, session_path);
        if (!loaded) return fail(1, loaded.error().message);
        s = std::move(loaded).value();
        if (s.complete) {
            say("the session is complete already");
            return 0;
        }
        say("resuming the codali session at turn " + std::to_string(s.turns + 1));
    } else {
        s.task = context.prompt;
        if (index)
            s.task += "\n## The repository\n\n" + index->tree(2, 200) +
                      "\nAsk for what you need with AGENT_REQUEST v1.\n";
        s.messages = {{"system", codali_instructions()}, {"user", s.task}};
    }
    auto save = [&]() -> Result<void> {
        return write_file_atomic(session_path, json_dump(state_json(s), 2) + "\n", 0644,
                                 Durability::content);
    };
    if (auto saved = save(); !saved) return fail(1, saved.error().message);

    protocol::Executor executor(executor_options(agent_, context, root));
    NeedsContext needs{root, index.get(),
                       static_cast<std::size_t>(std::min<std::uint64_t>(
                           200'000, std::max<std::uint64_t>(4000, chat.context_window * 2)))};
    say("codali session over " + model->describe + ", context window " +
        std::to_string(chat.context_window) + " tokens");

    // The session ends without DONE: the reason on stderr and in output.md, exit 1.
    auto stop = [&](const std::string& why) {
        (void)save();
        (void)write_file_atomic(
            folder / "output.md",
            "The codali session ended without passing its check: " + why + "\n");
        return fail(1, why);
    };

    while (true) {
        if (s.turns >= chat.max_turns)
            return stop("the turn limit of " + std::to_string(chat.max_turns) +
                        " was reached without a passing DONE (max_turns)");
        if (s.tokens_used >= chat.token_budget)
            return stop("the token budget of " + std::to_string(chat.token_budget) +
                        " was spent without a passing DONE (" + std::to_string(s.tokens_used) +
                        " used; token_budget)");

        // History past 90 % of the window: older turns become a summary.
        const double estimate = static_cast<double>(characters(s.messages)) * s.tokens_per_char;
        // (The system message and the task are kept, and so are the last exchanges; there
        // must be at least one exchange before those to summarise.)
        if (estimate > kSummariseAt * static_cast<double>(chat.context_window) &&
            s.messages.size() >= 2 + 2 + kRecentMessages) {
            const std::size_t keep_from = s.messages.size() - kRecentMessages;
            std::string history;
            if (!s.summary.empty())
                history += "## Summary of the earlier session\n\n" + s.summary + "\n\n";
            for (std::size_t i = 2; i < keep_from; ++i)
                history += "### " + s.messages[i].role + "\n\n" + s.messages[i].content + "\n\n";
            // What the summary model can read: the newest part of the history.
            const std::size_t room = static_cast<std::size_t>(
                static_cast<double>(chat.context_window) * kSummariseAt / s.tokens_per_char);
            if (history.size() > room) history = history.substr(history.size() - room);
            say("--- history at ~" + std::to_string(static_cast<long>(estimate)) + " of " +
                std::to_string(chat.context_window) + " tokens: summarising " +
                std::to_string(keep_from - 2) + " messages");
            Model& m = summariser ? *summariser : *model;
            auto summary = m.client->complete(
                {{"system",
                  "You summarise the earlier part of a coding agent's session for the agent to "
                  "continue from it. Keep what it learned about the repository (files, symbols, "
                  "line numbers, how things connect), what it changed, what failed and why, and "
                  "what remains to do. Be concise; no preamble."},
                 {"user", history}},
                "summary " + std::to_string(s.summaries + 1));
            if (!summary) {
                (void)save();
                return fail(exit_code_of(summary.error()), summary.error().message);
            }
            s.tokens_used += summary->usage.total_tokens;
            ++s.summaries;
            s.summary = summary->content;
            const fs::path kept = own / ("summary-" + std::to_string(s.summaries) + ".md");
            if (auto written = write_file_atomic(kept, s.summary + "\n"); !written)
                return fail(1, "cannot keep the summary: " + written.error().message);
            std::vector<llm::Message> messages = {
                s.messages[0],
                {"user", s.task + "\n## Summary of the session so far\n\n" + s.summary + "\n"}};
            messages.insert(messages.end(), s.messages.begin() + static_cast<long>(keep_from),
                            s.messages.end());
            s.messages = std::move(messages);
            if (auto saved = save(); !saved) return fail(1, saved.error().message);
        }

        say("--- turn " + std::to_string(s.turns + 1) + ": asking the model");
        const std::size_t sent = characters(s.messages);
        auto reply = model->client->complete(s.messages, "turn " + std::to_string(s.turns + 1));
        if (!reply) {
            (void)save();
            return fail(exit_code_of(reply.error()), reply.error().message);
        }
        ++s.turns;
        s.tokens_used += reply->usage.total_tokens;
        if (reply->usage.reported && reply->usage.prompt_tokens > 0 && sent > 0)
            s.tokens_per_char =
                static_cast<double>(reply->usage.prompt_tokens) / static_cast<double>(sent);
        s.messages.push_back({"assistant", reply->content});

        // What the reply asks: envelopes answered, commands carried out, DONE judged.
        std::string answer;
        const auto found = protocol::find_agent_requests(reply->content);
        const auto commands = protocol::parse_inbox(without(reply->content, found));
        auto execution = executor.execute(commands);
        for (std::size_t i = 0; i < execution.results.size() && i < commands.size(); ++i) {
            const auto& c = commands[i];
            const bool edits = c.kind == protocol::CommandKind::create_file ||
                               c.kind == protocol::CommandKind::edit_file ||
                               c.kind == protocol::CommandKind::delete_file;
            if (edits && execution.results[i].success &&
                std::find(s.plan_targets.begin(), s.plan_targets.end(), c.path) ==
                    s.plan_targets.end())
                s.plan_targets.push_back(c.path);
        }
        if (!execution.results.empty()) {
            answer += "## Results of your commands\n\n";
            for (const auto& outcome : execution.results)
                answer += protocol::format_outcome(outcome);
            for (const auto& file : executor.read_requested(execution.read_requests)) {
                if (file.content)
                    answer += "\n--- " + file.path + " ---\n" + *file.content +
                              (file.content->empty() || file.content->back() == '\n' ? "" : "\n") +
                              "--- end " + file.path + " ---\n";
                else
                    answer += "\n--- " + file.path + ": " + file.note + " ---\n";
            }
            answer += "\n";
        }
        bool index_fresh = false;
        for (const auto& f : found) {
            auto request = protocol::parse_agent_request(f.text);
            protocol::CodaliResponse response;
            if (!request) {
                say("[FAILED] AGENT_REQUEST: " + request.error().message);
                response = malformed_request(f.text, request.error().message);
            } else {
                std::vector<std::string> warnings;
                if (index && !index_fresh && needs_index(*request)) {
                    // The model's edits since the last look are in what it is answered.
                    auto stats = index->update();
                    if (!stats)
                        warnings.push_back("docdex_index_stale: " + stats.error().message);
                    else if (!stats->warning.empty() &&
                             !(about_ctags(stats->warning) &&
                               std::any_of(index_warnings.begin(), index_warnings.end(),
                                           about_ctags)))
                        warnings.push_back(stats->warning);
                    index_fresh = true;
                }
                response = answer_request(*request, needs);
                response.warnings.insert(response.warnings.end(), warnings.begin(), warnings.end());
                response.warnings.insert(response.warnings.end(), index_warnings.begin(),
                                         index_warnings.end());
                say("[OK] AGENT_REQUEST " + request->request_id + ": " +
                    std::to_string(request->needs.size()) + " needs, " +
                    std::to_string(response.results.size()) + " results, " +
                    std::to_string(response.warnings.size()) + " warnings");
            }
            answer += protocol::render_codali_response(response, f.form) + "\n";
        }

        if (execution.done) {
            protocol::CriticResult verdict;
            verdict.pass = true;
            if (critic_ && chat.critic_rounds > 0) {
                say("--- DONE: the critic judges the worktree as it stands");
                auto judged = critic_(root, s.critic_rounds + 1);
                if (!judged) return stop("the critic could not judge: " + judged.error().message);
                verdict = std::move(judged).value();
                verdict.plan_targets = s.plan_targets;
            }
            if (verdict.pass) {
                std::string message = commit_subject(execution.summary, context.issue) + "\n\n";
                if (execution.summary.find('\n') + 1 < execution.summary.size())
                    message += execution.summary + "\n";
                message += std::to_string(s.turns) + " turns by cocode's codali agent";
                if (critic_ && chat.critic_rounds > 0)
                    message +=
                        ", the critic passing at round " + std::to_string(s.critic_rounds + 1);
                message += ".\n\n" + context.ready_marker + "\n";
                if (auto committed = commit_all(context, message); !committed)
                    return stop(committed.error().message);
                s.complete = true;
                if (auto saved = save(); !saved) return fail(1, saved.error().message);
                std::string output =
                    execution.summary.empty() ? "(no summary)\n" : execution.summary;
                if (output.back() != '\n') output += '\n';
                (void)write_file_atomic(folder / "output.md", output);
                say("DONE after " + std::to_string(s.turns) + " turns, " +
                    std::to_string(s.tokens_used) + " tokens; committed with the ready marker");
                return 0;
            }
            ++s.critic_rounds;
            std::string reasons;
            for (const auto& r : verdict.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
            say("[FAILED] critic round " + std::to_string(s.critic_rounds) + ": " + reasons);
            if (s.critic_rounds >= chat.critic_rounds) {
                // The work is kept on the branch, without the marker: it is not ready.
                (void)commit_all(context, commit_subject(execution.summary, context.issue) +
                                              "\n\nThe critic failed " +
                                              std::to_string(s.critic_rounds) +
                                              " times; not ready: " + reasons + "\n");
                return stop("the critic failed " + std::to_string(s.critic_rounds) +
                            " times (critic_rounds): " + reasons);
            }
            protocol::CodaliResponse critic;
            critic.request_id = "critic-" + std::to_string(s.critic_rounds);
            critic.results.push_back(protocol::critic_result_json(verdict));
            critic.warnings.push_back("critic_failed");
            answer += protocol::render_codali_response(critic, protocol::EnvelopeForm::yaml) +
                      "\nFix what the critic found, then send [DONE] again (" +
                      std::to_string(chat.critic_rounds - s.critic_rounds) +
                      " more critic rounds).\n";
        }
        if (answer.empty())
            answer =
                "Your answer held no AGENT_REQUEST v1 and no command. Ask for context with an "
                "AGENT_REQUEST v1, change files with the command blocks, or send [DONE] when "
                "the task is complete.\n";
        s.messages.push_back({"user", std::move(answer)});
        if (auto saved = save(); !saved) return fail(1, saved.error().message);
    }
}

}  // namespace cocode::agent
