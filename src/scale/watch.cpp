#include "scale/watch.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "agent/confined.h"
#include "check/run_check.h"
#include "core/files.h"
#include "core/json_text.h"
#include "core/redact.h"
#include "core/run_id.h"
#include "run/run_folder.h"
#include "scale/intake.h"
#include "scale/trigger.h"

namespace cocode::scale {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Whether a dispatcher is still making runs dispatched since `since`: a `.making-<run id>`
// folder whose maker — the pid in the run id — is alive. A watcher killed while its `run`
// was starting left that `run` going; the watcher started again must wait for its runs and
// adopt them, not start the pair a second time (its worktree and branch already exist).
bool runs_being_made(const fs::path& runs_dir, const std::string& since) {
    std::error_code ec;
    const std::string prefix = run::kMakingPrefix;
    for (fs::directory_iterator it(runs_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string id = name.substr(prefix.size());
        if (!is_run_id(id) || id.substr(0, since.size()) < since) continue;
        const pid_t pid = run_id_pid(id);
        if (pid > 0 && ::kill(pid, 0) == 0) return true;
    }
    return false;
}

constexpr std::string_view kPhaseNames[] = {"claiming", "claimed", "dispatching", "running"};

std::string_view phase_name(WatchPhase phase) { return kPhaseNames[static_cast<int>(phase)]; }

std::optional<WatchPhase> phase_named(std::string_view name) {
    for (int i = 0; i < 4; ++i)
        if (kPhaseNames[i] == name) return static_cast<WatchPhase>(i);
    return std::nullopt;
}

json entry_json(const WatchEntry& e) {
    json out = {{"issue", e.claim.issue},
                {"request", e.claim.request.id},
                {"kind", request_kind_name(e.claim.request.kind)},
                {"agents", e.agents},
                {"nonce", e.claim.nonce},
                {"comment", e.claim.comment_id},
                {"state", claim_state_name(e.claim.state)},
                {"lease", e.claim.lease.count()},
                {"beat", e.claim.beat},
                {"updated_at", e.claim.updated_at},
                {"phase", phase_name(e.phase)},
                {"sent", e.sent},
                {"since", e.since},
                {"runs", e.runs}};
    if (!e.requested_by.empty()) out["by"] = e.requested_by;
    if (!e.approval.at.empty()) out["approved_at"] = e.approval.at;
    if (!e.approval.event.empty()) out["approved_event"] = e.approval.event;
    if (e.round)
        out["round"] = {{"issue", e.round->issue},
                        {"agent", e.round->agent},
                        {"instruction", e.round->instruction}};
    if (e.plan)
        out["plan"] = {{"verb", check::plan_verb_name(e.plan->verb)},
                       {"hash", e.plan->hash},
                       {"words", e.plan->words},
                       {"by", e.plan->by}};
    return out;
}

Result<WatchEntry> entry_from(const json& j, const std::string& watcher, const fs::path& file) {
    WatchEntry e;
    try {
        e.claim.issue = j.at("issue").get<long>();
        e.claim.request.id = j.at("request").get<long long>();
        auto kind = request_kind_named(j.at("kind").get<std::string>());
        if (!kind) throw std::invalid_argument("kind");
        e.claim.request.kind = *kind;
        e.agents = j.at("agents").get<std::vector<std::string>>();
        e.claim.nonce = j.at("nonce").get<std::string>();
        e.claim.comment_id = j.at("comment").get<long long>();
        const std::string state = j.at("state").get<std::string>();
        e.claim.state = state == "running" ? ClaimState::running : ClaimState::claimed;
        e.claim.lease = std::chrono::seconds(j.at("lease").get<long long>());
        e.claim.beat = j.at("beat").get<long long>();
        e.claim.updated_at = j.at("updated_at").get<std::string>();
        e.claim.watcher = watcher;
        auto phase = phase_named(j.at("phase").get<std::string>());
        if (!phase) throw std::invalid_argument("phase");
        e.phase = *phase;
        e.sent = j.at("sent").get<bool>();
        e.since = j.at("since").get<std::string>();
        e.runs = j.at("runs").get<std::vector<std::string>>();
        for (const auto& id : e.runs)
            if (!is_run_id(id)) throw std::invalid_argument("runs");
        if (j.contains("round")) {
            const json& r = j.at("round");
            e.round = WatchRound{r.at("issue").get<long>(), r.at("agent").get<std::string>(),
                                 r.at("instruction").get<std::string>()};
        }
        if (j.contains("by")) e.requested_by = j.at("by").get<std::string>();
        if (j.contains("approved_at")) e.approval.at = j.at("approved_at").get<std::string>();
        if (j.contains("approved_event"))
            e.approval.event = j.at("approved_event").get<std::string>();
        if (j.contains("plan")) {
            const json& p = j.at("plan");
            const auto verb = check::parse_plan_verb(p.at("verb").get<std::string>());
            if (!verb) throw std::invalid_argument("plan.verb");
            e.plan = WatchPlan{*verb, p.at("hash").get<std::string>(),
                               p.at("words").get<std::string>(), p.at("by").get<std::string>()};
        }
    } catch (const std::exception&) {
        return Error::usage(file.string() +
                            ": an entry of `issues` is not one a watcher wrote "
                            "(expected issue, request, kind, agents, nonce, comment, state, "
                            "lease, beat, updated_at, phase, sent, since, runs; and round for a "
                            "pull request's, plan for a plan command)");
    }
    return e;
}

std::string new_watcher_id() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "host");
    std::string name;
    for (const char* c = host; *c && name.size() < 40; ++c)
        name += std::isalnum(static_cast<unsigned char>(*c)) || *c == '-' ? *c : '-';
    return name + "-" + new_nonce().substr(0, 6);
}

}  // namespace

