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

namespace {

bool about_ctags(const std::string& warning) { return warning.rfind("ctags_unavailable", 0) == 0; }

// The worktree index, updated now, and what the model is told about it: without an index
// (Xapian refused the folder) docdex needs answer with a warning. Missing ctags is said once
// here rather than by the update that first misses it: a restarted session, whose index is
// built already, must say it too.
std::unique_ptr<index::WorktreeIndex> open_index(const fs::path& folder, const fs::path& root,
                                                 std::vector<std::string>& warnings) {
    std::unique_ptr<index::WorktreeIndex> index;
    if (auto opened = index::WorktreeIndex::open(folder / kIndexDir, root); opened) {
        index = std::move(opened).value();
        auto stats = index->update();
        if (!stats) {
            warnings.push_back("docdex_index_failed: " + stats.error().message);
            index.reset();
        } else {
            say("indexed " + std::to_string(stats->files) + " files (" +
                std::to_string(stats->indexed) + " read) in " +
                std::to_string(static_cast<long>(stats->milliseconds)) + " ms");
            if (!stats->warning.empty()) warnings.push_back(stats->warning);
        }
    } else {
        warnings.push_back("docdex_index_failed: " + opened.error().message);
    }
    if (auto ctags = index::ctags_version();
        !ctags && std::none_of(warnings.begin(), warnings.end(), about_ctags))
        warnings.push_back("ctags_unavailable: " + ctags.error().message);
    for (const auto& w : warnings) say("warning: " + w);
    return index;
}

// One codali session, turn after turn, until a passing DONE or a limit. Each method is one
// thing a turn does; a method that returns an exit code ends the session with it.
class Session {
  public:
    Session(const config::AgentConfig& agent, const Critic& critic, const RunContext& context,
            fs::path root, Model model, std::optional<Model> summariser,
            std::unique_ptr<index::WorktreeIndex> index, std::vector<std::string> index_warnings,
            State state)
        : chat_(*agent.chat),
          critic_(critic),
          context_(context),
          own_(context.run_folder / kCodaliDir),
          root_(std::move(root)),
          model_(std::move(model)),
          summariser_(std::move(summariser)),
          index_(std::move(index)),
          index_warnings_(std::move(index_warnings)),
          s_(std::move(state)),
          executor_(executor_options(agent, context, root_)),
          needs_{root_, index_.get(),
                 static_cast<std::size_t>(std::min<std::uint64_t>(
                     200'000, std::max<std::uint64_t>(4000, chat_.context_window * 2)))} {}

    int run() {
        if (auto saved = save(); !saved) return fail(1, saved.error().message);
        say("codali session over " + model_.describe + ", context window " +
            std::to_string(chat_.context_window) + " tokens");
        while (true) {
            if (s_.turns >= chat_.max_turns)
                return stop("the turn limit of " + std::to_string(chat_.max_turns) +
                            " was reached without a passing DONE (max_turns)");
            if (s_.tokens_used >= chat_.token_budget)
                return stop("the token budget of " + std::to_string(chat_.token_budget) +
                            " was spent without a passing DONE (" + std::to_string(s_.tokens_used) +
                            " used; token_budget)");
            if (auto ended = summarise_if_due()) return *ended;
            if (auto ended = take_turn()) return *ended;
        }
    }

  private:
    Result<void> save() {
        return write_file_atomic(own_ / kSessionFile, json_dump(state_json(s_), 2) + "\n", 0644,
                                 Durability::content);
    }

    // The session ends without DONE: the reason on stderr and in output.md, exit 1.
    int stop(const std::string& why) {
        (void)save();
        (void)write_file_atomic(
            context_.run_folder / "output.md",
            "The codali session ended without passing its check: " + why + "\n");
        return fail(1, why);
    }

    // History past 90 % of the window: the turns between the task and the last exchanges
    // become a summary (with any earlier one), kept as codali/summary-N.md.
    std::optional<int> summarise_if_due() {
        const double estimate = static_cast<double>(characters(s_.messages)) * s_.tokens_per_char;
        // There must be at least one exchange before the kept ones to summarise.
        if (estimate <= kSummariseAt * static_cast<double>(chat_.context_window) ||
            s_.messages.size() < 2 + 2 + kRecentMessages)
            return std::nullopt;
        const std::size_t keep_from = s_.messages.size() - kRecentMessages;
        std::string history;
        if (!s_.summary.empty())
            history += "## Summary of the earlier session\n\n" + s_.summary + "\n\n";
        for (std::size_t i = 2; i < keep_from; ++i)
            history += "### " + s_.messages[i].role + "\n\n" + s_.messages[i].content + "\n\n";
        // What the summary model can read: the newest part of the history.
        const std::size_t room = static_cast<std::size_t>(
            static_cast<double>(chat_.context_window) * kSummariseAt / s_.tokens_per_char);
        if (history.size() > room) history = history.substr(history.size() - room);
        say("--- history at ~" + std::to_string(static_cast<long>(estimate)) + " of " +
            std::to_string(chat_.context_window) + " tokens: summarising " +
            std::to_string(keep_from - 2) + " messages");
        Model& m = summariser_ ? *summariser_ : model_;
        auto summary = m.client->complete(
            {{"system",
              "You summarise the earlier part of a coding agent's session for the agent to "
              "continue from it. Keep what it learned about the repository (files, symbols, "
              "line numbers, how things connect), what it changed, what failed and why, and "
              "what remains to do. Be concise; no preamble."},
             {"user", history}},
            "summary " + std::to_string(s_.summaries + 1));
        if (!summary) {
            (void)save();
            return fail(exit_code_of(summary.error()), summary.error().message);
        }
        s_.tokens_used += summary->usage.total_tokens;
        ++s_.summaries;
        s_.summary = summary->content;
        const fs::path kept = own_ / ("summary-" + std::to_string(s_.summaries) + ".md");
        if (auto written = write_file_atomic(kept, s_.summary + "\n"); !written)
            return fail(1, "cannot keep the summary: " + written.error().message);
        std::vector<llm::Message> messages = {
            s_.messages[0],
            {"user", s_.task + "\n## Summary of the session so far\n\n" + s_.summary + "\n"}};
        messages.insert(messages.end(), s_.messages.begin() + static_cast<long>(keep_from),
                        s_.messages.end());
        s_.messages = std::move(messages);
        if (auto saved = save(); !saved) return fail(1, saved.error().message);
        return std::nullopt;
    }

    // One turn: the model asked, its commands carried out, its envelopes answered, its DONE
    // judged; the answer goes back as the next user message.
    std::optional<int> take_turn() {
        say("--- turn " + std::to_string(s_.turns + 1) + ": asking the model");
        const std::size_t sent = characters(s_.messages);
        auto reply = model_.client->complete(s_.messages, "turn " + std::to_string(s_.turns + 1));
        if (!reply) {
            (void)save();
            return fail(exit_code_of(reply.error()), reply.error().message);
        }
        ++s_.turns;
        s_.tokens_used += reply->usage.total_tokens;
        if (reply->usage.reported && reply->usage.prompt_tokens > 0 && sent > 0)
            s_.tokens_per_char =
                static_cast<double>(reply->usage.prompt_tokens) / static_cast<double>(sent);
        s_.messages.push_back({"assistant", reply->content});

        const auto found = protocol::find_agent_requests(reply->content);
        const auto commands = protocol::parse_inbox(without(reply->content, found));
        auto execution = executor_.execute(commands);
        std::string answer = answer_commands(commands, execution) + answer_envelopes(found);
        if (execution.done)
            if (auto ended = judge_done(execution, answer)) return ended;
        if (answer.empty())
            answer =
                "Your answer held no AGENT_REQUEST v1 and no command. Ask for context with an "
                "AGENT_REQUEST v1, change files with the command blocks, or send [DONE] when "
                "the task is complete.\n";
        s_.messages.push_back({"user", std::move(answer)});
        if (auto saved = save(); !saved) return fail(1, saved.error().message);
        return std::nullopt;
    }

    // The commands' results and the files they asked to read; the files they changed become
    // the critic's plan targets.
    std::string answer_commands(const std::vector<protocol::Command>& commands,
                                const protocol::Execution& execution) {
        for (std::size_t i = 0; i < execution.results.size() && i < commands.size(); ++i) {
            const auto& c = commands[i];
            const bool edits = c.kind == protocol::CommandKind::create_file ||
                               c.kind == protocol::CommandKind::edit_file ||
                               c.kind == protocol::CommandKind::delete_file;
            if (edits && execution.results[i].success &&
                std::find(s_.plan_targets.begin(), s_.plan_targets.end(), c.path) ==
                    s_.plan_targets.end())
                s_.plan_targets.push_back(c.path);
        }
        if (execution.results.empty()) return {};
        std::string answer = "## Results of your commands\n\n";
        for (const auto& outcome : execution.results) answer += protocol::format_outcome(outcome);
        for (const auto& file : executor_.read_requested(execution.read_requests)) {
            if (file.content)
                answer += "\n--- " + file.path + " ---\n" + *file.content +
                          (file.content->empty() || file.content->back() == '\n' ? "" : "\n") +
                          "--- end " + file.path + " ---\n";
            else
                answer += "\n--- " + file.path + ": " + file.note + " ---\n";
        }
        return answer + "\n";
    }

    // Each envelope answered in the form it came in, after one index update when any need
    // reads the index (the model's edits since the last look are in what it is answered).
    std::string answer_envelopes(const std::vector<protocol::FoundRequest>& found) {
        std::string answer;
        bool index_fresh = false;
        for (const auto& f : found) {
            auto request = protocol::parse_agent_request(f.text);
            protocol::CodaliResponse response;
            if (!request) {
                say("[FAILED] AGENT_REQUEST: " + request.error().message);
                response = malformed_request(f.text, request.error().message);
            } else {
                std::vector<std::string> warnings;
                if (index_ && !index_fresh && needs_index(*request)) {
                    auto stats = index_->update();
                    if (!stats)
                        warnings.push_back("docdex_index_stale: " + stats.error().message);
                    else if (!stats->warning.empty() &&
                             !(about_ctags(stats->warning) &&
                               std::any_of(index_warnings_.begin(), index_warnings_.end(),
                                           about_ctags)))
                        warnings.push_back(stats->warning);
                    index_fresh = true;
                }
                response = answer_request(*request, needs_);
                response.warnings.insert(response.warnings.end(), warnings.begin(), warnings.end());
                response.warnings.insert(response.warnings.end(), index_warnings_.begin(),
                                         index_warnings_.end());
                say("[OK] AGENT_REQUEST " + request->request_id + ": " +
                    std::to_string(request->needs.size()) + " needs, " +
                    std::to_string(response.results.size()) + " results, " +
                    std::to_string(response.warnings.size()) + " warnings");
            }
            answer += protocol::render_codali_response(response, f.form) + "\n";
        }
        return answer;
    }

    // DONE: the critic judges the worktree as it stands. A PASS commits with the marker and
    // ends the session; a FAIL goes back to the model in `answer`, until critic_rounds, when
    // the work is kept on the branch without the marker and the session ends.
    std::optional<int> judge_done(const protocol::Execution& execution, std::string& answer) {
        protocol::CriticResult verdict;
        verdict.pass = true;
        const bool criticised = critic_ && chat_.critic_rounds > 0;
        if (criticised) {
            say("--- DONE: the critic judges the worktree as it stands");
            auto judged = critic_(root_, s_.critic_rounds + 1);
            if (!judged) return stop("the critic could not judge: " + judged.error().message);
            verdict = std::move(judged).value();
            verdict.plan_targets = s_.plan_targets;
        }
        if (verdict.pass) return commit_ready(execution, criticised);
        ++s_.critic_rounds;
        std::string reasons;
        for (const auto& r : verdict.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
        say("[FAILED] critic round " + std::to_string(s_.critic_rounds) + ": " + reasons);
        if (s_.critic_rounds >= chat_.critic_rounds) {
            (void)commit_all(context_, commit_subject(execution.summary, context_.issue) +
                                           "\n\nThe critic failed " +
                                           std::to_string(s_.critic_rounds) +
                                           " times; not ready: " + reasons + "\n");
            return stop("the critic failed " + std::to_string(s_.critic_rounds) +
                        " times (critic_rounds): " + reasons);
        }
        protocol::CodaliResponse critic;
        critic.request_id = "critic-" + std::to_string(s_.critic_rounds);
        critic.results.push_back(protocol::critic_result_json(verdict));
        critic.warnings.push_back("critic_failed");
        answer += protocol::render_codali_response(critic, protocol::EnvelopeForm::yaml) +
                  "\nFix what the critic found, then send [DONE] again (" +
                  std::to_string(chat_.critic_rounds - s_.critic_rounds) +
                  " more critic rounds).\n";
        return std::nullopt;
    }

    // The passing work committed with the ready marker; output.md gets the summary.
    int commit_ready(const protocol::Execution& execution, bool criticised) {
        std::string message = commit_subject(execution.summary, context_.issue) + "\n\n";
        if (execution.summary.find('\n') + 1 < execution.summary.size())
            message += execution.summary + "\n";
        message += std::to_string(s_.turns) + " turns by cocode's codali agent";
        if (criticised)
            message += ", the critic passing at round " + std::to_string(s_.critic_rounds + 1);
        message += ".\n\n" + context_.ready_marker + "\n";
        if (auto committed = commit_all(context_, message); !committed)
            return stop(committed.error().message);
        s_.complete = true;
        if (auto saved = save(); !saved) return fail(1, saved.error().message);
        std::string output = execution.summary.empty() ? "(no summary)\n" : execution.summary;
        if (output.back() != '\n') output += '\n';
        (void)write_file_atomic(context_.run_folder / "output.md", output);
        say("DONE after " + std::to_string(s_.turns) + " turns, " + std::to_string(s_.tokens_used) +
            " tokens; committed with the ready marker");
        return 0;
    }

    const config::ChatSettings& chat_;
    const Critic& critic_;
    const RunContext& context_;
    const fs::path own_;
    const fs::path root_;
    Model model_;
    std::optional<Model> summariser_;
    std::unique_ptr<index::WorktreeIndex> index_;
    std::vector<std::string> index_warnings_;
    State s_;
    protocol::Executor executor_;
    NeedsContext needs_;
};

}  // namespace

int CodaliAgent::execute(const RunContext& context) {
    const config::ChatSettings& chat = *agent_.chat;
    const fs::path own = context.run_folder / kCodaliDir;
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
    fs::path root = fs::canonical(context.working_dir, ec);
    if (ec) return fail(1, "the worktree " + context.working_dir.string() + ": " + ec.message());
    std::vector<std::string> index_warnings;
    auto index = open_index(context.run_folder, root, index_warnings);

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
    Session session(agent_, critic_, context, std::move(root), std::move(model).value(),
                    std::move(summariser), std::move(index), std::move(index_warnings),
                    std::move(s));
    return session.run();
}

}  // namespace cocode::agent
