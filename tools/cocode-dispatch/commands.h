// The subcommands of cocode-dispatch, one file each; main.cpp only wires them to CLI11.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "issues/source.h"

namespace cocode::dispatch_cli {

// The flags every command that talks to an issue source shares.
struct SourceFlags {
    issues::SourceOptions options;
    std::optional<std::string> issues_dir;
    std::optional<std::string> ca_bundle;
    int per_page = 100;

    void add_to(CLI::App& command);
    issues::SourceOptions resolve() const;
};

struct IssuesListArgs {
    SourceFlags source;
    std::vector<std::string> labels;
    std::optional<std::string> state;
    std::optional<std::string> assignee;
    bool json = false;
};

struct IssuesShowArgs {
    SourceFlags source;
    long number = 0;
    bool comments = false;
    bool json = false;
};

int run_issues_list(const IssuesListArgs& args);
int run_issues_show(const IssuesShowArgs& args);

}  // namespace cocode::dispatch_cli