struct Watcher::Lock {
    UniqueFd fd;
};

Watcher::Watcher(WatchOptions options) : options_(std::move(options)) {}
Watcher::~Watcher() = default;

Result<std::unique_ptr<Watcher>> Watcher::open(WatchOptions options) {
    if (!options.source || !options.source->github_api())
        return Error::usage(
            "watch takes its issues from GitHub, where the claims that keep two machines from "
            "taking one issue live; the local issue store has none (name --repo OWNER/NAME)");
    std::unique_ptr<Watcher> w(new Watcher(std::move(options)));
    w->github_ = w->options_.source->github_api();
    const fs::path dir = w->options_.repo_root / kWatchDir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error::general("cannot create " + dir.string() + ": " + ec.message());

    w->lock_ = std::make_unique<Lock>();
    w->lock_->fd = UniqueFd(::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (!w->lock_->fd.valid())
        return Error::from_errno("cannot open " + (dir / "lock").string(), errno);
    if (::flock(w->lock_->fd.get(), LOCK_EX | LOCK_NB) != 0)
        return Error::general("another watcher is running in this repository (it holds " +
                              (dir / "lock").string() + ")");

    const fs::path file = dir / "state.json";
    if (fs::exists(file)) {
        auto text = read_file(file);
        if (!text) return std::move(text).error();
        const json state = json::parse(*text, nullptr, false);
        if (!state.is_object() || !state.contains("watcher") || !state["watcher"].is_string() ||
            !state.contains("issues") || !state["issues"].is_array())
            return Error::usage(file.string() +
                                ": not a watcher's state (expected an object with `watcher` and "
                                "`issues`); move it aside to start afresh");
        w->id_ = state["watcher"].get<std::string>();
        w->commands_since_ = json_value(state, "commands_since", std::string());
        // What the polls knew (a state without it: the next poll lists every labelled issue).
        w->issues_since_ = json_value(state, "issues_since", std::string());
        w->issues_seen_ = json_value(state, "issues_seen", std::string());
        auto numbered = [](const json& object, std::map<long, std::string>& into) {
            if (!object.is_object()) return;
            for (const auto& [key, value] : object.items())
                if (value.is_string() && !key.empty() &&
                    key.find_first_not_of("0123456789") == std::string::npos && key.size() < 12)
                    into[std::stol(key)] = value.get<std::string>();
        };
        numbered(json_value(state, "labelled", json::object()), w->labelled_);
        numbered(json_value(state, "answered", json::object()), w->answered_);
        const json decisions = json_value(state, "label_decisions", json::object());
        for (const auto& [id, may] : decisions.items())
            if (may.is_boolean() && !id.empty() && id.size() < 19 &&
                id.find_first_not_of("0123456789") == std::string::npos)
                w->label_decisions_[std::stoll(id)] = may.get<bool>();
        for (const auto& n : json_value(state, "bodies_decided", json::array()))
            if (n.is_number_integer()) w->bodies_decided_.insert(n.get<long>());
        if (!state.contains("labelled")) w->issues_since_.clear();
        w->commands_seen_ = json_value(state, "commands_seen", w->commands_since_);
        for (const auto& id : json_value(state, "commands_at_seen", json::array()))
            if (id.is_number_integer()) w->commands_at_seen_.insert(id.get<long long>());
        for (const auto& item : state["issues"]) {
            auto entry = entry_from(item, w->id_, file);
            if (!entry) return std::move(entry).error();
            w->entries_.push_back(std::move(*entry));
        }
    } else {
        w->id_ = new_watcher_id();
        if (auto saved = w->save(); !saved) return std::move(saved).error();
    }
    return w;
}

Result<void> Watcher::save() {
    json issues = json::array();
    for (const auto& e : entries_) issues.push_back(entry_json(e));
    json state = {{"watcher", id_}, {"issues", issues}};
    if (!commands_since_.empty()) {
        state["commands_since"] = commands_since_;
        state["commands_seen"] = commands_seen_;
        state["commands_at_seen"] = commands_at_seen_;
    }
    if (!issues_since_.empty()) {
        state["issues_since"] = issues_since_;
        state["issues_seen"] = issues_seen_;
        json labelled = json::object(), answered = json::object();
        for (const auto& [n, at] : labelled_) labelled[std::to_string(n)] = at;
        for (const auto& [n, at] : answered_) answered[std::to_string(n)] = at;
        state["labelled"] = labelled;
        state["answered"] = answered;
        state["bodies_decided"] = bodies_decided_;
        json decisions = json::object();
        for (const auto& [id, may] : label_decisions_) decisions[std::to_string(id)] = may;
        state["label_decisions"] = decisions;
    }
    return write_file_atomic(options_.repo_root / kWatchDir / "state.json",
                             json_dump(state, 2) + "\n");
}

Result<void> Watcher::pass(bool poll) {
    github_->http().renew_wait_budget();  // each pass may wait as long as one command may
    if (options_.ahead) options_.ahead();
    if (auto renewed = renew_due(); !renewed) return renewed;
    // Held (a budget spent): nothing new is claimed; what was taken waits, unclaimed.
    const std::string held = options_.hold ? options_.hold().value_or("") : "";
    if (held != held_) {
        options_.notice(held.empty() ? "holding no more: new requests are taken again"
                                     : "holding new requests: " + held);
        held_ = held;
    }
    // A step that fails (GitHub, for one issue or all) is the pass's failure, said at its end:
    // what was taken goes on meanwhile.
    Result<void> claimed;
    if (poll && held.empty()) {
        claimed = claim_new();
        if (claimed && options_.rounds) {
            claimed = claim_rounds();
            if (claimed) claimed = claim_plan_commands();
            if (claimed) claimed = claim_commands();
        }
    }
    for (std::size_t i = 0; i < entries_.size();) {
        if (!held.empty() && entries_[i].phase == WatchPhase::claiming) {
            ++i;
            continue;
        }
        auto done = advance(entries_[i]);
        if (!done) {
            options_.notice("#" + std::to_string(entries_[i].claim.issue) + ": " +
                            done.error().message);
            ++i;
            continue;
        }
        if (*done) {
            entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
            if (auto saved = save(); !saved) return saved;
        } else {
            ++i;
        }
    }
    return claimed;
}

Result<void> Watcher::poll_issues() {
    if (issues_since_.empty()) {
        // The first poll: every open issue with the label. From then on (a minute before it,
        // for an update GitHub's lists show late), only what changed is asked for — at once
        // too, so that the next poll's question is one GitHub can answer 304.
        const std::time_t began = server_now(*github_);
        github::IssueQuery query;
        query.labels = {options_.label};
        auto listed = github_->issues(query);
        if (!listed) return std::move(listed).error();
        labelled_.clear();
        for (const auto& issue : *listed) labelled_[issue.number] = issue.updated_at;
        issues_since_ = github_time(began - 60);
        issues_seen_.clear();
        if (auto saved = save(); !saved) return saved;
    }
    // Closed issues too: a closed issue leaves the set.
    auto changed = github_->issues_changed(issues_since_, issues_seen_);
    if (!changed) return std::move(changed).error();
    bool moved = false;
    std::time_t newest = 0;
    for (const auto& issue : *changed) {
        newest = std::max(newest, time_of_github(issue.updated_at));
        const bool labelled = issue.state == "open" &&
                              std::find(issue.labels.begin(), issue.labels.end(), options_.label) !=
                                  issue.labels.end();
        auto at = labelled_.find(issue.number);
        if (labelled && (at == labelled_.end() || at->second != issue.updated_at)) {
            labelled_[issue.number] = issue.updated_at;
            moved = true;
        } else if (!labelled && at != labelled_.end()) {
            labelled_.erase(at);
            moved = true;
        }
        if (options_.rounds && issue.state == "open" && !commands_since_.empty() &&
            issue.created_at >= commands_since_)
            if (auto decided = body_command(issue); !decided) return decided;
    }
    // The question stays the same (GitHub answers 304 while nothing changes); what moves is
    // the newest change seen, past which no page is read.
    if (newest != 0) {
        if (const std::string seen = github_time(newest); seen > issues_seen_) {
            issues_seen_ = seen;
            moved = true;
        }
    }
    return moved ? save() : Result<void>{};
}

// `/cocode` on the first line of a new issue's body: a command of its author, decided as a
// comment's (serve decides the `issues` `opened` delivery alike), once per issue.
Result<void> Watcher::body_command(const github::Issue& issue) {
    if (bodies_decided_.count(issue.number)) return {};
    const config::Config& config = *options_.config;
    const auto e = polled_issue_body(issue, config.trigger);
    if (!e) return {};
    bodies_decided_.insert(issue.number);
    if (auto saved = save(); !saved) return saved;
    if (e->kind == EventRequest::Kind::none) {
        options_.notice("#" + std::to_string(issue.number) + ": nothing to do: " + e->why_not);
        return {};
    }
    auto decision = decide(*e, config, *github_);
    if (!decision) return std::move(decision).error();
    options_.notice(decision->notice);
    if (!decision->run) return {};
    std::optional<WatchPlan> plan;
    if (decision->verb != check::PlanVerb::none)
        plan = WatchPlan{decision->verb, decision->plan_hash, decision->instruction, decision->by};
    auto taken = take(issue.number, decision->request, decision->agents, plan, decision->by,
                      WatchApproval{decision->approved_at, ""});
    if (!taken) return std::move(taken).error();
    return {};
}

Result<void> Watcher::claim_new() {
    if (auto polled = poll_issues(); !polled) return polled;
    int room = options_.max_parallel - static_cast<int>(entries_.size());
    if (room <= 0) return {};
    const config::Config& config = *options_.config;
    const auto claim_one = [&](long number, const std::string& updated_at) -> Result<void> {
        // Answered, and not touched since (a new labelling would have touched it): nothing to
        // ask GitHub about. Issues held by another watcher are looked at every poll, so that a
        // lapsed lease is noticed.
        if (auto a = answered_.find(number); a != answered_.end() && a->second == updated_at)
            return {};
        auto request = latest_request(*github_, number, options_.label);
        if (!request) return std::move(request).error();
        if (request->id == 0) return {};
        // Who applied it may start cocode (trigger.h: the decision `serve` and the action make).
        auto allowed = label_decisions_.find(request->id);
        if (allowed == label_decisions_.end()) {
            auto decision = decide(label_event(number, *request, options_.label, config.trigger),
                                   config, *github_);
            if (!decision) return std::move(decision).error();
            if (!decision->run) options_.notice(decision->notice);
            allowed = label_decisions_.emplace(request->id, decision->run).first;
            if (auto saved = save(); !saved) return saved;
        }
        if (!allowed->second) return {};
        auto taken = take(number, Request{Request::Kind::label, request->id}, {},
                          config.trigger.plan ? std::optional<WatchPlan>(WatchPlan{
                                                    check::PlanVerb::plan, "", "", request->by})
                                              : std::nullopt,
                          request->by, WatchApproval{request->at, ""});
        if (!taken) return std::move(taken).error();
        if (*taken == Taking::started) --room;
        // Trusted as answered only when GitHub's clock has passed the second of the issue's
        // last change: a relabelling in that same second would carry the same updated_at.
        if (*taken == Taking::answered && server_now(*github_) > time_of_github(updated_at))
            answered_[number] = updated_at;
        return {};
    };
    // One issue GitHub cannot answer about now (an outage of its own, a list someone keeps
    // churning) holds back none of the others: each is tried, and the first failure is the
    // pass's, said after them.
    std::optional<Error> first;
    for (const auto& [number, updated_at] : labelled_) {
        if (room == 0) break;
        if (std::any_of(entries_.begin(), entries_.end(),
                        [&, n = number](const WatchEntry& e) { return e.claim.issue == n; }))
            continue;
        if (auto claimed = claim_one(number, updated_at); !claimed) {
            if (first)
                options_.notice("#" + std::to_string(number) + ": " + claimed.error().message);
            if (!first) first = std::move(claimed).error();
        }
    }
    if (first) return std::move(*first);
    return {};
}

Result<Watcher::Taking> Watcher::take_round(long pull, const Request& request,
                                            const WatchRound& round) {
    return take_entry(pull, request, {round.agent}, round, std::nullopt, "", {});
}

Result<Watcher::Taking> Watcher::take(long issue, const Request& request,
                                      const std::vector<std::string>& agents,
                                      const std::optional<WatchPlan>& plan, const std::string& by,
                                      const WatchApproval& approval) {
    return take_entry(issue, request, agents, std::nullopt, plan, by, approval);
}

Result<Watcher::Taking> Watcher::take_entry(long issue, const Request& request,
                                            const std::vector<std::string>& agents,
                                            const std::optional<WatchRound>& round,
                                            const std::optional<WatchPlan>& plan,
                                            const std::string& by, const WatchApproval& approval) {
    if (std::any_of(entries_.begin(), entries_.end(), [&](const WatchEntry& e) {
            return e.claim.issue == issue && e.claim.request == request;
        }))
        return Taking::in_hand;
    // A claim already made for this request (live or answered) is seen without making one.
    auto comments = github_->comments(issue);
    if (!comments) return std::move(comments).error();
    std::vector<std::string> known;
    for (const auto& e : entries_) known.push_back(e.claim.nonce);
    const auto held =
        holder_of(claims_in(issue, *comments), request, id_, known, server_now(*github_));
    if (held) {
        if (told_.insert(held->comment_id).second)
            options_.notice(
                "#" + std::to_string(issue) +
                (held->final() ? ": answered already by watcher " : ": taken by watcher ") +
                held->watcher);
        return held->final() ? Taking::answered : Taking::held;
    }
    WatchEntry entry;
    entry.claim.issue = issue;
    entry.claim.request = request;
    entry.claim.watcher = id_;
    entry.claim.nonce = new_nonce();
    entry.claim.lease = options_.lease;
    entry.agents = agents;
    entry.round = round;
    entry.plan = plan;
    entry.requested_by = by;
    entry.approval = approval;
    entries_.push_back(std::move(entry));
    if (auto saved = save(); !saved) return std::move(saved).error();  // the nonce first
    return Taking::started;
}

Result<void> Watcher::renew_due() {
    const auto now = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        WatchEntry& e = entries_[i];
        if (e.phase == WatchPhase::claiming) continue;
        if (e.renewed != std::chrono::steady_clock::time_point{} &&
            now - e.renewed < options_.lease / 4)
            continue;
        auto renewed =
            renew(*github_, e.claim,
                  e.phase == WatchPhase::running ? ClaimState::running : ClaimState::claimed);
        if (!renewed) {
            options_.notice("#" + std::to_string(e.claim.issue) + ": " + renewed.error().message);
            continue;
        }
        if (!*renewed) {
            // Lapsed and taken over: the issue is another watcher's now. Runs already started
            // here finish and publish their verdicts; this watcher answers nothing more on it.
            options_.notice("#" + std::to_string(e.claim.issue) +
                            ": claim lost (its lease ran out and another watcher took the issue "
                            "over); leaving it to that one");
            entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
            if (auto saved = save(); !saved) return saved;
            return renew_due();  // the rest, from the start: indices moved
        }
        e.renewed = now;
        if (auto saved = save(); !saved) return saved;
    }
    return {};
}

