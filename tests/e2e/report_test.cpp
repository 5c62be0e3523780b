// Evidence (docs/report.md): what became of each agent's pull request — merged as it was,
// edited by a person before the merge, merged and reverted, closed unmerged, still open — learnt
// by `report --refresh` from the loopback GitHub and a real origin, and the scorecard that
// counts it, by agent and kind of work, as text, JSON and CSV.

#include <set>
#include <sstream>

#include "dispatch_fixture.h"
#include "fake_github.h"

namespace cocode::test {

class Report : public DispatchRun {
  protected:
    void SetUp() override {
        DispatchRun::SetUp();
        for (long n = 1; n <= 4; ++n)
            server_.add_issue(n, "Issue " + std::to_string(n), "Do thing " + std::to_string(n),
                              n == 1 ? std::vector<std::string>{"cocode", "bug"}
                                     : std::vector<std::string>{"cocode"});
        sh_ok("git init -q --bare ../origin.git && git remote add origin " +
                  quote((dir_ / "origin.git").string()),
              repo_);
        github_ = " --repo octo-org/demo --api-url " + server_.base_url() + " --ca-bundle " +
                  quote(loopback_tls().files.certificate.string());
        // Each agent adds a four-line C file of its own for the issue and says it is ready.
        auto writer = [](const std::string& name) {
            return "mkdir -p src && printf 'int " + name +
                   "(void) {\\n    int x = %s;\\n    return x * 2;\\n}\\n' "
                   "\"$COCODE_ISSUE_NUMBER\" > src/" +
                   name + "$COCODE_ISSUE_NUMBER.c && git add src && git commit -q -m Fix -m " +
                   "\"$COCODE_READY_MARKER\"";
        };
        configure({{"agents",
                    {{"fixer", {{"command", "sh"}, {"args", {"-c", writer("fix")}}}},
                     {"idle", {{"command", "sh"}, {"args", {"-c", writer("idle")}}}}}},
                   {"publish", {{"push", true}, {"pull_request", true}}}});
        sh_ok("git push -q origin main", repo_);
        for (int n = 1; n <= 4; ++n) {
            Shell run = on_github("run " + std::to_string(n) + " --publish");
            ASSERT_EQ(run.exit_code, 0) << run.err;
        }
        ASSERT_EQ(server_.pulls().size(), 8u);
        sh_ok(
            "git clone -q -b main origin.git maintainer && cd maintainer && git config user.name "
            "maintainer && git config user.email maintainer@cocode.invalid",
            dir_.path());
    }

    Shell on_github(const std::string& args) { return dispatch(args + github_, env_); }

    long pull_of(const std::string& branch) {
        for (const auto& pr : server_.pulls())
            if (pr["head"]["ref"] == branch) return pr["number"];
        ADD_FAILURE() << "no pull request for " << branch;
        return 0;
    }

    // The maintainer merges `branch` (as it is on origin) into main with a merge commit and
    // pushes; GitHub then says the pull request is merged as that commit.
    std::string merge(const std::string& branch) {
        const fs::path clone = dir_ / "maintainer";
        sh_ok("git fetch -q origin && git merge -q --no-ff -m 'Merge " + branch + "' origin/" +
                  branch + " && git push -q origin main",
              clone);
        const std::string sha = head(clone);
        server_.merge_pull(pull_of(branch), sha);
        return sha;
    }

    std::string head(const fs::path& where) {
        std::string id = sh_ok("git rev-parse HEAD", where);
        return id.substr(0, id.size() - 1);
    }

    json report(const std::string& args) {
        Shell out = on_github("report --json " + args);
        EXPECT_EQ(out.exit_code, 0) << out.err;
        return json::parse(out.out);
    }

    // The pair's outcome records, kept beside the seals under its first run's id.
    fs::path outcomes_of(const run::RunRecord& r) {
        return repo_ / ".cocode/outcomes" / (r.run_id + ".jsonl");
    }

