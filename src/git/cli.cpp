#include "git/cli.h"

#include "proc/environment.h"

namespace cocode::git {
namespace {

// "git rev-parse --verify HEAD": the command as a person would type it, for errors.
std::string shown(const std::vector<std::string>& args) {
    std::string text = "git";
    for (const auto& a : args) text += " " + a;
    return text.size() > 200 ? text.substr(0, 197) + "..." : text;
}

std::string where(const std::filesystem::path& dir) {
    return dir.empty() ? std::string() : " (in " + dir.string() + ")";
}

// The git subcommand `args` runs, past the options before it.
std::string subcommand_of(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-c" || args[i] == "-C") {
            ++i;
            continue;
        }
        if (args[i].rfind("-", 0) != 0) return args[i];
    }
    return "";
}

// The credential helper of a push: it answers `get` with what it reads from descriptor 3 (a
// pipe run_command fills), once per ask, and ignores `store` and `erase`.
constexpr char kPipeHelper[] =
    "!f() { test \"$1\" = get || exit 0; cat >/dev/null; "
    "IFS= read -r u <&3 && IFS= read -r p <&3 && printf 'username=%s\\npassword=%s\\n' \"$u\" "
    "\"$p\"; }; f";

}  // namespace

Result<CommandResult> run_git(const std::filesystem::path& dir,
                              const std::vector<std::string>& args, const GitOptions& options) {
    std::vector<std::string> argv = {"git"};
    if (!dir.empty()) argv.insert(argv.end(), {"-C", dir.string()});
    // What a repository's or a user's configuration says to run, git runs as us: an agent's
    // fsmonitor or hooks never. `config` and `rev-parse` read those settings as data (where
    // the hooks folder is), and run nothing.
    const std::string verb = subcommand_of(args);
    if (!options.hooks && verb != "config" && verb != "rev-parse")
        argv.insert(argv.end(), {"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"});
    CommandOptions command;
    if (options.credential) {
        // Only this origin's: every other helper is off, and ours answers for it alone.
        argv.insert(argv.end(),
                    {"-c", "credential.helper=", "-c",
                     "credential." + options.credential->url + ".helper=" + kPipeHelper});
        std::string record;
        for (int ask = 0; ask < 4; ++ask)
            record += options.credential->username + "\n" + options.credential->password + "\n";
        command.fd3_input = record;
    }
    argv.insert(argv.end(), args.begin(), args.end());
    // cocode runs unattended: git never stops to ask for a password on the terminal.
    command.environment =
        without_secrets(options.environment ? *options.environment : current_environment());
    command.environment->push_back("GIT_TERMINAL_PROMPT=0");
    command.input = options.input;
    command.deadline = options.deadline;
    auto result = run_command(argv, command);
    if (!result) return std::move(result).error();
    if (result->timed_out)
        return Error::general(shown(args) + ": still running after " +
                              std::to_string(options.deadline.count() / 1000) + " s; ended" +
                              where(dir));
    return result;
}

Result<std::string> git_output(const std::filesystem::path& dir,
                               const std::vector<std::string>& args, const GitOptions& options) {
    auto result = run_git(dir, args, options);
    if (!result) return std::move(result).error();
    if (result->exit_code != 0) {
        std::string said = first_line(result->err.empty() ? result->out : result->err);
        if (said.empty()) said = "exited with " + std::to_string(result->exit_code);
        return Error::general(shown(args) + ": " + said + where(dir));
    }
    return std::move(result->out);
}

Result<std::string> git_line(const std::filesystem::path& dir, const std::vector<std::string>& args,
                             const GitOptions& options) {
    auto out = git_output(dir, args, options);
    if (!out) return std::move(out).error();
    return first_line(*out);
}

std::vector<std::string> environment_without_config() {
    std::vector<std::string> environment = current_environment();
    std::erase_if(environment, [](const std::string& entry) {
        return entry.rfind("GIT_CONFIG", 0) == 0 || entry.rfind("GIT_ATTR", 0) == 0;
    });
    environment.insert(environment.end(), {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
                                           "GIT_ATTR_NOSYSTEM=1"});
    return environment;
}

bool is_object_id(std::string_view text) {
    return (text.size() == 40 || text.size() == 64) &&
           text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Result<std::string> cli_version() {
    GitOptions quick;
    quick.deadline = std::chrono::seconds(30);
    return git_line({}, {"--version"}, quick);
}

Result<void> branch_from_origin(const std::filesystem::path& dir, const std::string& branch,
                                const GitOptions& fetch) {
    const std::string tracking = "refs/remotes/origin/" + branch;
    if (auto fetched = git_output(
            dir, {"fetch", "--quiet", "origin", "+refs/heads/" + branch + ":" + tracking}, fetch);
        !fetched)
        return std::move(fetched).error();
    auto local = run_git(
        dir, {"rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/" + branch});
    if (!local) return std::move(local).error();
    if (local->exit_code == 0) return {};  // a branch of that name is here already
    if (auto made = git_output(dir, {"branch", "--quiet", "--end-of-options", branch, tracking});
        !made)
        return std::move(made).error();
    return {};
}

}  // namespace cocode::git
