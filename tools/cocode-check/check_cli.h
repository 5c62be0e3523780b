// cocode-check's commands: judging one run (or a worktree in CI), and the comparison across
// the agents of an issue. main.cpp only wires the flags.
#pragma once

#include <optional>
#include <string>

#include "common/source_flags.h"

namespace cocode::check_cli {

struct CheckArgs {
    tool::SourceFlags source;
    std::optional<std::string> run;
    std::optional<std::string> worktree;
    std::optional<std::string> base;
    std::optional<std::string> head;
    std::optional<int> exit_code;
    std::optional<long> issue;
    std::optional<std::string> agent;
    std::optional<std::string> branch;
    std::optional<std::string> report_dir;
    bool summary = false;
    bool json = false;
    bool publish = false;
    bool push = false;
    bool open_pr = false;
    bool no_verify = false;
    bool quiet = false;           // no report on stdout (the pre-push gate prints its own on FAIL)
    std::string format = "auto";  // the report on stdout: text, markdown, or text on a terminal
};

int run_check(const CheckArgs& args);
int run_summary(const CheckArgs& args);

}  // namespace cocode::check_cli