Result<bool> Watcher::advance(WatchEntry& e) {
    if (e.phase == WatchPhase::claiming) {
        auto step = contend_for(e);
        if (!step) return std::move(step).error();
        if (*step != Step::go_on) return *step == Step::done;
    }
    if (e.phase == WatchPhase::claimed)
        if (auto labelled = label_running(e); !labelled) return std::move(labelled).error();
    if (e.phase == WatchPhase::dispatching) {
        auto step = dispatch_runs(e);
        if (!step) return std::move(step).error();
        if (*step != Step::go_on) return *step == Step::done;
    }
    return answer(e);
}

// Claiming: the contest for the request (claim.h). Taken or superseded, the entry is done with.
Result<Watcher::Step> Watcher::contend_for(WatchEntry& e) {
    const std::string issue = "#" + std::to_string(e.claim.issue);
    ClaimTerms terms{id_, options_.lease, options_.note};
    ClaimAttempt attempt{e.claim.nonce, e.sent, e.claim.comment_id};
    auto outcome = contend(*github_, e.claim.issue, e.claim.request, terms, attempt, [&] {
        e.sent = attempt.sent;
        e.claim.comment_id = attempt.comment_id;
        return save();
    });
    if (!outcome) return std::move(outcome).error();
    if (outcome->kind == ClaimOutcome::Kind::superseded) {
        options_.notice(issue + ": labelled again since; the newer request comes next");
        return Step::done;
    }
    if (outcome->kind == ClaimOutcome::Kind::taken) {
        options_.notice(issue + ": taken by watcher " + outcome->claim.watcher);
        return Step::done;
    }
    e.claim = outcome->claim;
    e.phase = WatchPhase::claimed;
    e.renewed = std::chrono::steady_clock::now();
    if (auto saved = save(); !saved) return std::move(saved).error();
    options_.notice(issue + ": claimed");
    return Step::go_on;
}

