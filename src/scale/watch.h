// `cocode-dispatch watch`: a self-hosted machine that takes labelled issues by itself. Each
// pass polls the repository's issues (conditional GETs: an unchanged repository costs no rate
// limit), claims each newly labelled issue (claim.h: exactly once across machines), starts its
// runs, and when they have ended and been judged, labels the issue done or failed and closes
// its claim.
//
// Durable: every step is written to the watcher's state file (.cocode/watch/state.json,
// atomically) before it is taken, so that after kill -9 a restarted watcher picks up where it
// was — finding the claim its lost answer made, adopting the runs it started, judging those
// that ended while it was down — and never starts an issue's runs twice.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "check/work_plan.h"
#include "config/config.h"
#include "core/result.h"
#include "issues/source.h"
#include "run/run_folder.h"
#include "scale/claim.h"

namespace cocode::scale {

inline constexpr char kWatchDir[] = ".cocode/watch";
// The labels a watcher sets: while the agents run, and what came of them.
inline constexpr char kLabelRunning[] = "cocode:running";
inline constexpr char kLabelDone[] = "cocode:done";
inline constexpr char kLabelFailed[] = "cocode:failed";

// A plan command on an issue (docs/review.md, "Plans"): `plan` starts plan rounds (also a label
// with trigger.plan), `approve`, `revise` and `reject` act on the pair's plan; with the hash an
// approval names, the words of a revision, and who said it ("@login").
struct WatchPlan {
    check::PlanVerb verb = check::PlanVerb::none;
    std::string hash;
    std::string words;
    std::string by;
};

// What approved an entry's runs (scale/approval.h): when (GitHub's time), and the event
// (a delivery's payload, kept in a file) holding the issue's text as approved, if any.
struct WatchApproval {
    std::string at;
    std::string event;
};

struct WatchOptions {
    std::string label;  // the trigger label
    std::chrono::seconds lease{3600};
    int max_parallel = 2;  // issues in flight at once
    std::filesystem::path repo_root;
    const config::Config* config = nullptr;  // for judging runs no dispatcher judged
    issues::IssueSource* source = nullptr;   // GitHub (source->github_api())
    std::string note;                        // on each claim: what will run
    // Starts the runs of an issue (`cocode-dispatch run N --detach`) with `agents` (none: the
    // watcher's own), asked for by `by` ("@login", the merge gate's requester; "" unknown):
    // their run ids.
    std::function<Result<std::vector<std::string>>(
        long issue, const std::vector<std::string>& agents, const std::string& by,
        const WatchApproval& approval)>
        dispatch;
    // Starts a round of the pair (`cocode-dispatch continue ISSUE --agent A --from-pr --detach
    // --publish --json`, with `instruction` added to what the pull request says): its run ids.
    std::function<Result<std::vector<std::string>>(long issue, const std::string& agent,
                                                   const std::string& instruction)>
        dispatch_round;
    // Carries out a plan command (`cocode-dispatch run N --plan …` or `continue N --approve |
    // --revise | --reject …`): the run ids it started (none for a rejection).
    std::function<Result<std::vector<std::string>>(
        long issue, const std::vector<std::string>& agents, const WatchPlan& plan,
        long long comment, const WatchApproval& approval)>
        dispatch_plan;
    std::function<void(std::string_view)> notice;
    // Why no new work may start now (budget.daily_usd spent), or nullopt: while it says so,
    // nothing new is claimed and requests already taken wait, unclaimed (docs/cost.md).
    std::function<std::optional<std::string>()> hold;
    // Poll the pull requests of cocode's branches for reviews and commands asking for a round
    // (watch; serve has webhooks).
    bool rounds = false;
    // Work done ahead of the issues that will need it, at the start of each pass: the base
    // branch's environment built when its key changes (docs/environments.md). It must not
    // block: it starts what takes long and looks back at the next pass.
    std::function<void()> ahead;
};

// A round on a pull request (docs/review.md): the pair whose pull request the entry's claim is
// on, and the words of the command that asked for it.
struct WatchRound {
    long issue = 0;
    std::string agent;
    std::string instruction;
};

// What a watcher holds, step by step (the state file's entries).
enum class WatchPhase {
    claiming,     // contending; the nonce is kept so a lost answer is found again
    claimed,      // won, runs not started
    dispatching,  // runs being started (since `since`)
    running,      // runs started: `runs`
};

struct WatchEntry {
    WatchPhase phase = WatchPhase::claiming;
    Claim claim;                      // issue, request, nonce; comment id once won
    std::vector<std::string> agents;  // a command's; none: the watcher's
    bool sent = false;                // claiming: the claim may have been made
    std::string since;                // dispatching: the run id prefix no earlier run can have
    std::vector<std::string> runs;
    std::optional<WatchRound> round;  // claim.issue is the pull request's number
    std::optional<WatchPlan> plan;    // a plan command's
    std::string requested_by;         // who asked ("@login"): the merge gate does not count them
    WatchApproval approval;
    std::chrono::steady_clock::time_point renewed{};  // this process's last renewal
};

// What stopping (SIGTERM) does with an entry — a pure function of it. Runs started stay, to be
// picked up after a restart; a claim whose runs have not started is handed back: deleted by its
// id when known, else found by its nonce first; an attempt that never sent its claim is
// forgotten. When GitHub cannot be reached for it, the entry stays in the state file and the
// next start settles it.
enum class HandBack {
    keep_running,      // dispatching or running: kept for the restart
    forget,            // claiming, never sent: nothing on GitHub
    delete_claim,      // its comment is known: deleted
    find_then_delete,  // sent, its id unknown (the answer was lost): found by the nonce
};
HandBack hand_back_step(const WatchEntry& entry);

class Watcher {
  public:
    // Takes the repository's watcher lock (one watcher per clone) and reads the state file;
    // a new watcher gets an id of its own (host name and a random part), kept there.
    static Result<std::unique_ptr<Watcher>> open(WatchOptions options);
    ~Watcher();

