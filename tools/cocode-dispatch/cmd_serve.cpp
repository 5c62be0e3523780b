// cocode-dispatch serve: GitHub's webhooks (`issues` labeled, `issue_comment` created with the
// command; on a pull request cocode opened, reviews, review comments, comments and failed check
// suites asking for a round) feed the same claim → run → judge → answer path as `watch`. A delivery
// is verified and queued on disk before it is answered 202 (src/scale/webhook); this loop takes it
// from the queue, decides on it as the action does (a command only from someone with write access),
// and hands what is to run to the watcher. SIGTERM stops taking deliveries, finishes the step
// under way and exits 0; the queue keeps what has not been taken.
#include <httplib.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "check/work_plan.h"
#include "core/files.h"
#include "core/json_text.h"
#include "dashboard.h"
#include "listen.h"
#include "scale/gate.h"
#include "scale/intake.h"
#include "scale/trigger.h"
#include "scale/webhook.h"
#include "watching.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct Address {
    std::string host;
    int port = 0;
};

Address parse_listen(const std::string& text) {
    const auto colon = text.rfind(':');
    const std::string port = colon == std::string::npos ? "" : text.substr(colon + 1);
    const bool digits = !port.empty() && port.size() <= 5 &&
                        port.find_first_not_of("0123456789") == std::string::npos;
    if (colon == std::string::npos || colon == 0 || !digits || std::stol(port) > 65535)
        throw Failure(Error::usage("--listen " + text +
                                   ": expected HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free)"));
    return {text.substr(0, colon), std::stoi(port)};
}

// The issue's text as the delivery carries it, when a writer approved it (the label, the
// command), kept for the runs (`run --approved-event`, scale/approval.h): the issue's number,
// title and body, and when it was approved.
Result<scale::WatchApproval> keep_approval(const Watching& w, const scale::Delivery& d,
                                           const json& payload, const std::string& at) {
    const json issue = json_value(payload, "issue", json::object());
    const json kept = {{"issue",
                        {{"number", json_value(issue, "number", 0L)},
                         {"title", json_value(issue, "title", std::string())},
                         {"body", json_value(issue, "body", std::string())},
                         {"updated_at", at}}}};
    const fs::path file = w.ws.root / scale::kServeDir / "approved" / (d.id + ".json");
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (auto written = write_file_atomic(file, kept.dump() + "\n"); !written)
        return std::move(written).error();
    return scale::WatchApproval{at, file.string()};
}

// One queued delivery: what it asks for, decided by the intake (a label on its latest
// labelling, the claim's request), and handed to the watcher. An error is GitHub's (the
// delivery stays queued for the next look); a delivery that asks for nothing is done.
Result<void> take_delivery(const scale::Delivery& d, Watching& w, github::GitHub& github) {
    const json payload = json::parse(d.body, nullptr, false);
    if (!payload.is_object()) {
        notice("delivery " + d.id + ": not a JSON object; dropped");
        return {};
    }
    config::TriggerConfig trigger = w.ws.config.trigger;
    trigger.label = w.label;
    auto request = scale::read_event(d.event, payload, trigger);
    if (!request) {
        notice("delivery " + d.id + ": " + request.error().message + "; dropped");
        return {};
    }
    auto decided = scale::decide(*request, w.ws.config, github, scale::Labelling::latest);
    if (!decided) return std::move(decided).error();
    const scale::Decision& decision = *decided;
    notice("delivery " + d.id + ": " + decision.notice);
    // The merge gate reads the pull request as it is now: a review, an approve-merge, a push.
    if (decision.refresh_gate) {
        auto gate = scale::refresh_gate_of(github, w.ws.config, request->issue);
        if (!gate) return std::move(gate).error();
        notice(gate->notice);
    }
    if (decision.learn_outcomes && w.learn_outcomes) w.learn_outcomes();
    if (!decision.run) return {};
    if (decision.round) {
        auto taken =
            w.watcher->take_round(decision.pull, decision.request,
                                  {decision.issue, decision.agents.front(), decision.instruction});
        if (!taken) return std::move(taken).error();
        return {};
    }
    std::optional<scale::WatchPlan> plan;
    if (decision.verb != check::PlanVerb::none)
        plan =
            scale::WatchPlan{decision.verb, decision.plan_hash, decision.instruction, decision.by};
    auto approval = keep_approval(w, d, payload, decision.approved_at);
    if (!approval) return std::move(approval).error();
    auto taken = w.watcher->take(decision.issue, decision.request, decision.agents, plan,
                                 decision.by, *approval);
    if (!taken) return std::move(taken).error();
    return {};
}

}  // namespace

