// The prepared environment's decisions as tables: what keys it, what a devcontainer.json's
// commands are in their three forms, how its variables read, and the check's worktree and
// setup items.
#include <gtest/gtest.h>

#include "check/judge.h"
#include "environment/key.h"
#include "environment/spec.h"

namespace cocode::environment {
namespace {

Spec npm_spec() {
    Spec spec;
    spec.source = "environment in .cocode/config.json";
    spec.setup = {"npm ci"};
    return spec;
}

KeyInputs inputs() {
    KeyInputs in;
    in.identity = "https://github.com/o/r.git";
    in.platform = "Linux x86_64 debian 12";
    in.files = {{"package-lock.json", std::string(40, 'a')}};
    return in;
}

TEST(EnvironmentKey, EveryInputKeysItAndNothingElse) {
    const std::string key = key_of(npm_spec(), inputs());
    EXPECT_EQ(key.size(), 24u);
    EXPECT_EQ(key, key_of(npm_spec(), inputs())) << "a function of its inputs";
    struct Change {
        const char* what;
        std::function<void(Spec&, KeyInputs&)> apply;
    };
    const Change changes[] = {
        {"a lockfile's contents", [](Spec&, KeyInputs& in) { in.files[0].blob[0] = 'b'; }},
        {"another lockfile",
         [](Spec&, KeyInputs& in) {
             in.files.push_back({"a/yarn.lock", "c"});
         }},
        {"a setup command", [](Spec& s, KeyInputs&) { s.setup.push_back("npm run build"); }},
        {"a key command's output",
         [](Spec&, KeyInputs& in) { in.commands.emplace_back("node --version", "v20\n"); }},
        {"the paths kept", [](Spec& s, KeyInputs&) { s.paths = {"node_modules"}; }},
        {"a variable", [](Spec& s, KeyInputs&) { s.env.emplace_back("NODE_ENV", "test"); }},
        {"the repository", [](Spec&, KeyInputs& in) { in.identity = "https://github.com/o/x"; }},
        {"the platform", [](Spec&, KeyInputs& in) { in.platform = "Linux aarch64 debian 12"; }},
    };
    for (const auto& c : changes) {
        Spec spec = npm_spec();
        KeyInputs in = inputs();
        c.apply(spec, in);
        EXPECT_NE(key_of(spec, in), key) << c.what;
    }
    // Where the spec came from is not part of what it makes.
    Spec renamed = npm_spec();
    renamed.source = ".devcontainer/devcontainer.json";
    EXPECT_EQ(key_of(renamed, inputs()), key);
}

// A committed file's name is the agent's to choose: no name (a newline in it, a space, what
// another part of the key reads like) makes one commit's key another's.
TEST(EnvironmentKey, NoFileNameForgesTheKeyOfAnotherCommit) {
    const std::string a(40, 'a'), b(40, 'b');
    KeyInputs both = inputs();
    both.files = {{"a/package-lock.json", a}, {"b/package-lock.json", b}};
    const std::pair<const char*, std::vector<CommitFile>> forgeries[] = {
        {"a newline and the next line",
         {{"a/package-lock.json\nfile " + b + " b/package-lock.json", a}}},
        {"a space and the blob in the name", {{"a/package-lock.json", a + " b/package-lock.json"}}},
        {"the other part in the command's place", {{"a/package-lock.json", a}}},
    };
    for (const auto& [what, files] : forgeries) {
        KeyInputs forged = inputs();
        forged.files = files;
        if (std::string(what).find("command") != std::string::npos)
            forged.commands.emplace_back("x", "\nfile " + b + " b/package-lock.json");
        EXPECT_NE(key_of(npm_spec(), forged), key_of(npm_spec(), both)) << what;
    }
    // Nor a variable's value another variable.
    Spec one = npm_spec(), two = npm_spec();
    one.env = {{"A", "1\nenv B=2"}};
    two.env = {{"A", "1"}, {"B", "2"}};
    EXPECT_NE(key_of(one, inputs()), key_of(two, inputs()));
}

TEST(EnvironmentKey, TheLockfilesAtTheRootAndInWorkspacesKeyItByDefault) {
    const std::vector<CommitFile> files = {{"README.md", "1"},
                                           {"package-lock.json", "2"},
                                           {"packages/a/yarn.lock", "3"},
                                           {"node_modules/x/package-lock.json", "4"},
                                           {"vendor/y/Cargo.lock", "5"},
                                           {"requirements-dev.txt", "6"},
                                           {"src/uv.lock", "7"},
                                           {"docs/requirements.md", "8"},
                                           {"go.sum", "9"}};
    std::vector<std::string> keyed;
    for (const auto& f : key_files(files, std::nullopt)) keyed.push_back(f.path);
    EXPECT_EQ(keyed,
              (std::vector<std::string>{"go.sum", "package-lock.json", "packages/a/yarn.lock",
                                        "requirements-dev.txt", "src/uv.lock"}));
    // Configured globs replace the lockfiles.
    keyed.clear();
    for (const auto& f : key_files(files, std::vector<std::string>{"*.md"}))
        keyed.push_back(f.path);
    EXPECT_EQ(keyed, (std::vector<std::string>{"README.md", "docs/requirements.md"}));
    EXPECT_EQ(
        changed_key_files({{"a.lock", "1"}, {"b.lock", "2"}}, {{"b.lock", "3"}, {"c.lock", "4"}}),
        (std::vector<std::string>{"a.lock", "b.lock", "c.lock"}));
}

TEST(Devcontainer, ItsThreeCommandsInTheirThreeForms) {
    const std::string text = R"({
      // JSON with comments, and trailing commas, as VS Code writes it
      "image": "mcr.microsoft.com/devcontainers/python:3.12",
      "onCreateCommand": "pip install -r requirements.txt",
      "updateContentCommand": ["npm", "ci", "--ignore-scripts"],
      "postCreateCommand": {
        "tools": "make tools",
        "hooks": ["sh", "-c", "echo 'it''s' > /dev/null"],
      },
      "customizations": {"vscode": {"extensions": ["a,b", "/* not a comment */"]}},
    })";
    auto spec = devcontainer_spec(text, kDevcontainerFile);
    ASSERT_TRUE(spec) << spec.error().message;
    EXPECT_EQ(spec->setup, (std::vector<std::string>{
                               "pip install -r requirements.txt", "npm ci --ignore-scripts",
                               "make tools", "sh -c 'echo '\\''it'\\'''\\''s'\\'' > /dev/null'"}));
    EXPECT_EQ(spec->not_used, (std::vector<std::string>{"image"}));
    EXPECT_EQ(spec->fields, (std::vector<std::string>{"onCreateCommand", "updateContentCommand",
                                                      "postCreateCommand"}));
    EXPECT_NE(describe(*spec).find("its image is not used"), std::string::npos) << describe(*spec);

