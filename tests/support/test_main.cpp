// Every test binary starts here: a hermetic git identity and no cocode variables inherited
// from whoever runs the suite (an agent's run could be running it).
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
    ::setenv("GIT_AUTHOR_NAME", "cocode test", 1);
    ::setenv("GIT_AUTHOR_EMAIL", "test@cocode.invalid", 1);
    ::setenv("GIT_COMMITTER_NAME", "cocode test", 1);
    ::setenv("GIT_COMMITTER_EMAIL", "test@cocode.invalid", 1);
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
    for (const char* name :
         {"JRUN_RUN_FOLDER", "COCODE_READY_MARKER", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"})
        ::unsetenv(name);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
