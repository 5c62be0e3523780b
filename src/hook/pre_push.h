// The pre-push gate's decision for each ref a push sends: which branch is a run's, what the
// push sends, against which base, whether the verify commands can run here. A function over a
// small view of the repository (PushView), so that a test can hand it a fake and read the
// decision from a table of cases; cocode-hook's pre-push command only reads git's lines,
// asks this, runs the check and prints.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "run/run_folder.h"

namespace cocode::hook {

// One line git gives a pre-push hook: `<local ref> <local sha> <remote ref> <remote sha>`.
struct PushedRef {
    std::string local_ref, local_sha, remote_ref, remote_sha;
};
std::optional<PushedRef> parse_pushed_ref(const std::string& line);

// What the decision asks of the repository.
class PushView {
  public:
    virtual ~PushView() = default;
    // The newest run whose branch this is.
    virtual std::optional<run::RunRecord> run_of(const std::string& branch) = 0;
    // The newest commit carrying `marker` among those the push sends — reachable from
    // `local_sha` and not from `remote_sha`, or, for a new branch (remote_sha all zeros), from
    // no branch of `remote` — or empty when there is none.
    virtual Result<std::string> marked_commit(const std::string& local_sha,
                                              const std::string& remote_sha,
                                              const std::string& remote,
                                              const std::string& marker) = 0;
    // The parent of the oldest commit of `local_sha` that no branch of `remote` has; empty when
    // that commit is a root.
    virtual Result<std::string> new_branch_base(const std::string& local_sha,
                                                const std::string& remote) = 0;
};

// The view of the repository git runs the hook in (`root`: its main worktree, where .cocode/
// lives): git through git/cli.h, runs from the run folders.
std::unique_ptr<PushView> repository_view(const std::filesystem::path& root);

struct GateRules {
    std::string branch_prefix;  // a run's branches start with it
    std::string ready_marker;
};

struct GateDecision {
    bool check = false;  // false: not cocode's work, the push goes on untouched
    std::string why;     // for the line the hook prints: "run <id>", "the ready marker …"
    std::vector<std::string> check_args;  // cocode-check's arguments
};

// What the gate does with one pushed ref. An error when the repository cannot tell (a git that
// fails): the gate then stops the push with the reason — never takes a broken repository for
// "not cocode's work".
Result<GateDecision> decide_push(const PushedRef& ref, const std::string& remote,
                                 const GateRules& rules, PushView& view);

}  // namespace cocode::hook
