#include "run/restore.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/flat_yaml.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "run/run_folder.h"

namespace cocode::run {
namespace fs = std::filesystem;

Result<void> restore_round(const fs::path& repo_root, const fs::path& runs_dir,
                           const RestoredRound& round, const std::optional<Seal>& seal) {
    if (!is_run_id(round.run_id))
        return Error::usage("the published round's run id '" + round.run_id + "' is not one");
    std::error_code ec;
    const fs::path folder = runs_dir / round.run_id;
    if (seal)
        if (auto sealed = write_seal(repo_root, *seal); !sealed) return sealed;
    if (fs::exists(folder, ec)) return {};
    const fs::path making = runs_dir / (".restoring-" + round.run_id);
    fs::remove_all(making, ec);
    fs::create_directories(making, ec);
    if (ec) return Error::general("cannot create " + making.string() + ": " + ec.message());
    const RunFiles files{folder};
    FlatYaml info;
    info.set("version", kRunInfoVersion);
    info.set("run_id", round.run_id);
    info.set("task_id", "issue-" + std::to_string(round.issue));
    info.set("agent", round.agent);
    info.set("status", std::string(status_name(RunStatus::completed)));
    info.set("reason", "restored from the verdict published on GitHub");
    info.set("cwd", "");
    info.set("output_path", files.output().string());
    info.set_number("issue", round.issue);
    info.set("issue_url", round.issue_url);
    info.set("issue_title", round.issue_title);
    info.set("branch", round.branch);
    info.set("base_commit", round.base_commit);
    info.set("worktree", "");
    info.set("ready_commit", round.head);
    info.set("ready_marker", seal ? seal->marker : "");
    info.set_number("round", round.round);
    // The first round's trigger is the issue, which run-info leaves empty.
    info.set("round_trigger", round.round == 1 ? "" : round.round_trigger);
    info.set("round_from", round.round == 1 ? "" : round.round_from);
    info.set("round_kind", round.plan_round ? "plan" : "code");
    info.set_number("restarts", 0);
    const RunFiles made{making};
    Result<void> written = write_file_atomic(made.info(), info.render());
    if (written) written = write_file_atomic(made.issue_body(), round.issue_body);
    if (written) written = write_file_atomic(made.output(), round.output);
    if (written && !round.verdict_json.empty()) {
        written = write_file_atomic(made.check_json(), round.verdict_json);
    } else if (written && round.pass) {
        const nlohmann::json verdict = {{"verdict", *round.pass ? "PASS" : "FAIL"},
                                        {"head", round.head},
                                        {"run_id", round.run_id},
                                        {"restored", true}};
        written = write_file_atomic(made.check_json(), json_dump(verdict, 2) + "\n");
    }
    if (!written) {
        fs::remove_all(making, ec);
        return written;
    }
    fs::rename(making, folder, ec);
    if (ec) {
        fs::remove_all(making, ec);
        return Error::general("cannot make " + folder.string() + ": " + ec.message());
    }
    return keep_state(folder, [&](FlatYaml& kept) {
        kept.set_number("issue", round.issue);
        kept.set("agent", round.agent);
        kept.set("branch", round.branch);
        kept.set("base_commit", round.base_commit);
        kept.set("status", std::string(status_name(RunStatus::completed)));
        kept.set("reason", "restored from the verdict published on GitHub");
        kept.set("ready_commit", round.head);
    });
}

}  // namespace cocode::run