    const std::string& id() const { return id_; }
    // Looks after what is in flight (claims to settle, runs to start or adopt, ended runs to
    // judge and answer), then, with room, polls for newly labelled issues and claims them.
    Result<void> pass(bool poll = true);
    // Nothing claimed or running.
    bool idle() const { return entries_.empty(); }
    // Takes on a request (a poll's, or one that came by webhook): claimed at the next pass,
    // unless it is in hand already, or another watcher's claim holds it or answered it.
    enum class Taking { started, in_hand, held, answered };
    // With `plan`, a plan command (or a label with trigger.plan); `by`, who asked ("@login").
    Result<Taking> take(long issue, const Request& request, const std::vector<std::string>& agents,
                        const std::optional<WatchPlan>& plan = std::nullopt,
                        const std::string& by = "", const WatchApproval& approval = {});
    // Takes on a request for a round on pull request `pull`. It waits for a round of the same
    // pull request that is under way, then runs once.
    Result<Taking> take_round(long pull, const Request& request, const WatchRound& round);
    // For SIGTERM: claims whose runs have not started are handed back (deleted), so another
    // watcher can take them at once; started ones stay, to be picked up after a restart, and
    // so does any claim GitHub could not be asked about (each said in a notice). An error only
    // when the state file cannot be written.
    Result<void> hand_back();

  private:
    explicit Watcher(WatchOptions options);
    Result<void> save();
    Result<bool> advance(WatchEntry& entry);  // true when the entry is done with
    // The steps of advance, one per phase: on to the next phase, wait for the next pass, or
    // done with the entry.
    enum class Step { go_on, wait, done };
    Result<Step> contend_for(WatchEntry& entry);
    Result<void> label_running(WatchEntry& entry);
    Result<Step> dispatch_runs(WatchEntry& entry);
    Result<bool> answer(WatchEntry& entry);
    Result<Taking> take_entry(long issue, const Request& request,
                              const std::vector<std::string>& agents,
                              const std::optional<WatchRound>& round,
                              const std::optional<WatchPlan>& plan, const std::string& by,
                              const WatchApproval& approval);
    // The open issues with the trigger label, kept up to date in `labelled_`: the first poll
    // lists them; every later one asks only for the issues updated since the newest change it
    // saw (sorted by update, a conditional request: when nothing changed, one request that
    // costs no rate limit, whatever the number of issues). A new issue whose body says the
    // command is decided there too.
    Result<void> poll_issues();
    Result<void> body_command(const github::Issue& issue);
    Result<void> claim_new();
    Result<void> claim_rounds();         // watch_rounds.cpp
    Result<void> claim_plan_commands();  // watch_rounds.cpp
    Result<void> claim_commands();       // watch_rounds.cpp
    Result<void> renew_due();

    WatchOptions options_;
    github::GitHub* github_ = nullptr;
    std::string id_;
    std::vector<WatchEntry> entries_;
    std::set<long long> told_;              // claims of others already named in a notice
    std::map<long, std::string> answered_;  // issue → its updated_at when found answered
    std::string held_;                      // why new work is held, as last said; "" if not
    std::set<std::pair<Request::Kind, long long>> decided_;  // round requests decided on
    std::map<long long, bool> label_decisions_;  // a labelling's event id: may it start runs
    std::string commands_since_;  // comment commands are read from then on (GitHub's time)
    // The newest comment read (its time), and those made in that second: a comment made
    // before is decided already, and a restarted watcher must not decide them again.
    std::string commands_seen_;
    std::set<long long> commands_at_seen_;
    std::string issues_since_;  // issues updated since then are asked for; "": list all
    std::string issues_seen_;   // the newest change a poll saw: pages past it are not read
    std::map<long, std::string> labelled_;  // open issues with the trigger label → updated_at
    std::set<long> bodies_decided_;         // new issues whose body's command was decided on
    std::map<long, std::string> gates_;  // pull request → its gate as last written (head, words)
    struct Lock;
    std::unique_ptr<Lock> lock_;
};

// What a watcher does beside its polls, and when (tools/cocode-dispatch/watching runs them):
// the base's environment built ahead, looked at once a minute; what became of the pull
// requests, learnt at the first pass, then every ten minutes, and at once when asked.
inline constexpr std::chrono::minutes kAheadEvery{1};
inline constexpr std::chrono::minutes kOutcomesEvery{10};
bool due(std::optional<std::chrono::steady_clock::time_point> last,
         std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration every,
         bool asked = false);

// An issue labelled again still has the worktrees and branches of its earlier runs here: they
// are cleaned (as `clean` does it, never a branch with commits not pushed) before it runs.
bool cleaned_before_it_runs(const std::vector<run::RunRecord>& runs_here, long issue);

// How long a watcher holds every step: GitHub asked for no requests until a time still to
// come (a rate limit's reset, a Retry-After); nullopt when it did not.
std::optional<std::chrono::seconds> github_hold(const github::GitHub& github,
                                                std::chrono::system_clock::time_point now);

}  // namespace cocode::scale
