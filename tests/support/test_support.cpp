#include "test_support.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "proc/command.h"

namespace cocode::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
    // Under COCODE_TEST_SCRATCH (set by CMake for the tests that hold a GitHub token) the
    // folders stay after the test, for the suite's final scan for leaked tokens.
    const char* scratch = std::getenv("COCODE_TEST_SCRATCH");
    keep_ = scratch != nullptr && *scratch != '\0';
    fs::path parent = keep_ ? fs::path(scratch) : fs::temp_directory_path();
    fs::create_directories(parent);
    std::string tmpl = (parent / "cocode-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(tmpl);
}

TempDir::~TempDir() {
    if (keep_) return;
    std::error_code ec;
    // A test may have made a file read-only; give the owner write access back first.
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && !it->is_symlink(ec))
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
}

Shell sh(const std::string& script, const fs::path& cwd, const std::string& input) {
    CommandOptions options;
    options.cwd = cwd;
    options.input = input;
    auto r = run_command({"/bin/sh", "-c", script}, options);
    if (!r) return Shell{-1, "", r.error().message};
    return Shell{r->exit_code, r->out, r->err};
}

std::string sh_ok(const std::string& script, const fs::path& cwd) {
    Shell r = sh(script, cwd);
    EXPECT_EQ(r.exit_code, 0) << "script: " << script << "\nstdout: " << r.out
                              << "\nstderr: " << r.err;
    return r.out;
}

void make_repo(const fs::path& dir) {
    fs::create_directories(dir);
    sh_ok(
        "git init -q -b main . && echo hello > README.md && git add README.md && "
        "git commit -q -m base",
        dir);
}

void make_project_on_origin(const fs::path& dir,
                            const std::vector<std::pair<std::string, std::string>>& agents,
                            nlohmann::json config) {
    make_repo(dir);
    fs::create_directories(dir / ".cocode");
    for (const auto& [name, work] : agents) {
        const fs::path script = dir / ".cocode" / (name + ".sh");
        write_text(script, "#!/bin/sh\n" + work +
                               "\ngit add -A\n"
                               "git commit -q -m \"Fix #$COCODE_ISSUE_NUMBER\" -m "
                               "\"$COCODE_READY_MARKER\"\n");
        fs::permissions(script, fs::perms::owner_all);
        config["agents"][name] = {{"command", ".cocode/" + name + ".sh"}};
    }
    write_text(dir / ".cocode/config.json", config.dump(2));
    const fs::path origin = dir.parent_path() / "origin.git";
    sh_ok("git add -A && git commit -q -m 'cocode' && git init -q --bare " +
              quote(origin.string()) + " && git push -q " + quote(origin.string()) +
              " main:main && git -C " + quote(origin.string()) +
              " symbolic-ref HEAD refs/heads/main",
          dir);
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::vector<std::string> read_lines(const fs::path& path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

fs::path tool_path(const std::string& name) { return fs::path(COCODE_BIN_DIR) / name; }
fs::path hook_tool() { return tool_path("cocode-hook"); }
fs::path hook_shim() { return tool_path("cocode-hook-shim"); }

bool campaign() {
    const char* value = std::getenv("COCODE_CAMPAIGN");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

}  // namespace cocode::test
