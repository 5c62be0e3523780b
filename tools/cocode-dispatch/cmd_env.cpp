// cocode-dispatch env: the prepared environments (docs/environments.md) — the base's key,
// built ahead (`watch`, the action's cache), listed, pruned.
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "agent/prepare.h"
#include "commands.h"
#include "core/json_text.h"
#include "core/run_id.h"
#include "core/terminal_text.h"
#include "environment/store.h"
#include "git/repository.h"
#include "proc/process_tree.h"
#include "progress.h"
#include "views.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;

agent::DispatchContext context_of(const Workspace& ws) {
    agent::DispatchContext context;
    context.repo_root = ws.root;
    context.config = ws.config;
    context.project_id = ws.project_id();
    context.notice = notice;
    return context;
}

// `revision`, else the base's head (fetched as a run fetches it).
std::string commit_of(const agent::DispatchContext& context,
                      const std::optional<std::string>& revision) {
    if (!revision) return agent::resolve_base(context).value_or_throw().commit;
    auto repo = git::Repository::open(context.repo_root).value_or_throw();
    auto found = repo.lookup(*revision);
    if (!found) throw Failure(Error::usage("--commit " + *revision + ": no such commit"));
    return found->id;
}

// The environment of `revision` (default: the base's head).
agent::CommitEnvironment environment_of(const agent::DispatchContext& context,
                                        const std::optional<std::string>& revision) {
    auto at = agent::environment_at(context, commit_of(context, revision)).value_or_throw();
    if (!at)
        throw Failure(Error::usage(
            "no environment: neither `environment` in " + std::string(config::kConfigFile) +
            " nor a " + environment::kDevcontainerFile + " with commands (docs/environments.md)"));
    return std::move(*at);
}

std::string age_of(std::chrono::system_clock::time_point at) {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - at)
            .count();
    // Its largest whole unit, one style for every age ("45s", "2m", "3h", "4d").
    if (seconds < 60) return std::to_string(std::max<long long>(seconds, 0)) + "s";
    if (seconds < 3600) return std::to_string(seconds / 60) + "m";
    if (seconds < 86400) return std::to_string(seconds / 3600) + "h";
    return std::to_string(seconds / 86400) + "d";
}

json listed_json(const environment::Listed& l, const environment::Store& store) {
    json runs = json::array();
    for (const auto& use : l.live) runs.push_back(use.name);
    return {{"key", l.key},
            {"dir", store.dir_of(l.key).string()},
            {"source", l.manifest.source},
            {"commit", l.manifest.commit},
            {"paths", l.manifest.paths},
            {"size", l.manifest.size},
            {"files", l.manifest.files.size()},
            {"created", l.manifest.created},
            {"last_used", format_utc_timestamp(l.last_used)},
            {"live", runs},
            {"uses", l.uses}};
}

int env_key(const EnvArgs& args) {
    const Workspace ws = open_workspace();
    const auto context = context_of(ws);
    // None configured is no error here: a cache step keys nothing.
    auto at = agent::environment_at(context, commit_of(context, args.commit)).value_or_throw();
    if (!at) {
        notice("no environment: nothing to key (docs/environments.md)");
        if (args.json) std::printf("{\"key\": \"\"}\n");
        return 0;
    }
    const agent::CommitEnvironment& environment = *at;
    if (args.json)
        std::printf("%s\n", json_output(json{{"key", environment.key},
                                             {"commit", environment.commit},
                                             {"source", environment.spec.source},
                                             {"store", environment::default_store().string()}})
                                .c_str());
    else
        std::printf("%s\n", environment.key.c_str());
    return 0;
}

int env_build(const EnvArgs& args) {
    const Workspace ws = open_workspace();
    const auto context = context_of(ws);
    const auto environment = environment_of(context, args.commit);
    const ProcessStamp self = stamp_of(::getpid());
    const std::string use = "build-" + std::to_string(self.pid);
    auto entry =
        agent::ensure_environment(context, environment, {use, {}, self.pid, self.start, boot_id()});
    environment::Store(environment::default_store()).drop_use(environment.key, use);
    if (!entry) {
        Error error = std::move(entry).error();
        throw Failure(std::move(error));
    }
    if (args.json) {
        std::printf("%s\n", json_output(json{{"key", environment.key},
                                             {"dir", entry->dir.string()},
                                             {"commit", environment.commit},
                                             {"paths", entry->manifest.paths},
                                             {"size", entry->manifest.size},
                                             {"files", entry->manifest.files.size()}})
                                .c_str());
    } else {
        std::printf("%s  %s  %s in %zu files  %s\n", environment.key.c_str(),
                    terminal_safe_line(entry->dir.string()).c_str(),
                    format_bytes(entry->manifest.size).c_str(), entry->manifest.files.size(),
                    terminal_safe_line(environment.spec.source).c_str());
    }
    return 0;
}

int env_list(const EnvArgs& args) {
    if (args.json) {
        std::printf("%s\n", json_output(environments_json(), 2).c_str());
        return 0;
    }
    const environment::Store store(environment::default_store());
    const auto listed = store.list();
    if (listed.empty()) {
        std::printf("no environments in %s\n", terminal_safe_line(store.root().string()).c_str());
        return 0;
    }
    std::printf("%-24s  %9s  %7s  %5s  %9s  %s\n", "KEY", "SIZE", "FILES", "AGE", "LAST USE",
                "USED BY");
    for (const auto& l : listed) {
        std::string users;
        for (const auto& use : l.live) users += (users.empty() ? "" : ", ") + use.name;
        auto created = parse_utc_timestamp(l.manifest.created);
        std::printf("%-24s  %9s  %7zu  %5s  %9s  %s\n", l.key.c_str(),
                    format_bytes(l.manifest.size).c_str(), l.manifest.files.size(),
                    created ? age_of(*created).c_str() : "?", age_of(l.last_used).c_str(),
                    users.empty() ? "-" : terminal_safe_line(users).c_str());
    }
    return 0;
}

int env_prune(const EnvArgs& args) {
    if (args.keep < 0) throw Failure(Error::usage("--keep: expected 0 or more"));
    std::optional<std::uint64_t> max_size;
    if (args.max_size) {
        auto size = config::parse_size(*args.max_size);
        if (!size) throw Failure(Error::usage("--max-size: " + size.error().message));
        max_size = *size;
    }
    const environment::Store store(environment::default_store());
    auto pruned = store.prune(static_cast<std::size_t>(args.keep), max_size).value_or_throw();
    if (args.json) {
        std::printf("%s\n",
                    json_dump(json{{"removed", pruned.removed}, {"freed", pruned.freed}}).c_str());
        return 0;
    }
    for (const auto& key : pruned.removed) std::printf("removed %s\n", key.c_str());
    std::printf("%s freed\n", format_bytes(pruned.freed).c_str());
    return 0;
}

}  // namespace

json environments_json() {
    const environment::Store store(environment::default_store());
    json out = json::array();
    for (const auto& l : store.list()) out.push_back(listed_json(l, store));
    return out;
}

int run_env(const EnvArgs& args) {
    if (args.verb == "key") return env_key(args);
    if (args.verb == "build") return env_build(args);
    if (args.verb == "list") return env_list(args);
    return env_prune(args);
}

}  // namespace cocode::dispatch_cli
