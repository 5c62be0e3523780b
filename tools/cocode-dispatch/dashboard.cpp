#include "dashboard.h"

#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "agent/usage.h"
#include "check/report.h"
#include "check/run_check.h"
#include "check/work_plan.h"
#include "common/executables.h"
#include "core/files.h"
#include "core/json_text.h"
#include "git/cli.h"
#include "git/repository.h"
#include "net/proxy.h"
#include "proc/command.h"
#include "scale/watch.h"
#include "scale/webhook.h"
#include "ui/assets.h"
#include "ui/views.h"
#include "ui/web.h"
#include "views.h"

namespace cocode::dispatch_cli {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kShownText = 512 * 1024;  // of a diff, a log tail, a verdict
constexpr auto kHeartbeat = 20s;                // a comment down an idle stream
constexpr auto kSettle = 40ms;                  // changes in one burst make one event

// A text file of the run as the page shows it: its end, when it is long.
std::string text_of(const fs::path& file) { return read_file_tail(file, kShownText); }

// JSON, as cpp-httplib does not compress it: its brotli at full quality takes 50 ms for the
// list of a thousand runs that takes 2 ms to send whole (a proxy in front may compress).
constexpr char kJson[] = "application/json; charset=utf-8";

void send_json(httplib::Response& res, const json& body, int status = 200) {
    res.status = status;
    res.set_content(json_dump(body), kJson);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
    send_json(res, {{"error", message}}, status);
}

// Where the run's verdict was published (ui/views.h decides which links are shown).
json links_of(const fs::path& folder, const std::string& project) {
    auto text = read_file_no_follow(run::RunFiles{folder}.events(), 64u << 20);
    return text ? ui::published_links(*text, project) : json::object();
}

// What the races show of a run (its page asks for the rest).
json list_row(const json& row) {
    json out = json::object();
    for (const char* key :
         {"run_id", "issue", "issue_title", "agent", "round", "plan_round", "status", "reason",
          "start_time", "end_time", "commits", "ready_commit", "exit_code", "verdict", "checking",
          "tokens", "cost_usd", "branch", "links"})
        if (row.contains(key)) out[key] = row[key];
    return out;
}

}  // namespace

struct Dashboard::State {
    Workspace ws;
    DashboardOptions options;
    std::string project;                  // owner/name
    std::optional<git::Repository> repo;  // used under `mutex` only (libgit2 is not shared)

    std::mutex mutex;
    std::condition_variable changed;
    std::uint64_t version = 0;  // bumped for every row that changed
    struct Entry {
        json row;
        std::string text;  // the row as the list and its events send it (list_row), dumped once
        std::uint64_t version = 0;
    };
    std::map<std::string, Entry> rows;             // run id → its row as `status --json` has it
    std::map<std::string, std::uint64_t> gone;     // run id → the version it went in
    std::set<std::string> dirty;                   // folders changed since their rows were made
    std::map<std::string, std::uint64_t> touched;  // folder → changes seen (log streams wait on it)
    int subscribers = 0;
    bool closing = false;

    std::optional<ui::FolderWatch> watch;
    std::thread watcher;

    State(Workspace w, DashboardOptions o) : ws(std::move(w)), options(std::move(o)) {}

    // The row of one run now, or nullopt when its folder is gone. Under `mutex`.
    std::optional<json> row_of(const std::string& id) {
        const fs::path folder = ws.runs_dir() / id;
        auto info = run::read_run_info(folder);
        if (!info) return std::nullopt;
        run::RunRecord r = run::record_from(*info, folder);
        json row =
            run_row(repo ? &*repo : nullptr, r, agent::usage_of_run(folder, ws.config.pricing));
        row["links"] = links_of(folder, project);
        return row;
    }

    // Rows for the folders changed since they were made. Under `mutex`.
    void refresh() {
        if (dirty.empty()) return;
        for (const auto& id : dirty) {
            auto row = row_of(id);
            if (!row) {
                if (rows.erase(id)) gone[id] = ++version;
                continue;
            }
            auto& entry = rows[id];
            if (entry.row == *row) continue;
            std::string text = json_dump(list_row(*row));
            entry = {std::move(*row), std::move(text), ++version};
            gone.erase(id);
        }
        dirty.clear();
        changed.notify_all();
    }