    json row_of(const json& report, const std::string& key) {
        for (const auto& row : report["rows"])
            if (row["key"] == key) return row;
        ADD_FAILURE() << "no row " << key << " in " << report.dump(2);
        return json::object();
    }

    FakeGitHub server_{loopback_options()};
    std::string github_;
    const std::string env_ = "GITHUB_TOKEN=" + std::string(kTestToken) + " ";
};

TEST_F(Report, OutcomesOfMergedEditedRevertedAndClosedPullRequestsAreLearntAndCounted) {
    const fs::path clone = dir_ / "maintainer";
    merge("cocode/1-fixer");
    // A person rewrites one of the agent's four lines before merging.
    sh_ok(
        "git fetch -q origin && git checkout -q -b edit origin/cocode/2-fixer && sed -i "
        "'s/x \\* 2/x * 3/' src/fix2.c && git commit -q -am 'a person edits' && git push -q "
        "origin edit:cocode/2-fixer && git checkout -q main",
        clone);
    merge("cocode/2-fixer");
    const std::string merged3 = merge("cocode/3-fixer");
    sh_ok("git revert --no-edit -m 1 HEAD >/dev/null && git push -q origin main", clone);
    const std::string revert = head(clone);
    server_.close_pull(pull_of("cocode/4-fixer"));

    Shell refreshed = on_github("report --refresh");
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.err;
    EXPECT_NE(refreshed.err.find("outcomes: 8 pull requests asked about, 8 new or changed, 0 "
                                 "settled"),
              std::string::npos)
        << refreshed.err;

    const json by_agent = report("");
    const json fixer = row_of(by_agent, "fixer");
    EXPECT_EQ(fixer["pull_requests"], 4);
    EXPECT_EQ(fixer["merged"], 3);
    EXPECT_EQ(fixer["closed_unmerged"], 1);
    EXPECT_EQ(fixer["merge_rate"], 0.75);
    EXPECT_EQ(fixer["reverted"], 1);
    EXPECT_NEAR(fixer["revert_rate"].get<double>(), 1.0 / 3, 1e-9);
    // 4 lines a change, 3 merged: 12 lines, of which the person rewrote one.
    EXPECT_EQ(fixer["lines"], json::parse(R"({"agent":12,"kept":11})"));
    EXPECT_TRUE(fixer["median_seconds_to_merge"].is_number()) << fixer.dump(2);
    const json idle = row_of(by_agent, "idle");
    EXPECT_EQ(idle["pull_requests"], 4) << "still open, and known to be";
    EXPECT_EQ(idle["merged"], 0);
    EXPECT_TRUE(idle["merge_rate"].is_null()) << "none decided yet";
    EXPECT_EQ(by_agent["total"]["pull_requests"], 8);

    // Outcomes are records beside the seals, under the pair's first run; nothing else moved.
    for (const auto& r : runs()) {
        if (r.branch != "cocode/3-fixer") continue;
        const auto lines = read_lines(outcomes_of(r));
        ASSERT_EQ(lines.size(), 1u);
        const json outcome = json::parse(lines[0]);
        EXPECT_EQ(outcome["state"], "merged");
        EXPECT_EQ(outcome["merge_commit"], merged3);
        EXPECT_EQ(outcome["reverted_by"], revert);
    }

    // Again: the settled ones (closed, reverted) are not asked about; the rest are asked with
    // the ETag of the last answer, which GitHub answers 304 at no cost; nothing is appended.
    const std::size_t before = server_.requests().size();
    Shell again = on_github("report --refresh");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("outcomes: 6 pull requests asked about, 0 new or changed, 2 settled"),
              std::string::npos)
        << again.err;
    const auto requests = server_.requests();
    int lists = 0;
    for (std::size_t i = before; i < requests.size(); ++i)
        if (requests[i].method == "GET" && requests[i].path.find("/pulls?") != std::string::npos) {
            ++lists;
            EXPECT_EQ(requests[i].status, 304) << requests[i].path;
        }
    EXPECT_EQ(lists, 6);
    for (const auto& r : runs()) {
        if (fs::exists(outcomes_of(r))) {
            EXPECT_EQ(read_lines(outcomes_of(r)).size(), 1u) << r.branch;
        }
    }

