// cocode-dispatch doctor: is everything cocode needs here? Exit 3 when something is missing.
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <future>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/cli_runtime.h"
#include "agent/confined.h"
#include "agent/egress.h"
#include "check/clean_tree.h"
#include "commands.h"
#include "common/executables.h"
#include "config/presets.h"
#include "core/json_text.h"
#include "core/terminal_text.h"
#include "environment/key.h"
#include "environment/view.h"
#include "git/cli.h"
#include "git/repository.h"
#include "github/auth.h"
#include "github/reach.h"
#include "github/url.h"
#include "hook/installer.h"
#include "index/worktree_index.h"
#include "proc/command.h"
#include "proc/sandbox.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace fs = std::filesystem;

namespace {

struct Check {
    std::string name;
    std::string state;  // ok, warning, error, missing (a program)
    std::string detail;
};

// What `program args…` prints, bounded by coreutils' timeout so a CLI that waits for input
// or a login cannot hang the doctor. Empty when it fails. The bound is generous: a Node.js CLI
// takes seconds only to start (gemini 0.61: 2.9 s on an idle 2-core machine), and several
// times that on a busy one.
std::string output_of(const fs::path& program, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"timeout", "30", program.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = run_command(argv);
    if (!result || result->exit_code != 0) return {};
    return result->out + result->err;
}

// `program --version`, first line.
std::string version_of(const fs::path& program) {
    std::string line = first_line(output_of(program, {"--version"}));
    return line.empty() ? "version unknown" : line;
}

std::optional<std::string> getenv_value(const char* name) {
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return std::string(value);
}

// The checks of a coding CLI agent: its version against the one its preset was tested with,
// the preset's flags against its --help, whether it can reach its model and has a key —
// nothing that spends a request.
// A built-in agent runs inside cocode-dispatch: what it needs is its model's key (when its
// provider takes one) and, for http, where the model is.
void check_builtin_agent(const config::AgentConfig& agent, std::vector<Check>& checks) {
    const config::ChatSettings& chat = *agent.chat;
    const config::ChatProvider* provider = config::chat_provider(chat.provider);
    std::string what = "built-in " + std::string(config::type_name(agent.type));
    if (chat.transport == config::Transport::file) {
        checks.push_back({"agent " + agent.name, "ok",
                          what + ", copy-paste: answers are pasted into each run's inbox/"});
        return;
    }
    const bool codali = agent.type == config::AgentType::codali;
    if (codali) {
        // Its index: search is Xapian's, linked in; symbols and imports need Universal Ctags.
        auto ctags = index::ctags_version();
        checks.push_back(
            {"agent " + agent.name + " index", ctags ? "ok" : "warning",
             "Xapian " + index::xapian_version() + " (search); " +
                 (ctags ? *ctags + " (symbols, imports)"
                        : "no Universal Ctags: docdex.symbols and docdex.impact answer with a "
                          "warning (" +
                              ctags.error().message + ")")});
    }
    what += " (" +
            std::string(codali           ? "Codali envelopes, critic in the loop"
                        : chat.textproto ? "text protocol"
                                         : "one request") +
            "), " + chat.provider + " model " + agent.model.value_or(std::string(provider->model)) +
            " at " + agent.base_url.value_or(std::string(provider->base_url));
    if (agent.token_env && getenv_value(agent.token_env->c_str()).value_or("").empty()) {
        checks.push_back({"agent " + agent.name, "missing",
                          what + "; " + *agent.token_env + " is not set (its key)"});
        return;
    }
    checks.push_back({"agent " + agent.name, "ok",
                      what + (agent.token_env ? "; key in " + *agent.token_env : "")});
}

// The Node.js a CLI runs on, when it is a Node.js script: what its package asks for, against
// the `node` its first line finds here.
std::optional<agent::RuntimeVerdict> runtime_of(const fs::path& program, const std::string& cli) {
    auto need = agent::node_need_of(program);
    if (!need) return std::nullopt;
    std::error_code ec;
    auto node = need->interpreter.find('/') == std::string::npos ? find_in_path(need->interpreter)
                : fs::exists(need->interpreter, ec) ? std::optional<fs::path>(need->interpreter)
                                                    : std::nullopt;
    return agent::judge_node_runtime(*need, cli, node, node ? output_of(*node, {"--version"}) : "");
}

void check_cli_agent(const config::AgentConfig& agent, const fs::path& program,
                     std::vector<Check>& checks) {
    const config::CliPreset& cli = *config::cli_preset(agent);
    const std::string name = "agent " + agent.name;

    // A Node.js CLI on a Node.js it does not accept dies before it can print its version:
    // say what it needs and what was found, and ask it nothing more.
    if (auto runtime = runtime_of(program, cli.program)) {
        if (!runtime->met) {
            checks.push_back({name, "missing", runtime->detail});
            return;
        }
        checks.push_back({name + " runtime", "ok", runtime->detail});
    }

    // A Node.js CLI can take seconds to start: its --version and --help run at once (two
    // processes; the agents one after another, so a small machine is not swamped).
    auto help_output =
        std::async(std::launch::async, [&] { return output_of(program, cli.help_args); });
    const std::string version_line = version_of(program);
    auto version = config::version_in(version_line);
    if (!version)
        checks.push_back({name, "warning",
                          program.string() +
                              " (its version is unknown; the preset was tested with " +
                              cli.tested_version + ")"});
    else if (config::compare_versions(*version, cli.tested_version) < 0)
        checks.push_back({name, "warning",
                          program.string() + " " + *version + " is older than " +
                              cli.tested_version +
                              ", which the preset was tested with; update it"});
    else
        checks.push_back({name, "ok",
                          program.string() + " " + *version + " (preset tested with " +
                              cli.tested_version + ")"});

    // Flags the configured command line uses that this version does not list.
    const std::string help = help_output.get();
    const std::vector<std::string> unknown = agent::unlisted_flags(agent.argv, help);
    if (help.empty())
        checks.push_back({name + " flags", "warning", "`" + cli.program + " --help` failed"});
    else if (!unknown.empty()) {
        std::string list;
        for (const auto& f : unknown) list += (list.empty() ? "" : ", ") + f;
        checks.push_back({name + " flags", "warning",
                          "not in its --help: " + list +
                              " (a newer or older CLI than the preset knows; set args)"});
    }

    if (agent.type == config::AgentType::claude && ::geteuid() == 0) {
        const bool overridden = agent.env_values.count("IS_SANDBOX") > 0;
        checks.push_back(
            {name + " root", overridden ? "warning" : "ok",
             overridden ? "running as root with IS_SANDBOX set in the config: claude refuses to "
                          "skip its permission prompts as root unless it is 1"
                        : "running as root: cocode passes IS_SANDBOX=1, without which claude "
                          "refuses to skip its permission prompts as root"});
    }

    // A CLI that would otherwise sign in with a token cocode must not hand it.
    if (!cli.needs_base_url.empty() && !agent.base_url) {
        checks.push_back({name + " base_url", "warning",
                          "no base_url: " + cli.needs_base_url + " (docs/agents.md)"});
    }

    // The endpoint, reached the way the agent would (proxies included), without a request.
    auto endpoint = config::model_endpoint(agent, getenv_value);
    if (!endpoint.url) {
        checks.push_back({name + " endpoint", "ok", endpoint.provider + " (not probed)"});
    } else if (auto reached =
                   github::probe_endpoint(*endpoint.url, std::chrono::seconds(3), getenv_value)) {
        checks.push_back(
            {name + " endpoint", "ok", *endpoint.url + " reachable (" + *reached + ")"});
    } else {
        checks.push_back({name + " endpoint", "warning",
                          *endpoint.url + " unreachable: " + reached.error().message +
                              "; the agent would wait silently until its timeout"});
    }

    // A key, or the CLI's own login.
    std::string found;
    for (const auto& variable : cli.secrets) {
        if (agent.env_values.count(variable) || getenv_value(variable.c_str())) {
            found = variable + " set";
            break;
        }
    }
    if (found.empty()) {
        if (auto home = getenv_value("HOME")) {
            for (const auto& file : cli.login_files) {
                std::error_code ec;
                if (fs::exists(fs::path(*home) / file, ec)) {
                    found = "its own login (~/" + file + ")";
                    break;
                }
            }
        }
    }
    if (found.empty() && !endpoint.provider.empty()) found = endpoint.provider + " credentials";
    if (found.empty())
        checks.push_back({name + " key", "warning",
                          "no " + cli.secrets.front() + " and no login of " + cli.program +
                              "'s own: its first request would fail"});
    else
        checks.push_back({name + " key", "ok", found});
}

// The prepared environment (docs/environments.md): where its setup comes from, whether it is
// built, and how it reaches agents on this machine.
void check_environment(const Workspace& ws, std::vector<Check>& checks) {
    auto head = git::git_line(ws.root, {"rev-parse", "--verify", "--quiet", "HEAD"});
    if (!head) return;
    auto spec = environment::spec_at(ws.config, ws.root, *head);
    if (!spec) {
        checks.push_back({"environment", "error", spec.error().message});
        return;
    }
    if (!*spec) return;
    const environment::Store store(environment::default_store());
    std::string state = "not built yet (the first run builds it)";
    if (auto key = environment::key_at(**spec, ws.root, *head,
                                       agent::confined_runner(ws.config, ws.root), ws.root);
        !key) {
        checks.push_back({"environment", "error", key.error().message});
        return;
    } else if (fs::exists(store.dir_of(*key) / "manifest.json")) {
        state = "built";
    }
    checks.push_back(
        {"environment", "ok",
         environment::describe(**spec) + "; at HEAD: " + state + " in " + store.root().string()});
    const bool sandboxed = ws.config.sandbox != config::SandboxMode::none &&
                           probe_sandbox(*agent::sandbox_maker(ws.config)).available;
    auto own = check::cocode_git_dir(ws.root);
    if (!own) return;
    std::error_code ec;
    fs::create_directories(*own / "views", ec);
    fs::create_directories(store.root(), ec);
    const auto choice = environment::choose_mode(sandboxed, *own / "views", store.root(), *own);
    const std::string how =
        choice.mode == environment::Mode::overlay
            ? "overlay: each agent and each check writes over it in a mount namespace of its own"
            : std::string(environment::mode_name(choice.mode)) + ": each worktree gets a copy (" +
                  choice.why + ")";
    checks.push_back(
        {"environment view", choice.mode == environment::Mode::overlay ? "ok" : "warning", how});
}

// The agents' network (docs/security.md): enclosed behind the allowlist needs the sandbox's
// network namespace; without it a configured allowlist or audit refuses every run.
void check_network(const config::Config& config, const fs::path& program,
                   const std::string& no_sandbox, std::vector<Check>& checks) {
    const bool sandboxed = !program.empty();
    const std::string why_not = sandboxed ? network_namespace_refused(program) : no_sandbox;
    const auto decided = agent::decide_network(config.network.mode, sandboxed,
                                               sandboxed && why_not.empty(), why_not);
    if (!decided.refused.empty()) {
        checks.push_back({"network", "missing", decided.refused + ": runs are refused"});
        return;
    }
    if (decided.mode == config::NetworkMode::open) {
        checks.push_back({"network", "warning",
                          config.network.mode ? "open (network.mode): agents reach any host"
                                              : "open: agents reach any host (" + why_not + ")"});
        return;
    }
    const bool audit = decided.mode == config::NetworkMode::audit;
    checks.push_back({"network", "ok",
                      std::string(audit ? "audit" : "allowlist") +
                          ": each agent in a network namespace of its own, out only through its "
                          "run's proxy" +
                          (audit ? ", which lets everything by and records it"
                                 : (config.network.allow.empty()
                                        ? ", to its model's endpoint"
                                        : ", to its model's endpoint and " +
                                              std::to_string(config.network.allow.size()) +
                                              " more (network.allow)"))});
}

// Each configured agent: its program found, and what its kind needs (a CLI's login or key, a
// built-in agent's model).
void check_agents(const config::Config& config, std::vector<Check>& checks) {
    if (config.agents.empty())
        checks.push_back({"agents", "warning", "none configured (cocode-dispatch init)"});
    for (const auto& agent : config.agents) {
        const std::string name = "agent " + agent.name;
        if (config::is_builtin(agent.type)) {
            check_builtin_agent(agent, checks);
            continue;
        }
        auto program = find_in_path(agent.argv.front());
        if (!program) {
            checks.push_back(
                {name, "missing", agent.argv.front() + " " + why_not_found(agent.argv.front())});
            continue;
        }
        if (agent.type == config::AgentType::command)
            checks.push_back({name, "ok", program->string()});
        else
            check_cli_agent(agent, *program, checks);
    }
}

// What the configuration lets sandboxed children read besides what they need (`readable`).
void check_readable(const config::Config& config, std::vector<Check>& checks) {
    if (config.readable.empty()) return;
    std::string shown, missing;
    const auto paths = config::readable_paths(config, agent::user_home());
    std::error_code ec;
    for (std::size_t i = 0; i < config.readable.size(); ++i) {
        shown += (shown.empty() ? "" : ", ") + config.readable[i];
        if (i < paths.size() && !std::filesystem::exists(paths[i], ec))
            missing += (missing.empty() ? "" : ", ") + config.readable[i];
    }
    checks.push_back(
        {"sandbox reads", missing.empty() ? "ok" : "warning",
         "also " + shown + " (readable)" + (missing.empty() ? "" : "; not there: " + missing)});
}

// A credential the repository's own git settings hold (the token actions/checkout leaves as an
// extra header, a remote's URL with one): a sandboxed child never reads them, but everything
// else run in this clone does. Named by the setting, never by its value.
void check_repository_credentials(const std::filesystem::path& root, std::vector<Check>& checks) {
    auto settings = git::git_output(
        root, {"config", "--local", "--get-regexp",
               "^(http\\..*\\.extraheader|remote\\..*\\.url|remote\\..*\\.pushurl)$"});
    if (!settings) return;  // none of them set (git exits 1)
    std::vector<std::string> holding;
    std::size_t at = 0;
    while (at < settings->size()) {
        std::size_t end = settings->find('\n', at);
        if (end == std::string::npos) end = settings->size();
        const std::string line = settings->substr(at, end - at);
        at = end + 1;
        const std::size_t space = line.find(' ');
        if (space == std::string::npos) continue;
        const std::string key = line.substr(0, space), value = line.substr(space + 1);
        std::string lower = value;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const bool header =
            key.size() > 12 && key.compare(key.size() - 12, 12, ".extraheader") == 0;
        // A URL's user part with a password, or a token for a user (https://ghp_…@host/).
        bool in_url = false;
        if (const std::size_t scheme = value.find("://"); !header && scheme != std::string::npos) {
            const std::size_t start = scheme + 3;
            const std::size_t host_end = std::min(value.find('/', start), value.size());
            const std::size_t at_sign = value.find('@', start);
            if (at_sign < host_end) {
                const std::string user = value.substr(start, at_sign - start);
                in_url = user.find(':') != std::string::npos ||
                         (lower.rfind("http", 0) == 0 && user.size() >= 20);
            }
        }
        if ((header && lower.find("authorization") != std::string::npos) || in_url)
            holding.push_back(key);
    }
    if (holding.empty()) return;
    std::string named;
    for (const auto& key : holding) named += (named.empty() ? "" : ", ") + key;
    checks.push_back(
        {"repository credentials", "warning",
         named + " in .git/config holds a credential; agents never read it, but every other "
                 "program run in this clone does (actions/checkout: persist-credentials: false)"});
}

// The sandbox the configuration asks for, and the network it can then give the agents.
void check_sandbox(const config::Config& config, std::vector<Check>& checks) {
    if (config.sandbox == config::SandboxMode::none) {
        checks.push_back({"sandbox", "warning",
                          "none: no protection at all. Agents, their verify commands, setup and "
                          "builds run as you, on the host: they can read and write everything "
                          "you can (docs/security.md)"});
        check_network(config, {}, "sandbox: none", checks);
    } else if (const auto& probe = probe_sandbox(*agent::sandbox_maker(config)); probe.available) {
        checks.push_back(
            {"sandbox", "ok",
             probe.version + " (" + probe.program.string() +
                 "): agents and everything that runs their code (verify, setup, builds) read "
                 "only the system's folders, their own worktree, HOME and /tmp and the main "
                 "repository's objects, and write only their own (docs/security.md)"});
        check_readable(config, checks);
        check_network(config, probe.program, "", checks);
    } else {
        checks.push_back({"sandbox", "missing",
                          probe.why_not + "; no agent runs without it (`\"sandbox\": \"none\"` "
                                          "runs them with no protection at all)"});
        check_network(config, {}, probe.why_not, checks);
    }
}

}  // namespace