    void load_all() {
        std::lock_guard lock(mutex);
        std::error_code ec;
        for (const auto& entry : list_folder(ws.runs_dir(), ec))
            if (entry.is_directory) dirty.insert(entry.path.filename().string());
        refresh();
    }

    // Runs whose supervisor died without a word are ended (crashed), as `status` ends them;
    // the rewrite reaches the rows through the folder watch.
    void reconcile_active() {
        std::vector<std::string> active;
        {
            std::lock_guard lock(mutex);
            for (const auto& [id, entry] : rows) {
                const std::string status = json_value(entry.row, "status", std::string());
                if (status == "running" || status == "queued") active.push_back(id);
            }
        }
        for (const auto& id : active) {
            const fs::path folder = ws.runs_dir() / id;
            if (auto info = run::read_run_info(folder)) {
                auto record = run::record_from(*info, folder);
                (void)run::reconcile(record);
            }
        }
    }

    void watch_loop() {
        while (true) {
            auto names = watch->wait(kHeartbeat);
            {
                std::lock_guard lock(mutex);
                if (closing) return;
            }
            if (names.empty()) continue;
            // The rest of the burst (an atomic write is a create, a write and a rename).
            for (auto start = std::chrono::steady_clock::now();
                 std::chrono::steady_clock::now() - start < 4 * kSettle;) {
                auto more = watch->wait(kSettle);
                if (more.empty()) break;
                names.insert(more.begin(), more.end());
            }
            std::lock_guard lock(mutex);
            for (const auto& n : names) {
                dirty.insert(n);
                ++touched[n];
            }
            // Nobody watching: the rows are made when somebody asks.
            if (subscribers > 0) refresh();
            changed.notify_all();
        }
    }

    // The list, its rows as dumped when they changed: a thousand runs answer in a few ms.
    std::string snapshot() {
        std::lock_guard lock(mutex);
        refresh();
        std::string out = json_dump(
            json{{"version", version}, {"read_only", options.read_only}, {"project", project}});
        out.pop_back();  // the closing brace
        out += ",\"runs\":[";
        bool first = true;
        for (const auto& [id, entry] : rows) {
            if (!first) out += ',';
            first = false;
            out += entry.text;
        }
        out += "]}";
        return out;
    }
};

Dashboard::Dashboard(Workspace ws, DashboardOptions options)
    : state_(std::make_unique<State>(std::move(ws), std::move(options))) {
    State& s = *state_;
    if (auto opened = git::Repository::open(s.ws.root)) s.repo.emplace(std::move(*opened));
    s.project = s.ws.project_id();
    s.watch.emplace(ui::FolderWatch::open(s.ws.runs_dir()).value_or_throw());
    s.load_all();
    s.watcher = std::thread([&s] { s.watch_loop(); });
}

Dashboard::~Dashboard() { close(); }

void Dashboard::close() {
    State& s = *state_;
    {
        std::lock_guard lock(s.mutex);
        if (s.closing) return;
        s.closing = true;
        s.changed.notify_all();
    }
    s.watch->wake();
    if (s.watcher.joinable()) s.watcher.join();
}

