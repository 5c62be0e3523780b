// cocode-dispatch issues list|show: exactly what cocode sees of the issues it would work on.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/json_text.h"
#include "core/redact.h"
#include "core/terminal_text.h"
#include "workspace.h"

namespace cocode::dispatch_cli {
namespace {

using json = nlohmann::json;

// Everything here came from the issue's author or GitHub: shown, never interpreted.
std::string line(std::string_view text) { return terminal_safe_line(text); }
std::string text(std::string_view body) { return terminal_safe(body); }

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + line(item);
    return out;
}

std::unique_ptr<issues::IssueSource> open(const SourceFlags& flags) {
    return issues::open_source(flags.resolve("cocode-dispatch")).value_or_throw();
}

}  // namespace

int run_issues_list(const IssuesListArgs& args) {
    auto source = open(args.source);
    issues::IssueQuery query;
    query.labels = args.labels;
    query.state = args.state;
    query.assignee = args.assignee;
    // One file that does not read hides none of the others: each is named, and the exit is 2.
    std::vector<Error> unreadable;
    query.on_unreadable = [&](const Error& e) { unreadable.push_back(e); };
    auto list = source->list(query).value_or_throw();
    const int code = unreadable.empty() ? 0 : static_cast<int>(ExitCode::usage);
    if (args.json) {
        json out = json::array();
        for (const auto& issue : list) out.push_back(github::to_json(issue));
        std::cout << json_output(out, 2) << "\n";
        for (const auto& e : unreadable) notice("error: " + e.message);
        return code;
    }
    for (const auto& issue : list) {
        std::cout << "#" << issue.number << "\t" << line(issue.state) << "\t" << line(issue.title);
        if (!issue.labels.empty()) std::cout << "\t[" << joined(issue.labels) << "]";
        std::cout << "\n";
    }
    std::cerr << list.size() << (list.size() == 1 ? " issue" : " issues") << " from "
              << source->describe() << "\n";
    for (const auto& e : unreadable) notice("error: " + e.message);
    return code;
}

int run_issues_show(const IssuesShowArgs& args) {
    auto source = open(args.source);
    auto issue = source->get(args.number).value_or_throw();
    std::vector<github::Comment> comments;
    if (args.comments) comments = source->comments(args.number).value_or_throw();
    if (args.json) {
        json out = github::to_json(issue);
        if (args.comments) {
            out["comment_list"] = json::array();
            for (const auto& c : comments) out["comment_list"].push_back(github::to_json(c));
        }
        std::cout << json_output(out, 2) << "\n";
        return 0;
    }
    std::cout << "#" << issue.number << " " << line(issue.title) << "\n"
              << "state:  " << line(issue.state) << "\n"
              << "labels: " << joined(issue.labels) << "\n";
    if (!issue.assignees.empty()) std::cout << "assignees: " << joined(issue.assignees) << "\n";
    if (!issue.html_url.empty()) std::cout << "url:    " << line(issue.html_url) << "\n";
    std::cout << "\n" << text(issue.body);
    if (!issue.body.empty() && issue.body.back() != '\n') std::cout << "\n";
    for (const auto& c : comments) {
        std::cout << "\n--- comment " << c.id << " by " << line(c.author) << " ("
                  << line(c.updated_at) << ")\n"
                  << text(c.body);
        if (!c.body.empty() && c.body.back() != '\n') std::cout << "\n";
    }
    return 0;
}

}  // namespace cocode::dispatch_cli
