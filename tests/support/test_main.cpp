// Every test binary starts here: a hermetic git identity and no cocode variables inherited
// from whoever runs the suite (an agent's run could be running it), and no GitHub credentials,
// API URL or proxy from the environment: tests set what they use.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
    ::setenv("GIT_AUTHOR_NAME", "cocode test", 1);
    ::setenv("GIT_AUTHOR_EMAIL", "test@cocode.invalid", 1);
    ::setenv("GIT_COMMITTER_NAME", "cocode test", 1);
    ::setenv("GIT_COMMITTER_EMAIL", "test@cocode.invalid", 1);
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    for (const char* name :
         {"JRUN_RUN_FOLDER", "COCODE_READY_MARKER", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
          "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "COCODE_GITHUB_APP_ID",
          "COCODE_GITHUB_APP_INSTALLATION_ID", "COCODE_GITHUB_APP_PRIVATE_KEY_PATH", "HTTPS_PROXY",
          "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "SSL_CERT_FILE"})
        ::unsetenv(name);
    // Scratch folders live inside the checkout's build tree; without a ceiling, a test that
    // expects "no repository here" would find the checkout itself (and its origin remote).
    if (const char* scratch = std::getenv("COCODE_TEST_SCRATCH"); scratch && *scratch) {
        std::filesystem::create_directories(scratch);
        ::setenv("GIT_CEILING_DIRECTORIES", std::filesystem::canonical(scratch).c_str(), 1);
    } else {
        ::setenv("GIT_CEILING_DIRECTORIES",
                 std::filesystem::canonical(std::filesystem::temp_directory_path()).c_str(), 1);
    }
    // The ledger of GitHub content writes every live comment of the machine's user shares
    // (check/progress.h) is the test process's own: tests running at once do not spend it.
    const auto state = std::filesystem::path(std::getenv("GIT_CEILING_DIRECTORIES")) /
                       ("state-" + std::to_string(::getpid()));
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