namespace {

// A run's page: its row, verdict, diff, egress, rounds, plan and what it was given.
json run_detail(Dashboard::State& s, const std::string& id) {
    const fs::path folder = s.ws.runs_dir() / id;
    auto info = run::read_run_info(folder);
    if (!info) return nullptr;
    const run::RunRecord r = run::record_from(*info, folder);
    json out;
    {
        std::lock_guard lock(s.mutex);
        out["row"] = s.row_of(id).value_or(json(nullptr));
    }
    const run::RunFiles files{folder};
    out["issue_body"] = text_of(files.issue_body());
    out["feedback"] = text_of(files.feedback());
    out["output"] = text_of(files.output());
    if (auto verdict = check::recorded_verdict(folder)) {
        out["check_md"] = verdict->plan_round ? check::render_plan_markdown(*verdict)
                                              : check::render_markdown(*verdict);
        out["pass"] = verdict->pass;
        // What the page draws its verdict from: the items' text, never the Markdown's markup.
        json checks = json::array();
        for (const auto& item : verdict->checks)
            checks.push_back({{"name", item.name},
                              {"result", check::outcome_name(item.outcome)},
                              {"reason", item.reason}});
        out["checks"] = std::move(checks);
        out["first_failure"] = check::first_failure(*verdict);
        if (verdict->plan_round && verdict->plan && verdict->pass &&
            verdict->plan_rejected_by.empty())
            out["plan_hash"] = verdict->plan->hash;
        out["plan_text"] = verdict->plan_text;
    }
    // What the pull request carries: the base to the branch's head (or its READY commit once
    // the branch is gone). The base and the branch are the seal's (run-info is the agent's to
    // rewrite), and what goes to git is a full object id, after --end-of-options: nothing
    // there reads as an option (`--output=FILE` would write a file).
    auto seal = run::read_seal(s.ws.root, id);
    const bool sealed = seal && *seal;
    const std::string base = sealed ? (*seal)->base_commit : std::string();
    std::string head;
    if (sealed && !(*seal)->branch.empty())
        if (auto at = git::git_line(s.ws.root, {"rev-parse", "--verify", "-q", "--end-of-options",
                                                "refs/heads/" + (*seal)->branch + "^{commit}"}))
            head = *at;
    if (const auto range = ui::diff_range(base, head, r.ready_commit, git::is_object_id))
        if (auto diff = git::git_output(s.ws.root,
                                        {"diff", "--no-color", "--no-ext-diff", "--stat", "--patch",
                                         "--end-of-options", range->base, range->head, "--"})) {
            std::string text = std::move(*diff);
            const bool cut = text.size() > kShownText;
            if (cut) text.resize(kShownText);
            out["diff"] = text;
            out["diff_cut"] = cut;
        }
    json egress = json::array();
    for (const auto& e : net::read_egress(folder / "egress.jsonl"))
        egress.push_back(net::egress_json(e));
    out["egress"] = egress;
    // Its rounds: every run on the same branch, in order.
    json rounds = json::array();
    {
        std::lock_guard lock(s.mutex);
        for (const auto& [other, entry] : s.rows)
            if (json_value(entry.row, "branch", std::string()) == r.branch && !r.branch.empty())
                rounds.push_back({{"run_id", other},
                                  {"round", json_value(entry.row, "round", 1)},
                                  {"plan_round", json_value(entry.row, "plan_round", false)},
                                  {"status", json_value(entry.row, "status", std::string())},
                                  {"verdict", entry.row.value("verdict", json(nullptr))}});
    }
    out["rounds"] = rounds;
    return out;
}

json queue_json(const Workspace& ws) {
    json out = {{"watch", json::array()}, {"deliveries", 0}};
    if (auto text = read_file(ws.root / scale::kWatchDir / "state.json")) {
        const json state = json::parse(*text, nullptr, false);
        for (const auto& e : json_value(state, "issues", json::array())) {
            if (!e.is_object()) continue;
            out["watch"].push_back({{"issue", json_value(e, "issue", 0L)},
                                    {"phase", json_value(e, "phase", std::string())},
                                    {"kind", json_value(e, "kind", std::string())},
                                    {"agents", json_value(e, "agents", json::array())},
                                    {"runs", json_value(e, "runs", json::array())},
                                    {"by", json_value(e, "by", std::string())},
                                    {"updated_at", json_value(e, "updated_at", std::string())}});
        }
    }
    std::error_code ec;
    if (fs::is_directory(ws.root / scale::kServeDir, ec))
        if (auto inbox = scale::Inbox::open(ws.root / scale::kServeDir))
            out["deliveries"] = (*inbox)->pending().size();
    return out;
}

// `cocode-dispatch ARGS…` in the repository, as a person would type it: the action does what
// the command does, and is recorded where the command records it.
json run_self(const Workspace& ws, std::vector<std::string> args) {
    args.insert(args.begin(), tool::self_executable("cocode-dispatch").string());
    CommandOptions options;
    options.cwd = ws.root;
    options.deadline = 120s;
    auto done = run_command(args, options);
    if (!done) return {{"ok", false}, {"error", done.error().message}};
    return {{"ok", done->exit_code == 0},
            {"exit_code", done->exit_code},
            {"out", done->out},
            {"error", first_line(done->err)}};
}

using Request = httplib::Request;
using Response = httplib::Response;

// Where a stream resumes: the Last-Event-ID header, else `param`; nullopt when it is no number.
std::optional<std::uint64_t> resume_point(const Request& req, const std::string& param) {
    std::string from = req.get_header_value("Last-Event-ID");
    if (from.empty()) from = req.get_param_value(param);
    if (from.empty()) return 0;
    if (from.find_first_not_of("0123456789") != std::string::npos || from.size() > 19)
        return std::nullopt;
    return std::stoull(from);
}

// Where a log is read from when the page names no offset: its last MiB, from a line's start
// (an agent may write a gigabyte; `logs` has it all).
std::uint64_t tail_start(const fs::path& file) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec || size <= 2 * kShownText) return 0;
    std::ifstream in(file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(size - 2 * kShownText));
    std::string cut;
    std::getline(in, cut);
    return in ? static_cast<std::uint64_t>(in.tellg()) : 0;
}

