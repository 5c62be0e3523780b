// `cocode-dispatch serve`: GitHub's example webhook payloads (@octokit/webhooks-examples),
// signed by GitHub's own @octokit/webhooks-methods, delivered over HTTP to the server running
// in a clone, against the loopback GitHub. Bad, missing, truncated and repeated deliveries are
// refused; a labelled issue and a writer's /cocode command are each run once and answered;
// a kill -9 right after the 202 loses nothing.
#include <signal.h>

#include <thread>

#include "watch_fixture.h"
#include "webhook_examples.h"

namespace cocode::test {
namespace {

constexpr char kSecret[] = "a webhook secret for the test";

class Serve : public Watch {
  protected:
    // Starts `serve` in `clone` on a free port, in a thread; returns once it listens.
    void start(const fs::path& clone) {
        fs::remove(clone / ".cocode/serve/listening");
        server_ = std::thread([this, clone] {
            served_ = dispatch(clone, "serve --listen 127.0.0.1:0",
                               std::string("COCODE_WEBHOOK_SECRET=") + quote(kSecret));
        });
        ASSERT_TRUE(wait_until([&] { return fs::exists(clone / ".cocode/serve/listening"); }))
            << served_.err;
        std::string where = read_text(clone / ".cocode/serve/listening");
        url_ = "http://" + where.substr(0, where.find('\n')) + "/webhook";
    }
    // Ends it: SIGTERM, or SIGKILL.
    Shell stop(const fs::path& clone, int signal = SIGTERM) {
        ::kill(std::stoi(read_text(clone / "watch.pid")), signal);
        server_.join();
        return served_;
    }

    // Delivers `payload` as `event`; the HTTP status.
    int deliver(const std::string& event, const std::string& id, const json& payload,
                const std::string& how = "good", const std::string& secret = kSecret) {
        return deliver_text(event, id, payload.dump(), how, secret);
    }
    int deliver_text(const std::string& event, const std::string& id, const std::string& body,
                     const std::string& how = "good", const std::string& secret = kSecret) {
        const fs::path file = dir_ / ("payload-" + id + ".json");
        write_text(file, body);
        Shell sent =
            sh("node " + quote(std::string(COCODE_SOURCE_DIR) + "/tests/support/deliver.mjs") +
                   " " + quote(COCODE_PEERS_DIR) + " " + quote(url_) + " " + event + " " + id +
                   " " + quote(file.string()) + " " + quote(secret) + " " + how,
               dir_.path());
        EXPECT_EQ(sent.exit_code, 0) << sent.err;
        return sent.exit_code == 0 ? std::stoi(sent.out) : 0;
    }

    json labeled(long issue) {
        json payload = example_payload("issues", "labeled");
        payload["issue"]["number"] = issue;
        payload["label"]["name"] = "cocode";
        return payload;
    }

    std::thread server_;
    Shell served_;
    std::string url_;
};

TEST_F(Serve, SignedDeliveriesRunOnceAndEverythingElseIsRefused) {
    github_->set_label(2, "cocode", false);
    github_->set_permission("writer", "write", "write");
    const fs::path a = machine("a");
    start(a);

    const json label = labeled(1);
    EXPECT_EQ(deliver("issues", "d-1", label, "unsigned"), 401);
    EXPECT_EQ(deliver("issues", "d-2", label, "truncated"), 401);
    EXPECT_EQ(deliver("issues", "d-3", label, "good", "not the secret"), 401);
    EXPECT_EQ(deliver("issues", "d-4", label), 202);
    EXPECT_EQ(deliver("issues", "d-4", label), 200) << "a repeated delivery";
    json command = example_payload("issue_comment", "created");
    command["issue"]["number"] = 2;
    command["comment"]["id"] = github_->add_comment(2, "/cocode fast", "writer");
    command["comment"]["body"] = "/cocode fast";
    command["comment"]["user"]["login"] = "writer";
    EXPECT_EQ(deliver("issue_comment", "d-5", command), 202);
    json huge = label;
    huge["issue"]["body"] = std::string(2 << 20, 'x');
    EXPECT_EQ(deliver("issues", "d-6", huge), 413);
    // Signed, but not what the event needs: refused with why, not answered 202 and dropped.
    EXPECT_EQ(deliver_text("issues", "d-7", "not JSON at all"), 400);
    json nameless = label;
    nameless.erase("issue");
    EXPECT_EQ(deliver("issues", "d-8", nameless), 400);

    EXPECT_TRUE(wait_until([&] { return answered(1) && answered(2); }, 60s)) << served_.err;
    const Shell ended = stop(a);
    EXPECT_EQ(ended.exit_code, 0) << ended.err;
    const auto runs = runs_per_issue({a});
    EXPECT_EQ(runs.count(1) ? runs.at(1) : 0, 1);
    EXPECT_EQ(runs.count(2) ? runs.at(2) : 0, 1);
    int eyes = 0;
    for (const auto& r : github_->reactions()) eyes += r["content"] == "eyes";
    EXPECT_EQ(eyes, 1) << "the command was seen";
}

TEST_F(Serve, AKillRightAfterTheAnswerLosesNothing) {
    const fs::path a = machine("a");
    start(a);
    ASSERT_EQ(deliver("issues", "k-1", labeled(1)), 202);
    const Shell killed = stop(a, SIGKILL);
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL);

    start(a);
    EXPECT_TRUE(wait_until([&] { return answered(1); }, 60s)) << served_.err;
    const Shell ended = stop(a);
    EXPECT_EQ(ended.exit_code, 0) << ended.err;
    const auto runs = runs_per_issue({a});
    EXPECT_EQ(runs.count(1) ? runs.at(1) : 0, 1);
}

}  // namespace
}  // namespace cocode::test