// Claimed: the issue says it is running, and the time from which runs are this entry's.
Result<void> Watcher::label_running(WatchEntry& e) {
    const long n = e.claim.issue;
    e.phase = WatchPhase::dispatching;
    e.since = make_run_id(std::chrono::system_clock::now(), 0).substr(0, 18);
    // A pull request's labels say what the verdict says; a plan's comment says what it is.
    if (e.round || e.plan) return save();
    if (auto labelled = github_->add_labels(n, {kLabelRunning}); !labelled)
        options_.notice("#" + std::to_string(n) + ": " + labelled.error().message);
    // What an earlier request came to no longer stands.
    for (const char* old : {kLabelDone, kLabelFailed})
        if (auto unlabelled = github_->remove_label(n, old); !unlabelled)
            options_.notice("#" + std::to_string(n) + ": " + unlabelled.error().message);
    return save();
}

// Dispatching: the runs started — or adopted, when a crash cut this step short after they
// were — or, when none could start, the issue answered as failed.
Result<Watcher::Step> Watcher::dispatch_runs(WatchEntry& e) {
    const long n = e.claim.issue;
    const std::string issue = "#" + std::to_string(n);
    const fs::path runs_dir = options_.repo_root / run::kRunsDir;
    // A round's runs are its pair's; an issue's are the issue's. A run another entry holds
    // is that entry's (a round started within the same millisecond as this entry's `since`).
    auto ours = [&](const run::RunRecord& record) {
        for (const auto& other : entries_)
            if (&other != &e &&
                std::find(other.runs.begin(), other.runs.end(), record.run_id) != other.runs.end())
                return false;
        return e.round ? record.issue == e.round->issue && record.agent == e.round->agent
                       : record.issue == n;
    };
    auto adopt = [&] {
        for (const auto& record : run::list_runs(runs_dir).runs)
            if (ours(record) && record.run_id.substr(0, e.since.size()) >= e.since)
                e.runs.push_back(record.run_id);
    };
    // A round waits for the pull request's round under way (this watcher's, or one started
    // elsewhere in this clone, e.g. at the terminal): it runs once that one has ended.
    if (e.round && e.runs.empty()) {
        const auto pairs_runs = run::list_runs(runs_dir).runs;
        const bool under_way =
            std::any_of(entries_.begin(), entries_.end(),
                        [&](const WatchEntry& other) {
                            return &other != &e && other.round && other.claim.issue == n &&
                                   other.phase == WatchPhase::running;
                        }) ||
            std::any_of(pairs_runs.begin(), pairs_runs.end(), [&](const run::RunRecord& r) {
                return ours(r) && r.run_id.substr(0, e.since.size()) < e.since &&
                       run::dispatcher_alive(r);
            });
        if (under_way) return Step::wait;
    }
    // Looked at before the runs are listed: a run folder is renamed from its `.making-`
    // name in one step, so one made meanwhile is seen either way.
    const bool making = runs_being_made(runs_dir, e.since);
    adopt();
    if (e.runs.empty() && making) return Step::wait;
    // --max-parallel holds however the request came (a poll, a delivery, a round): a claimed
    // entry starts its runs only when fewer entries than that have runs going.
    if (e.runs.empty() &&
        std::count_if(entries_.begin(), entries_.end(), [&](const WatchEntry& other) {
            return &other != &e && !other.runs.empty();
        }) >= options_.max_parallel)
        return Step::wait;
    if (e.runs.empty()) {
        auto started =
            e.round  ? options_.dispatch_round(e.round->issue, e.round->agent, e.round->instruction)
            : e.plan ? options_.dispatch_plan(n, e.agents, *e.plan, e.claim.request.id, e.approval)
                     : options_.dispatch(n, e.agents, e.requested_by, e.approval);
        if (started && started->empty()) {  // a rejection: done, nothing to run
            auto finished = finish(*github_, e.claim, ClaimState::done, "plan rejected.");
            if (!finished) return std::move(finished).error();
            options_.notice(issue + ": plan rejected");
            return Step::done;
        }
        // The `run` of a watcher killed mid-step may have made its runs meanwhile.
        if (!started && runs_being_made(runs_dir, e.since)) return Step::wait;
        if (!started) adopt();
        if (!started && !e.runs.empty()) started = e.runs;
        if (!started) {
            // Nothing ran: the issue is answered as failed, with why.
            const std::string why = redact(started.error().message);
            options_.notice(issue + ": the runs could not start: " + why);
            if (e.round || e.plan) {
                // No round (the cap, two failures, nothing to act on, a stale plan): the claim
                // says why; `continue` has told the pull request or issue what a person must know.
                auto finished = finish(*github_, e.claim, ClaimState::failed, "no round: " + why);
                if (!finished) return std::move(finished).error();
                return Step::done;
            }
            if (auto unlabelled = github_->remove_label(n, kLabelRunning); !unlabelled)
                options_.notice(issue + ": " + unlabelled.error().message);
            if (auto labelled = github_->add_labels(n, {kLabelFailed}); !labelled)
                options_.notice(issue + ": " + labelled.error().message);
            auto finished =
                finish(*github_, e.claim, ClaimState::failed, "the runs could not start: " + why);
            if (!finished) return std::move(finished).error();
            return Step::done;
        }
        e.runs = std::move(*started);
    }
    e.phase = WatchPhase::running;
    if (auto saved = save(); !saved) return std::move(saved).error();
    options_.notice(issue + ": started " + std::to_string(e.runs.size()) +
                    (e.runs.size() == 1 ? " run" : " runs"));
    if (auto renewed = renew(*github_, e.claim, ClaimState::running); renewed && *renewed)
        e.renewed = std::chrono::steady_clock::now();
    return Step::go_on;
}