    const std::pair<const char*, const char*> bad[] = {
        {R"({"onCreateCommand": 3})", "field 'onCreateCommand': expected a command"},
        {R"({"postCreateCommand": {"x": 1}})", "field 'postCreateCommand.x'"},
        {R"({"updateContentCommand": []})", "field 'updateContentCommand': expected a program"},
        {R"({"updateContentCommand": ["npm", 1]})", "field 'updateContentCommand'"},
        {R"([1, 2])", "expected a JSON object"},
        {R"({"onCreateCommand": "x")", "expected a JSON object"},
    };
    for (const auto& [doc, says] : bad) {
        auto refused = devcontainer_spec(doc, kDevcontainerFile);
        ASSERT_FALSE(refused) << doc;
        EXPECT_EQ(refused.error().code, ExitCode::usage) << doc;
        EXPECT_NE(refused.error().message.find(says), std::string::npos)
            << doc << ": " << refused.error().message;
        EXPECT_EQ(refused.error().message.rfind(kDevcontainerFile, 0), 0u);
    }
    // The configuration's environment wins; a devcontainer with only an image has none.
    config::Config configured;
    configured.environment = config::EnvironmentConfig{{"uv sync"}, {}, {}, {}, {}, {}};
    auto chosen = spec_of(configured, std::string(text));
    ASSERT_TRUE(chosen && *chosen);
    EXPECT_EQ((*chosen)->setup, (std::vector<std::string>{"uv sync"}));
    auto image_only = spec_of(config::Config{}, std::string(R"({"image": "x"})"));
    ASSERT_TRUE(image_only);
    EXPECT_FALSE(*image_only);
}