int run_serve(const ServeArgs& args) {
    const Address address = parse_listen(args.listen);
    if (args.tls_cert.has_value() != args.tls_key.has_value())
        throw Failure(Error::usage("--tls-cert and --tls-key go together"));
    const sigset_t stops = block_stop_signals();
    auto watching = start_watching(args.watcher);
    Watching& w = *watching;
    github::GitHub* github = w.source->github_api();
    const std::string& secret_env = w.ws.config.trigger.secret_env;
    const char* secret_value = std::getenv(secret_env.c_str());
    if (!secret_value || !*secret_value)
        throw Failure(Error::usage("serve: $" + secret_env +
                                   " is not set: the webhook's secret, as entered on GitHub "
                                   "(trigger.secret_env names the variable)"));
    const std::string secret = secret_value;
    auto inbox = scale::Inbox::open(w.ws.root / scale::kServeDir).value_or_throw();

    std::unique_ptr<httplib::Server> server;
    if (args.tls_cert)
        server =
            std::make_unique<httplib::SSLServer>(args.tls_cert->c_str(), args.tls_key->c_str());
    else
        server = std::make_unique<httplib::Server>();
    if (!server->is_valid())
        throw Failure(Error::usage("--tls-cert/--tls-key: cannot load the certificate or key"));
    // A slow or stalled client is cut off; a body over the cap is refused (413).
    server->set_payload_max_length(scale::kMaxWebhookBody);
    server->set_read_timeout(10, 0);
    server->set_write_timeout(10, 0);

    // The dashboard under /ui (docs/dashboard.md), behind its own token: the webhook's secret
    // is GitHub's, not a person's.
    std::unique_ptr<Dashboard> dashboard;
    const bool ui_token_given = std::getenv("COCODE_UI_TOKEN") && *std::getenv("COCODE_UI_TOKEN");
    // A token made here is kept for the person (before `listening` says the server is up), and
    // never put in a log that may be shipped.
    const fs::path ui_token_file = w.ws.root / scale::kServeDir / "ui-token";
    if (!args.no_ui) {
        const std::string ui_token = dashboard_token();
        if (!ui_token_given)
            write_file_atomic(ui_token_file, ui_token + "\n", 0600).value_or_throw();
        server->new_task_queue = [] { return new httplib::ThreadPool(32); };
        dashboard = std::make_unique<Dashboard>(
            w.ws, DashboardOptions{"/ui", ui_token, args.dashboard.read_only});
        dashboard->mount(*server);
    }

    std::mutex mutex;
    std::condition_variable arrived;
    bool queued = false;
    server->Post(R"(/(?!ui/).*|/)", [&](const httplib::Request& req, httplib::Response& res) {
        const auto answer =
            scale::receive(*inbox, secret, req.get_header_value("X-Hub-Signature-256"),
                           req.get_header_value("X-GitHub-Event"),
                           req.get_header_value("X-GitHub-Delivery"), req.body);
        res.status = answer.status;
        res.set_content(answer.body + "\n", "application/json");
        if (answer.queued) {
            std::lock_guard lock(mutex);
            queued = true;
            arrived.notify_one();
        }
    });
    const int port = bind_exclusively(*server, address.host, address.port);
    if (port < 0)
        throw Failure(Error::general("cannot listen on " + args.listen +
                                     ": the port is in use (another `serve` or dashboard?), or "
                                     "this is not an address of this machine"));
    std::thread listener([&] { server->listen_after_bind(); });
    const std::string where = address.host + ":" + std::to_string(port);
    // Where it listens, for scripts and tests that asked for any free port.
    if (auto written = write_file_atomic(w.ws.root / scale::kServeDir / "listening", where + "\n");
        !written)
        notice("warning: " + written.error().message);
    notice(std::string("listening on ") + (args.tls_cert ? "https://" : "http://") + where +
           " for GitHub's webhooks, as watcher " + w.watcher->id());
    if (dashboard)
        notice("the dashboard: " + std::string(args.tls_cert ? "https://" : "http://") + where +
               "/ui/#token=<the token: " +
               (ui_token_given ? std::string("$COCODE_UI_TOKEN") : ui_token_file.string()) + ">");

    auto stop = [&] {
        if (dashboard) dashboard->close();
        server->stop();
        listener.join();
    };
    // The queue in arrival order, then the watcher's step; a delivery it could not take yet
    // (GitHub unreachable) stays queued for the next look.
    auto look = [&] {
        for (const auto& path : inbox->pending()) {
            auto delivery = inbox->read(path);
            if (!delivery) {
                notice(delivery.error().message + "; dropped");
                (void)inbox->done(path);
                continue;
            }
            if (auto taken = take_delivery(*delivery, w, *github); !taken) {
                notice("delivery " + delivery->id + ": " + taken.error().message +
                       "; kept for the next look");
                break;
            }
            if (auto done = inbox->done(path); !done) notice(done.error().message);
        }
        if (auto passed = w.watcher->pass(false); !passed)
            notice(passed.error().message + "; trying again");
    };
    auto hold_until = std::chrono::steady_clock::now();
    for (;;) {
        if (std::chrono::steady_clock::now() >= hold_until) {
            look();
            if (auto quiet = hold_for_github(w))
                hold_until = std::chrono::steady_clock::now() + *quiet;
        }
        {
            std::unique_lock lock(mutex);
            arrived.wait_for(lock, std::chrono::seconds(1), [&] { return queued; });
            queued = false;
        }
        if (stop_requested(stops, std::chrono::milliseconds(0))) {
            notice(
                "stopping: no more deliveries taken; handing back the claims whose runs have "
                "not started");
            stop();
            w.watcher->hand_back().value_or_throw();
            return 0;
        }
    }
}

}  // namespace cocode::dispatch_cli