// The run a request names (its first match), or nullopt with the 404 answered.
std::optional<run::RunRecord> named_run(Dashboard::State& s, const Request& req, Response& res) {
    const std::string id = req.matches[1];
    if (ui::safe_run_id(id))
        if (auto info = run::read_run_info(s.ws.runs_dir() / id))
            return run::record_from(*info, s.ws.runs_dir() / id);
    send_error(res, 404, "no run " + id);
    return std::nullopt;
}

json body_of(const Request& req) {
    json body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    return body.is_object() ? body : json::object();
}

// Rows as they change, from the version the page last saw.
void stream_rows(Dashboard::State& s, const Request& req, Response& res) {
    const auto since = resume_point(req, "since");
    if (!since) return send_error(res, 400, "since: expected the id of an event");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream", [&s, seen = *since](std::size_t, httplib::DataSink& sink) mutable {
            std::unique_lock lock(s.mutex);
            ++s.subscribers;
            s.refresh();
            std::string out;
            // A stream older than this server's first row: the page reloads the list.
            if (seen > s.version) {
                out = ui::sse_event("reset", "{}");
                seen = s.version;
            }
            while (!s.closing) {
                for (const auto& [id, entry] : s.rows)
                    if (entry.version > seen)
                        out += ui::sse_event("run", entry.text, std::to_string(entry.version));
                for (const auto& [id, at] : s.gone)
                    if (at > seen)
                        out += ui::sse_event("gone", json_dump(json{{"run_id", id}}),
                                             std::to_string(at));
                if (out.empty() && seen == 0)
                    out = ui::sse_event("hello", "{}", std::to_string(s.version));
                seen = s.version;
                lock.unlock();
                const bool alive = out.empty() || sink.write(out.data(), out.size());
                out.clear();
                lock.lock();
                if (!alive) break;
                if (!s.changed.wait_for(lock, kHeartbeat,
                                        [&] { return s.closing || s.version > seen; }))
                    out = ": idle\n\n";
            }
            --s.subscribers;
            lock.unlock();
            sink.done();
            return true;
        });
}