// Running: wait for every run's dispatcher to end — the run, its verdict and the verdict's
// publishing are its work — then judge the runs it left without a verdict, publish the
// verdicts it left unpublished, and answer: labels, and the claim made final.
Result<bool> Watcher::answer(WatchEntry& e) {
    const long n = e.claim.issue;
    const std::string issue = "#" + std::to_string(n);
    const fs::path runs_dir = options_.repo_root / run::kRunsDir;
    std::vector<run::RunRecord> unjudged;
    std::vector<check::Verdict> verdicts;
    for (const auto& id : e.runs) {
        auto info = run::read_run_info(runs_dir / id);
        if (!info) return std::move(info).error();
        run::RunRecord record = run::record_from(*info, runs_dir / id);
        if (run::dispatcher_alive(record)) return false;
        if (run::is_active(record.status))
            if (auto settled = run::reconcile(record); !settled) return std::move(settled).error();
        auto verdict = check::recorded_verdict(record.folder);
        if (!verdict) {
            unjudged.push_back(std::move(record));
            continue;
        }
        if (!check::verdict_published(record.folder)) {
            auto published =
                check::publish_run_verdict(*options_.source, *options_.config, record, *verdict);
            if (!published)
                options_.notice(issue + ": " + id + ": publishing: " + published.error().message);
        }
        verdicts.push_back(std::move(*verdict));
    }
    if (!unjudged.empty()) {
        for (const auto& c :
             check::check_batch(unjudged, *options_.config, 2, options_.source,
                                agent::confined_runner(*options_.config, options_.repo_root))) {
            if (c.verdict)
                verdicts.push_back(*c.verdict);
            else
                options_.notice(issue + ": " + c.run_id + ": " + c.error);
        }
    }
    std::string outcome;
    bool any_pass = false;
    for (const auto& v : verdicts) {
        any_pass = any_pass || v.pass;
        outcome +=
            (outcome.empty() ? "" : ", ") + ("`" + v.agent + "` ") + (v.pass ? "PASS" : "FAIL");
    }
    if (outcome.empty()) outcome = "no verdict";
    const ClaimState state = any_pass ? ClaimState::done : ClaimState::failed;
    if (e.round || e.plan) {
        if (auto finished = finish(*github_, e.claim, state, outcome + "."); !finished)
            return std::move(finished).error();
        options_.notice(issue + ": round " + std::string(claim_state_name(state)) + " (" + outcome +
                        ")");
        return true;
    }
    if (auto labelled = github_->add_labels(n, {any_pass ? kLabelDone : kLabelFailed}); !labelled)
        return std::move(labelled).error();
    if (auto unlabelled = github_->remove_label(n, kLabelRunning); !unlabelled)
        return std::move(unlabelled).error();
    if (auto finished = finish(*github_, e.claim, state, outcome + "."); !finished)
        return std::move(finished).error();
    options_.notice(issue + ": " + std::string(claim_state_name(state)) + " (" + outcome + ")");
    return true;
}