    // By agent and kind: issue 1 is labelled a bug; the others say nothing, and their accepted
    // change (a new file of code, a few lines) makes them small features.
    const json by_kind = report("--by agent,kind");
    EXPECT_EQ(row_of(by_kind, "fixer fix/S")["runs"], 1);
    EXPECT_EQ(row_of(by_kind, "fixer feature/S")["runs"], 3);
    EXPECT_EQ(row_of(by_kind, "fixer feature/S")["keys"],
              json::parse(R"({"agent":"fixer","kind":"feature/S"})"));
    EXPECT_EQ(row_of(by_kind, "idle feature/S")["merged"], 0);

    Shell table = on_github("report --by agent,kind");
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("AGENT                KIND      "), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("MERGED TO MERGE REVERTED  KEPT  PER MERGE"), std::string::npos)
        << table.out;
    Shell csv = on_github("report --csv --by agent");
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    std::vector<std::string> rows;
    std::istringstream lines(csv.out);
    for (std::string line; std::getline(lines, line);) rows.push_back(line);
    ASSERT_EQ(rows.size(), 4u) << csv.out;  // header, fixer, idle, total
    EXPECT_EQ(rows[0].rfind("agent,runs,judged,passed,pass_rate,", 0), 0u) << rows[0];
    EXPECT_EQ(rows[1].rfind("fixer,4,4,4,1,", 0), 0u) << rows[1];
    EXPECT_NE(rows[1].find(",4,3,1,0.75,"), std::string::npos) << rows[1];
    EXPECT_EQ(rows[3].rfind("total,8,", 0), 0u) << rows[3];

    Shell bad = on_github("report --by agent,colour");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--by agent,colour: 'colour' is not one of agent, model, kind, issue, "
                           "day"),
              std::string::npos)
        << bad.err;
}