// The agent's output, rendered as `logs` renders it, from a byte offset, tailing live until the
// run has ended; each event's id is the offset to resume from.
void stream_log(Dashboard::State& s, const Request& req, Response& res) {
    const auto run = named_run(s, req, res);
    if (!run) return;
    const auto from = resume_point(req, "from");
    if (!from) return send_error(res, 400, "from: expected a byte offset");
    const bool err = req.get_param_value("stream") == "stderr";
    const run::RunFiles files{run->folder};
    const bool resumed = req.has_param("from") || req.has_header("Last-Event-ID");
    const std::uint64_t start =
        resumed ? *from : tail_start(err ? files.stderr_file() : files.stdout_file());
    auto reader = std::make_shared<LogReader>(files, err, start);
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream", [&s, id = run->run_id, folder = run->folder, reader, start](
                                 std::size_t, httplib::DataSink& sink) {
            auto send = [&](const std::vector<std::string>& lines, const char* event) {
                if (lines.empty() && std::string_view(event) == "lines") return true;
                const std::string out =
                    ui::sse_event(event, json_dump(json(lines)), std::to_string(reader->offset()));
                return sink.write(out.data(), out.size());
            };
            if (start > 0) {
                const std::string skipped = ui::sse_event(
                    "skipped", json_dump(json{{"bytes", start}}), std::to_string(start));
                if (!sink.write(skipped.data(), skipped.size())) return false;
            }
            bool held = false;  // the renderer may hold text back for what follows
            while (true) {
                std::uint64_t seen_touch = 0;
                {
                    std::lock_guard lock(s.mutex);
                    if (s.closing) break;
                    seen_touch = s.touched[id];
                }
                auto lines = reader->read();
                held = held || !lines.empty();
                if (!send(lines, "lines")) return false;
                auto info = run::read_run_info(folder);
                if (!info || !run::is_active(run::record_from(*info, folder).status)) {
                    if (!send(reader->read(), "lines") || !send(reader->rest(), "lines"))
                        return false;
                    send({}, "end");
                    break;
                }
                std::unique_lock lock(s.mutex);
                const bool woke = s.changed.wait_for(lock, held ? 500ms : kHeartbeat, [&] {
                    return s.closing || s.touched[id] != seen_touch;
                });
                lock.unlock();
                if (woke) continue;
                const bool alive =
                    held ? send(reader->flush(), "lines") : sink.write(": idle\n\n", 8);
                held = false;
                if (!alive) return false;
            }
            sink.done();
            return true;
        });
}

void get_report(Dashboard::State& s, const Request& req, Response& res) {
    ReportArgs args;
    args.since = req.has_param("since") ? req.get_param_value("since") : "30d";
    args.by = req.has_param("by") ? req.get_param_value("by") : "agent,kind";
    args.runs = req.has_param("source") ? req.get_param_value("source") : "live";
    if (args.runs != "live" && args.runs != "replay" && args.runs != "all")
        return send_error(res, 400, "source: expected live, replay or all");
    try {
        send_json(res, report_json(s.ws, args));
    } catch (const Failure& f) {
        send_error(res, 400, f.error().message);
    }
}

// The actions: what the CLI's commands do, recorded as they record it.
void post_stop(Dashboard::State& s, const Request& req, Response& res) {
    const auto run = named_run(s, req, res);
    if (!run) return;
    auto asked = request_stop(s.ws, *run, "dashboard");
    if (!asked) return send_error(res, 500, asked.error().message);
    if (!*asked) return send_error(res, 409, "run " + run->run_id + " has already ended");
    send_json(res, {{"ok", true}, {"stopping", run->run_id}}, 202);
}

void answer_with(const json& done, Response& res) {
    send_json(res, done, done.value("ok", false) ? 202 : 409);
}

void post_again(Dashboard::State& s, const Request& req, Response& res) {
    const auto run = named_run(s, req, res);
    if (!run) return;
    std::string message = json_value(body_of(req), "message", std::string());
    if (message.empty()) message = "Run again (asked on the dashboard).";
    answer_with(run_self(s.ws, {"continue", run->run_id, "--detach", "-m", message}), res);
}

void post_plan(Dashboard::State& s, const Request& req, Response& res) {
    const auto run = named_run(s, req, res);
    if (!run) return;
    const json body = body_of(req);
    const auto verb = check::parse_plan_verb(json_value(body, "verb", std::string()));
    const std::string message = json_value(body, "message", std::string());
    // As the plan's verdict tells a person to type it: the issue, and the pair's agent.
    std::vector<std::string> args = {"continue", std::to_string(run->issue), "--agent", run->agent,
                                     "--detach"};
    if (verb == check::PlanVerb::approve) {
        const std::string hash = json_value(body, "hash", std::string());
        if (hash.empty()) return send_error(res, 400, "approve: the plan's hash is missing");
        args.insert(args.end(), {"--approve", "--hash", hash});
    } else if (verb == check::PlanVerb::revise) {
        if (message.empty()) return send_error(res, 400, "revise: say what to change");
        args.insert(args.end(), {"--revise", "-m", message});
    } else if (verb == check::PlanVerb::reject) {
        args.push_back("--reject");
    } else {
        return send_error(res, 400, "verb: expected approve, revise or reject");
    }
    answer_with(run_self(s.ws, args), res);
}

}  // namespace