HandBack hand_back_step(const WatchEntry& e) {
    if (e.phase == WatchPhase::dispatching || e.phase == WatchPhase::running)
        return HandBack::keep_running;
    if (e.claim.comment_id != 0) return HandBack::delete_claim;
    if (e.phase == WatchPhase::claiming && !e.sent) return HandBack::forget;
    return HandBack::find_then_delete;
}

Result<void> Watcher::hand_back() {
    for (std::size_t i = 0; i < entries_.size();) {
        WatchEntry& e = entries_[i];
        const std::string issue = "#" + std::to_string(e.claim.issue);
        const HandBack step = hand_back_step(e);
        if (step == HandBack::keep_running) {
            ++i;
            continue;
        }
        Result<void> handed;
        if (step == HandBack::find_then_delete) {
            auto found = find_claim(*github_, e.claim.issue, id_, e.claim.nonce);
            if (!found)
                handed = std::move(found).error();
            else if (*found)
                e.claim.comment_id = (*found)->comment_id;
        }
        if (handed && e.claim.comment_id != 0) handed = release(*github_, e.claim);
        if (!handed) {
            // GitHub cannot be asked now (an outage): the entry stays, with its nonce and any
            // id, and the next start settles it before anything else.
            options_.notice(issue + ": its claim could not be handed back (" +
                            handed.error().message + "); kept in " + kWatchDir +
                            "/state.json for the next start to settle");
            ++i;
            continue;
        }
        options_.notice(issue + (step == HandBack::forget ? ": let go (no claim was made)"
                                 : e.claim.comment_id == 0
                                     ? ": let go (its claim never showed: it was not made)"
                                     : ": handed back"));
        entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
        if (auto saved = save(); !saved) return saved;
    }
    return {};
}

bool due(std::optional<std::chrono::steady_clock::time_point> last,
         std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration every,
         bool asked) {
    return asked || !last || now - *last >= every;
}

bool cleaned_before_it_runs(const std::vector<run::RunRecord>& runs_here, long issue) {
    return std::any_of(runs_here.begin(), runs_here.end(),
                       [&](const run::RunRecord& r) { return r.issue == issue; });
}

std::optional<std::chrono::seconds> github_hold(const github::GitHub& github,
                                                std::chrono::system_clock::time_point now) {
    const auto& quiet = github.http().stats().quiet_until;
    if (!quiet) return std::nullopt;
    const auto left = std::chrono::ceil<std::chrono::seconds>(*quiet - now);
    if (left.count() <= 0) return std::nullopt;
    return left;
}

}  // namespace cocode::scale