// The action's runs leave no folders: each ran on a runner of its own. A scheduled job on a
// fresh runner (a clone, no .cocode) counts them from the verdicts they published on the
// issues, learns their outcomes the same way, and gets the scorecard the run folders give;
// a copy of a pair's comment posted later, and a made-up pair's comment by someone who is not
// one of the repository's people, count for nothing.
TEST_F(Report, ThePublishedVerdictsGiveTheSameScorecardOnARunnerWithoutTheRunFolders) {
    merge("cocode/1-fixer");
    merge("cocode/2-fixer");
    server_.close_pull(pull_of("cocode/4-fixer"));
    const json here = report("--refresh --by agent,kind");

    // Someone posts a pair's marker with a verdict record of their own: a later copy of the
    // fixer's on issue 3 (by a collaborator: still not the oldest), and a pair that never ran.
    const std::string forged =
        "<!-- cocode:verdict {\"pass\": false, \"run_id\": \"20261101-000000-zzzz\", "
        "\"issue\": 3, \"agent\": \"fixer\"} -->";
    server_.add_comment(3, "<!-- cocode:check/issue-3/fixer -->\nFAIL\n" + forged);
    server_.add_comment(2,
                        "<!-- cocode:check/issue-2/mallory -->\nPASS\n<!-- cocode:verdict "
                        "{\"pass\": true, \"issue\": 2, \"agent\": \"mallory\"} -->",
                        "mallory", "NONE");

    const fs::path runner = dir_ / "runner";
    sh_ok("git clone -q " + quote((dir_ / "origin.git").string()) + " " + quote(runner.string()),
          dir_.path());
    ASSERT_FALSE(fs::exists(runner / ".cocode/runs"));
    auto on_runner = [&](const std::string& args) {
        return sh(env_ + quote(tool_path("cocode-dispatch").string()) + " report " + args + github_,
                  runner);
    };
    Shell published = on_runner("--published --refresh --json --by agent,kind");
    ASSERT_EQ(published.exit_code, 0) << published.err;
    EXPECT_NE(published.err.find("published: 8 runs of "), std::string::npos) << published.err;
    EXPECT_NE(published.err.find("outcomes: 8 pull requests asked about, 8 new or changed"),
              std::string::npos)
        << published.err;
    const json there = json::parse(published.out);
    ASSERT_EQ(there["rows"].size(), here["rows"].size()) << there.dump(2);
    for (const auto& row : here["rows"]) {
        const json other = row_of(there, row["key"]);
        for (const char* field : {"runs", "judged", "passed", "pass_rate", "pull_requests",
                                  "merged", "closed_unmerged", "merge_rate", "lines", "cost_usd"})
            EXPECT_EQ(other[field], row[field]) << row["key"] << " " << field;
    }
    EXPECT_EQ(row_of(there, "fixer fix/S")["merged"], 1) << "issue 1 is labelled a bug";
    EXPECT_EQ(there["total"]["runs"], 8);

    // The step summary's chart: the table with its bars, the same figures.
    Shell markdown = on_runner("--published --markdown --by agent,kind");
    ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
    EXPECT_NE(markdown.out.find("| fixer | feature/S | 3 | `"), std::string::npos) << markdown.out;
    EXPECT_NE(markdown.out.find(" | 1/2 |"), std::string::npos) << "fixer feature/S: 2 and 3 "
                                                                   "merged, 4 closed; 3 open"
                                                                << markdown.out;
    EXPECT_EQ(markdown.out.find("mallory"), std::string::npos) << markdown.out;

    Shell replays = on_runner("--published --source replay");
    EXPECT_EQ(replays.exit_code, 2);
    EXPECT_NE(replays.err.find("--published: replays are not published"), std::string::npos)
        << replays.err;
}

}  // namespace cocode::test

namespace cocode::test {

// Routing by evidence through `run` and `plan`: after five issues where one agent passed every
// time and another never did, the next issue gets the first alone (and the newcomer, which has
// no evidence yet); the choice is said, sealed and in the matrix; an agent named still runs.
class Routing : public DispatchRun {
  protected:
    void configure_agents(json route) {
        const std::string pass =
            "echo fixed > fixed.txt && git add -A && git commit -q -m Fix -m "
            "\"$COCODE_READY_MARKER\"";
        configure({{"agents",
                    {{"good", {{"command", "sh"}, {"args", {"-c", pass}}}},
                     {"bad", {{"command", "sh"}, {"args", {"-c", "true"}}}},
                     {"new", {{"command", "sh"}, {"args", {"-c", pass}}}}}},
                   {"route", route}});
    }
    std::multiset<std::string> agents_on(long issue) {
        std::multiset<std::string> out;
        for (const auto& r : runs())
            if (r.issue == issue) out.insert(r.agent);
        return out;
    }
};

TEST_F(Routing, TheNextIssueGetsTheAgentsTheEvidenceTrusts) {
    configure_agents({{"mode", "evidence"}, {"explore", 0}, {"min_runs", 5}});
    for (int n = 1; n <= 5; ++n) {
        Shell run = dispatch("run " + std::to_string(n) + " --agent good --agent bad");
        ASSERT_EQ(run.exit_code, 0) << run.err;  // named agents win over routing
    }
    EXPECT_EQ(agents_on(1), (std::multiset<std::string>{"bad", "good"}));

    Shell planned = dispatch("plan 6 --json");
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    const json matrix = json::parse(planned.out);
    ASSERT_EQ(matrix["include"].size(), 2u) << planned.out;
    EXPECT_EQ(matrix["include"][0]["agent"], "good");
    EXPECT_EQ(matrix["include"][1]["agent"], "new");
    const std::string why =
        "good alone: 100% ±22 on every kind, above every other (bad 0% ±22); new has fewer than "
        "5 judged runs on every kind: learning";
    EXPECT_EQ(matrix["include"][0]["route"], why);
    EXPECT_TRUE(runs().size() == 10u) << "plan starts nothing";

    // `plan --publish` (the action's first job) makes the live comment, which says why.
    ASSERT_EQ(dispatch("plan 6 --publish").exit_code, 0);
    auto live_comment = [&] {
        std::string body;
        for (const auto& c : json::parse(read_text(repo_ / ".cocode/issues/6.comments.json")))
            if (c["body"].get<std::string>().rfind("<!-- cocode:progress/issue-6 -->", 0) == 0)
                body = c["body"];
        return body;
    };
    EXPECT_NE(live_comment().find("Chosen by evidence: " + why), std::string::npos)
        << live_comment();

    Shell run = dispatch("run 6 --publish");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("issue #6: " + why), std::string::npos) << run.err;
    EXPECT_EQ(agents_on(6), (std::multiset<std::string>{"good", "new"}));
    for (const auto& r : runs())
        if (r.issue == 6) {
            const json seal =
                json::parse(read_text(repo_ / ".cocode/seals" / (r.run_id + ".json")));
            EXPECT_EQ(seal["route"], why);
        }
    EXPECT_NE(live_comment().find("Chosen by evidence: " + why), std::string::npos)
        << live_comment();
    EXPECT_NE(live_comment().find("· done"), std::string::npos) << live_comment();
    sh_ok(quote(tool_path("cocode-dispatch").string()) + " clean 6 --force", repo_);
    Shell named = dispatch("run 6 --agent bad");
    ASSERT_EQ(named.exit_code, 0) << named.err;
    EXPECT_EQ(agents_on(6), (std::multiset<std::string>{"bad", "good", "new"}));