int run_doctor(const DoctorArgs& args) {
    std::vector<Check> checks;
    constexpr char kGitCheck[] = "git";
    if (auto git = git::cli_version(); git)
        checks.push_back({kGitCheck, "ok", *git});
    else if (git.error().code == ExitCode::missing_dependency)
        checks.push_back({kGitCheck, "missing", "git is not on PATH"});
    else
        checks.push_back({kGitCheck, "error", git.error().message});
    checks.push_back({"libgit2", "ok", git::libgit2_version()});

    // Every check runs, whatever failed before it: a broken configuration still leaves the
    // repository, the sandbox, the hook and the token to look at.
    std::optional<Workspace> ws;
    try {
        ws = open_workspace(false);
    } catch (const Failure& failure) {
        checks.push_back({"repository", "error", failure.error().message});
    }
    if (ws) {
        checks.push_back({"repository", "ok", ws->root.string()});
        auto repo = git::Repository::open(ws->root);
        if (repo && !repo->has_commits())
            checks.push_back(
                {"commits", "error", "none yet: agents start from a commit; make the first"});
        if (auto unseen = changes_agents_will_not_see(*ws); !unseen.empty())
            checks.push_back({"main worktree", "warning",
                              std::to_string(unseen.size()) + " uncommitted change(s) (" +
                                  unseen.front() +
                                  "): agents start from the last commit and will not see them"});
        bool config_read = true;
        if (auto config = config::load_config(ws->root); config) {
            ws->config = std::move(*config);
            checks.push_back({"config", "ok", (ws->root / config::kConfigFile).string()});
        } else {
            config_read = false;
            checks.push_back({"config", "error", config.error().message});
        }
        // What a configuration that does not read configures is unknown, not "none".
        if (config_read)
            check_agents(ws->config, checks);
        else
            checks.push_back({"agents", "error",
                              "not checked: the configuration does not read (the line above)"});
        check_sandbox(ws->config, checks);
        check_repository_credentials(ws->root, checks);
        check_environment(*ws, checks);
        auto where = hook::locate_hooks(ws->root);
        if (where) {
            auto status = hook::hooks_status(*where, tool::sibling_executable("cocode-hook-shim"));
            for (const auto& hook : status.hooks) {
                std::string state(hook::state_name(hook.state));
                checks.push_back({"hook " + hook.name,
                                  hook.state == hook::HookState::installed ? "ok" : "warning",
                                  state + " in " + where->hooks_dir.string()});
            }
        }
        struct statvfs fsinfo {};
        if (::statvfs(ws->root.c_str(), &fsinfo) == 0) {
            double free_gb =
                static_cast<double>(fsinfo.f_bavail) * static_cast<double>(fsinfo.f_frsize) / 1e9;
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.1f GB free", free_gb);
            checks.push_back({"disk", free_gb < 1.0 ? "warning" : "ok", buf});
        }
    }
    // Which credential would be used, never its value: the same resolution the GitHub
    // client makes (App, GITHUB_TOKEN, GH_TOKEN, `gh auth token`, anonymous).
    if (auto api = github::resolve_api_url(std::nullopt); !api) {
        checks.push_back({"github token", "warning", api.error().message});
    } else if (auto auth = github::resolve_auth(*api); !auth) {
        checks.push_back({"github token", "warning", auth.error().message});
    } else if ((*auth)->source() == "anonymous") {
        checks.push_back({"github token", "warning",
                          "none: only public repositories and the local issue store"});
    } else {
        checks.push_back({"github token", "ok", "from " + (*auth)->source()});
    }

    bool missing = false, failed = false;
    for (const auto& c : checks) {
        missing = missing || c.state == "missing";
        failed = failed || c.state == "error";
    }
    if (args.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& c : checks)
            out.push_back({{"check", c.name}, {"state", c.state}, {"detail", c.detail}});
        std::cout << json_output(out, 2) << "\n";
    } else {
        for (const auto& c : checks)
            std::printf("%-8s %-22s %s\n", c.state.c_str(), c.name.c_str(),
                        terminal_safe_line(c.detail).c_str());
    }
    // A missing program is the protocol's 3; any other error 1; warnings alone 0.
    if (missing) return static_cast<int>(ExitCode::missing_dependency);
    return failed ? static_cast<int>(ExitCode::general) : 0;
}

}  // namespace cocode::dispatch_cli
