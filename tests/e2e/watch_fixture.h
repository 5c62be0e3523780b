// What the watch and serve tests share: a loopback GitHub whose comment lists lag behind its
// writes, five issues labelled `cocode`, a project with one script agent on an origin every
// machine clones, and what to count afterwards.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_github.h"
#include "run/run_folder.h"
#include "test_support.h"

namespace cocode::test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr int kIssues = 5;

// The repository of GitHub's example payloads, so that webhooks can be delivered as they are.
constexpr char kRepo[] = "Codertocat/Hello-World";

class Watch : public ::testing::Test {
  protected:
    void SetUp() override {
        FakeGitHub::Options options = loopback_options();
        options.owner = "Codertocat";
        options.repo = "Hello-World";
        github_ = std::make_unique<FakeGitHub>(options);
        github_->lag_comment_lists(2);
        for (int n = 1; n <= kIssues; ++n)
            github_->add_issue(n, "Issue " + std::to_string(n), "Fix it.", {"cocode"});

        make_project_on_origin(
            dir_ / "project", {{"fast", "echo \"fixed $COCODE_ISSUE_NUMBER\" > fixed.txt"}},
            {{"check", {{"allowed_paths", {"fixed.txt"}}}}, {"publish", {{"push", true}}}});
    }

    // A machine of its own: a clone of the project.
    fs::path machine(const std::string& name) {
        const fs::path clone = dir_ / name;
        sh_ok("git clone -q origin.git " + name + " && cd " + name +
                  " && git config user.name 'cocode agent' && git config user.email "
                  "agent@cocode.invalid",
              dir_.path());
        return clone;
    }

    // `cocode-dispatch <command>` in `clone`, as a machine runs it (GitHub's token and address
    // in its environment, and `env`); its pid goes to <clone>/watch.pid first.
    Shell dispatch(const fs::path& clone, const std::string& command, const std::string& env = "") {
        return sh("echo $$ > watch.pid; exec env GITHUB_TOKEN=" + std::string(kTestToken) +
                      " GITHUB_API_URL=" + github_->base_url() +
                      " SSL_CERT_FILE=" + quote(loopback_tls().files.certificate.string()) + " " +
                      env + " " + quote(tool_path("cocode-dispatch").string()) + " " + command +
                      " --repo " + kRepo,
                  clone);
    }
    // A machine "a" whose configuration routes by evidence among `good` (always passes), `bad`
    // (never does) and `new` (passes, never ran): `good` and `bad` ran on every issue, whose
    // labels were then taken off, and issue 6 is labelled — what routing at watch and serve
    // starts from.
    fs::path machine_with_evidence() {
        const fs::path project = dir_ / "project";
        json config = json::parse(read_text(project / ".cocode/config.json"));
        const std::string pass =
            "echo fixed > fixed.txt && git add -A && git commit -q -m Fix -m "
            "\"$COCODE_READY_MARKER\"";
        config["agents"] = {{"good", {{"command", "sh"}, {"args", {"-c", pass}}}},
                            {"bad", {{"command", "sh"}, {"args", {"-c", "true"}}}},
                            {"new", {{"command", "sh"}, {"args", {"-c", pass}}}}};
        config["route"] = {{"mode", "evidence"}, {"explore", 0}};
        config.erase("publish");
        write_text(project / ".cocode/config.json", config.dump(2));
        sh_ok("git add -A && git commit -q -m route && git push -q ../origin.git main:main",
              project);
        const fs::path a = machine("a");
        for (int n = 1; n <= kIssues; ++n) {
            Shell ran = dispatch(a, "run " + std::to_string(n) + " --agent good --agent bad");
            EXPECT_EQ(ran.exit_code, 0) << ran.err;
            github_->set_label(n, "cocode", false);
        }
        github_->add_issue(6, "Issue 6", "Fix it.", {"cocode"});
        return a;
    }

    // `cocode-dispatch watch --once …`.
    Shell watch(const fs::path& clone, const std::string& flags = "") {
        return dispatch(clone, "watch --once --max-parallel 5 " + flags);
    }

    // `watch --once` `times` times in `clone`, each ending well.
    void watch_times(const fs::path& clone, int times) {
        for (int poll = 0; poll < times; ++poll) {
            Shell watched = watch(clone);
            ASSERT_EQ(watched.exit_code, 0) << watched.err;
        }
    }

    // The replies on `issue` that refuse `login` (thanking them, saying who may start cocode).
    int refusals_of(long issue, const std::string& login) {
        int replies = 0;
        for (const auto& c : github_->comments_of(issue))
            replies +=
                c["body"].get<std::string>().find("@" + login + " thanks") != std::string::npos;
        return replies;
    }

    // The runs every machine made, per issue.
    std::map<long, int> runs_per_issue(const std::vector<fs::path>& clones) {
        std::map<long, int> count;
        for (const auto& clone : clones)
            for (const auto& r : run::list_runs(clone / ".cocode/runs").runs) ++count[r.issue];
        return count;
    }

    std::vector<json> claims_on(long issue) {
        std::vector<json> out;
        for (const auto& c : github_->comments_of(issue))
            if (c["body"].get<std::string>().rfind(
                    "<!-- cocode:claim/issue-" + std::to_string(issue) + " -->", 0) == 0)
                out.push_back(c);
        return out;
    }

    // The issue is labelled cocode:done.
    bool answered(long issue) {
        const auto labels = github_->labels_of(issue);
        return std::find(labels.begin(), labels.end(), "cocode:done") != labels.end();
    }

    // Every issue run once, answered once: done, one claim saying so, one verdict comment.
    void expect_each_issue_answered_once(const std::vector<fs::path>& clones) {
        const auto runs = runs_per_issue(clones);
        for (long n = 1; n <= kIssues; ++n) {
            SCOPED_TRACE("issue " + std::to_string(n));
            EXPECT_EQ(runs.count(n) ? runs.at(n) : 0, 1);
            const auto labels = github_->labels_of(n);
            EXPECT_NE(std::find(labels.begin(), labels.end(), "cocode:done"), labels.end());
            EXPECT_EQ(std::find(labels.begin(), labels.end(), "cocode:running"), labels.end());
            const auto claims = claims_on(n);
            ASSERT_EQ(claims.size(), 1u);
            EXPECT_NE(claims[0]["body"].get<std::string>().find("\"state\":\"done\""),
                      std::string::npos)
                << claims[0]["body"];
            int verdicts = 0;
            for (const auto& c : github_->comments_of(n))
                verdicts +=
                    c["body"].get<std::string>().rfind(
                        "<!-- cocode:check/issue-" + std::to_string(n) + "/fast -->", 0) == 0;
            EXPECT_EQ(verdicts, 1);
        }
    }

    TempDir dir_;
    std::unique_ptr<FakeGitHub> github_;
};

}  // namespace cocode::test