TEST(EnvironmentVariables, TreeAndEarlierValuesAreNamedInThem) {
    const auto env = with_env({"PATH=/usr/bin", "HOME=/h", "VIRTUAL_ENV=/old"},
                              {{"PATH", "${tree}/.venv/bin:${env:PATH}"},
                               {"VIRTUAL_ENV", "${tree}/.venv"},
                               {"EMPTY", "${env:UNSET}x"},
                               {"LEFT", "${HOME} ${other:thing} ${unclosed"}},
                              "/w/t");
    EXPECT_EQ(env, (std::vector<std::string>{"HOME=/h", "PATH=/w/t/.venv/bin:/usr/bin",
                                             "VIRTUAL_ENV=/w/t/.venv", "EMPTY=x",
                                             "LEFT=${HOME} ${other:thing} ${unclosed"}));
}

}  // namespace
}  // namespace cocode::environment

namespace cocode::check {
namespace {

std::string status(std::initializer_list<std::string> entries) {
    std::string out;
    for (const auto& e : entries) out += e + std::string(1, '\0');
    return out;
}

TEST(WorktreeItem, SaysWhatTheWorktreeHoldsBeyondTheCommitAndNeverFails) {
    const std::string judged(40, 'a'), other(40, 'b');
    struct Case {
        const char* name;
        std::string status;
        std::string head;
        std::vector<std::string> files;
        const char* says;
    };
    const Case cases[] = {
        {"clean", "", judged, {}, "the worktree is the judged commit"},
        {"an uncommitted copy",
         status({" M calc.py"}),
         judged,
         {"calc.py"},
         "differs from aaaaaaa in 1 path: calc.py (modified)"},
        {"an ignored sitecustomize.py",
         status({"!! sitecustomize.py"}),
         judged,
         {"sitecustomize.py"},
         "sitecustomize.py (ignored)"},
        {"stale bytecode",
         status({"!! __pycache__/"}),
         judged,
         {"__pycache__/"},
         "__pycache__/ (ignored)"},
        {"a rename and a deletion",
         status({"R  new.py", "old.py", " D gone.py", "?? notes.txt"}),
         judged,
         {"new.py", "gone.py", "notes.txt"},
         "in 3 paths"},
        {"cocode's own folders and a copied environment",
         status({"!! .cocode/runs/", "?? .cocode/", "!! node_modules/", "!! node_modules/x/"}),
         judged,
         {},
         "the worktree is the judged commit"},
        {"another commit checked out",
         "",
         other,
         {},
         "the worktree has bbbbbbb checked out, not the judged aaaaaaa"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const CheckItem item = worktree_check(c.status, c.head, judged,
                                              {".cocode/runs", ".cocode/checks", "node_modules"});
        EXPECT_EQ(item.id, "worktree");
        EXPECT_EQ(item.outcome, Outcome::pass);
        EXPECT_EQ(item.files, c.files);
        EXPECT_NE(item.reason.find(c.says), std::string::npos) << item.reason;
        const bool differs = !c.files.empty() || c.head != judged;
        EXPECT_EQ(item.reason.find("not judged") != std::string::npos, differs) << item.reason;
    }
}

TEST(SetupItem, NamesTheEnvironmentAndFailsWithTheSetupsLine) {
    EXPECT_FALSE(setup_check({}));
    TreeSetup built;
    built.key = "0123456789abcdef01234567";
    built.mode = environment::Mode::overlay;
    built.source = "environment in .cocode/config.json";
    built.setup_commands = 1;
    auto item = setup_check(built);
    ASSERT_TRUE(item);
    EXPECT_EQ(item->outcome, Outcome::pass);
    EXPECT_EQ(item->reason,
              "environment 0123456789abcdef01234567 (overlay, environment in .cocode/config.json); "
              "worktree_setup: 1 command");
    built.changed = {"package-lock.json"};
    item = setup_check(built);
    EXPECT_NE(item->reason.find("built for this commit: package-lock.json changed"),
              std::string::npos);
    EXPECT_EQ(item->files, built.changed);
    built.failure = "environment 0123: `npm ci` exited with 1 (log: /s/0123.log)";
    item = setup_check(built);
    EXPECT_EQ(item->outcome, Outcome::fail);
    EXPECT_EQ(item->reason, built.failure);
    // A failing setup stops the verify commands, as any failed check does.
    EXPECT_EQ(verify_not_run_because({*item}, true), "not run: setup failed");
}

}  // namespace
}  // namespace cocode::check