void Dashboard::mount(httplib::Server& server) {
    State& s = *state_;
    // Each answer in one go: no 40 ms held back by Nagle against a delayed ACK.
    server.set_tcp_nodelay(true);
    // cpp-httplib waits for a kept-alive connection's next request by polling it every few
    // ms: a second of that after a page's last request, not five, and then no CPU at all.
    server.set_keep_alive_timeout(1);
    const std::string p = s.options.prefix;
    const std::string api = p + "/api/";
    server.set_pre_routing_handler([&s, api](const Request& req, Response& res) {
        for (const auto& [name, value] : ui::security_headers()) res.set_header(name, value);
        if (req.path.rfind(api, 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
        res.set_header("Cache-Control", "no-store");
        if (ui::bearer_matches(req.get_header_value("Authorization"), s.options.token))
            return httplib::Server::HandlerResponse::Unhandled;
        res.set_header("WWW-Authenticate", "Bearer");
        send_error(res, 401, "the dashboard's token is missing or wrong");
        return httplib::Server::HandlerResponse::Handled;
    });
    // The page: index.html at the root, the rest by name.
    for (const auto& asset : ui::assets()) {
        const std::string path =
            p + "/" + (asset.name == "index.html" ? "" : std::string(asset.name));
        server.Get(path, [&asset](const Request&, Response& res) {
            // The script as application/javascript, which cpp-httplib does not compress (its
            // brotli spends 35 ms on it each time); the small rest as it does.
            std::string type(asset.type);
            if (type != "image/svg+xml") type += "; charset=utf-8";
            res.set_header("Cache-Control", "no-cache");
            res.set_content(std::string(asset.body), type.c_str());
        });
    }
    if (!p.empty())
        server.Get(p, [p](const Request&, Response& res) { res.set_redirect(p + "/"); });

    // What it shows.
    auto route = [&s](void (*handler)(State&, const Request&, Response&)) {
        return [&s, handler](const Request& req, Response& res) { handler(s, req, res); };
    };
    server.Get(api + "runs", [&s](const Request&, Response& res) {
        s.reconcile_active();
        res.set_content(s.snapshot(), kJson);
    });
    server.Get(api + "events", route(stream_rows));
    server.Get(api + R"(runs/([^/]+))", [&s](const Request& req, Response& res) {
        const std::string id = req.matches[1];
        json detail = ui::safe_run_id(id) ? run_detail(s, id) : json(nullptr);
        if (detail.is_null()) return send_error(res, 404, "no run " + id);
        send_json(res, detail);
    });
    server.Get(api + R"(runs/([^/]+)/log)", route(stream_log));
    server.Get(api + "report", route(get_report));
    server.Get(api + "environments",
               [](const Request&, Response& res) { send_json(res, environments_json()); });
    server.Get(api + "queue",
               [&s](const Request&, Response& res) { send_json(res, queue_json(s.ws)); });
    if (s.options.read_only) return;
    server.Post(api + R"(runs/([^/]+)/stop)", route(post_stop));
    server.Post(api + R"(runs/([^/]+)/again)", route(post_again));
    server.Post(api + R"(runs/([^/]+)/plan)", route(post_plan));
}

std::string dashboard_url(const std::string& host, int port, const std::string& prefix,
                          const std::string& token) {
    const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return "http://" + shown + ":" + std::to_string(port) + prefix + "/#token=" + token;
}

std::string dashboard_token() {
    const char* given = std::getenv("COCODE_UI_TOKEN");
    std::string token = given && *given ? given : ui::new_token();
    ::unsetenv("COCODE_UI_TOKEN");
    return token;
}

}  // namespace cocode::dispatch_cli