    configure_agents({{"mode", "evidence"}, {"min_runs", 0}});
    Shell bad = dispatch("plan 6");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("field 'route.min_runs': expected a whole number from 1 to 1000"),
              std::string::npos)
        << bad.err;
}

}  // namespace cocode::test

namespace cocode::test {

// `report` keeps each ended run's summary in .cocode/cache/scorecard.tsv and reads it back
// while the run's folder has not changed: a verdict written again (renamed in, as every
// verdict is) is seen; a cache that is garbage is no worse than none.
TEST_F(Routing, TheReportsCacheNeverHidesANewVerdict) {
    configure_agents({{"mode", "all"}});
    ASSERT_EQ(dispatch("run 1 --agent good --agent bad").exit_code, 0);
    auto passed = [&](const std::string& flags = "") {
        const json report = json::parse(dispatch("report --json " + flags).out);
        return report["total"]["passed"].get<int>();
    };
    EXPECT_EQ(passed(), 1);
    const fs::path cache = repo_ / ".cocode/cache/scorecard.tsv";
    ASSERT_TRUE(fs::exists(cache));
    EXPECT_EQ(read_lines(cache).size(), 3u) << "a header and the two ended runs";
    EXPECT_EQ(passed(), 1) << "read from the cache";

    // The bad agent's run judged again, PASS this time: its check.json renamed in.
    for (const auto& r : runs())
        if (r.agent == "bad") {
            json verdict = json::parse(read_text(r.folder / "check.json"));
            verdict["verdict"] = "PASS";
            write_text(r.folder / "check.json.new", verdict.dump());
            fs::rename(r.folder / "check.json.new", r.folder / "check.json");
        }
    EXPECT_EQ(passed(), 2) << "the folder changed: read again";
    EXPECT_EQ(passed("--no-cache"), 2);

    write_text(cache, "cocode scorecard cache 1\nnot\ta\tline\n\x01\x02");
    EXPECT_EQ(passed(), 2);
    EXPECT_EQ(read_lines(cache).size(), 3u) << "written again whole";
}

}  // namespace cocode::test
