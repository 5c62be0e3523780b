// GitHub's own example webhook payloads (@octokit/webhooks-examples, a test peer installed in
// COCODE_PEERS_DIR): what the trigger and action tests feed cocode as events.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace cocode::test {

// The first example GitHub gives of `event` with `action`; a test failure when there is none.
// The examples (megabytes of JSON) are read once a process: a table test asks for hundreds,
// and under ASan each read took a second.
inline nlohmann::json example_payload(const std::string& event, const std::string& action) {
    static const nlohmann::json all = [] {
        std::ifstream in(std::filesystem::path(COCODE_PEERS_DIR) /
                         "node_modules/@octokit/webhooks-examples/api.github.com/index.json");
        const std::string text{std::istreambuf_iterator<char>(in),
                               std::istreambuf_iterator<char>()};
        return nlohmann::json::parse(text);
    }();
    for (const auto& entry : all)
        if (entry["name"] == event)
            for (const auto& example : entry["examples"])
                if (example.value("action", "") == action) return example;
    ADD_FAILURE() << "no example of " << event << "." << action;
    return nlohmann::json::object();
}

}  // namespace cocode::test
