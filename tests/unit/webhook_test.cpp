// The webhook intake's own rules: GitHub's signature (with GitHub's documented test vector),
// and the queue that holds a delivery before it is answered.
#include "scale/webhook.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "test_support.h"

namespace cocode::test {
namespace {

namespace fs = std::filesystem;

// docs.github.com, "Validating webhook deliveries": this secret and payload give this signature.
constexpr char kSecret[] = "It's a Secret to Everybody";
constexpr char kPayload[] = "Hello, World!";
constexpr char kSignature[] =
    "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

TEST(WebhookSignature, GitHubsTestVectorIsValid) {
    EXPECT_TRUE(scale::signature_valid(kSecret, kPayload, kSignature));
}

TEST(WebhookSignature, AnythingElseIsNot) {
    std::string flipped = kSignature;
    flipped.back() = '6';
    EXPECT_FALSE(scale::signature_valid(kSecret, kPayload, flipped));
    EXPECT_FALSE(scale::signature_valid(kSecret, "Hello, World?", kSignature));
    EXPECT_FALSE(scale::signature_valid("another secret", kPayload, kSignature));
    EXPECT_FALSE(scale::signature_valid(kSecret, kPayload, std::string(kSignature).substr(0, 40)));
    EXPECT_FALSE(scale::signature_valid(kSecret, kPayload, ""));
    // SHA-1's header, and the right digest under the wrong name.
    EXPECT_FALSE(scale::signature_valid(kSecret, kPayload,
                                        "sha1=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46"
                                        "f4379c8b043e17"));
    // An empty secret verifies nothing, whatever the header.
    EXPECT_FALSE(scale::signature_valid("", kPayload, kSignature));
}

// X-Hub-Signature-256 for `body` under kSecret, as GitHub computes it.
std::string signed_by_github(const std::string& body) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    HMAC(EVP_sha256(), kSecret, static_cast<int>(sizeof kSecret - 1),
         reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &size);
    std::string out = "sha256=";
    char hex[3];
    for (unsigned int i = 0; i < size; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", digest[i]);
        out += hex;
    }
    return out;
}

const std::string kLabelled =
    R"({"action":"labeled","issue":{"number":1},"label":{"name":"cocode"}})";

TEST(WebhookInbox, ADeliveryIsQueuedOnceAndAnsweredByWhatItIs) {
    TempDir dir;
    auto inbox = scale::Inbox::open(dir.path()).value_or_throw();
    const std::string id = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
    const std::string payload = kLabelled, signature = signed_by_github(kLabelled);
    auto answer = scale::receive(*inbox, kSecret, signature, "issues", id, payload);
    EXPECT_EQ(answer.status, 202);
    EXPECT_TRUE(answer.queued);
    ASSERT_EQ(inbox->pending().size(), 1u);
    auto queued = inbox->read(inbox->pending()[0]);
    ASSERT_TRUE(queued.ok()) << queued.error().message;
    EXPECT_EQ(queued->body, payload);
    EXPECT_EQ(queued->event, "issues");

    // GitHub redelivers: seen, not queued again — also after it was taken from the queue.
    EXPECT_EQ(scale::receive(*inbox, kSecret, signature, "issues", id, payload).status, 200);
    ASSERT_TRUE(inbox->done(inbox->pending()[0]).ok());
    EXPECT_EQ(scale::receive(*inbox, kSecret, signature, "issues", id, payload).status, 200);
    EXPECT_TRUE(inbox->pending().empty());

    EXPECT_EQ(scale::receive(*inbox, kSecret, "", "issues", "x1", payload).status, 401);
    EXPECT_EQ(scale::receive(*inbox, "other", signature, "issues", "x2", payload).status, 401);
    EXPECT_EQ(scale::receive(*inbox, kSecret, signature, "issues", "../../x", payload).status, 400);
    EXPECT_EQ(scale::receive(*inbox, kSecret, signature, "ping", "x3", payload).status, 200);
    const auto other = scale::receive(*inbox, kSecret, signature, "push", "x4", payload);
    EXPECT_EQ(other.status, 202);
    EXPECT_FALSE(other.queued);
    EXPECT_TRUE(inbox->pending().empty());
}

// Signed, so GitHub sent it, but not what its event needs: 400 with the reason, nothing queued
// (GitHub's delivery log shows the failure instead of a 202 for something dropped later).
TEST(WebhookInbox, ASignedBodyThatIsNotTheEventsPayloadIsRefusedWithWhy) {
    TempDir dir;
    auto inbox = scale::Inbox::open(dir.path()).value_or_throw();
    struct Case {
        std::string event, body, reason;
    };
    const std::vector<Case> cases = {
        {"issues", "Hello, World!", "body: expected a JSON object (the issues event's payload)"},
        {"issues", "[1, 2]", "body: expected a JSON object (the issues event's payload)"},
        {"issues", R"({"action":"labeled"})", "issue"},
        {"issue_comment", R"({"action":"created","issue":{"number":3}})", "comment.id"},
        {"issue_comment", R"({"action":"created","issue":{"number":3},"comment":{"id":"x"}})",
         "comment.id"},
    };
    int n = 0;
    for (const auto& c : cases) {
        const auto answer = scale::receive(*inbox, kSecret, signed_by_github(c.body), c.event,
                                           "bad-" + std::to_string(++n), c.body);
        EXPECT_EQ(answer.status, 400) << c.body;
        EXPECT_NE(answer.body.find(c.reason), std::string::npos) << answer.body;
        EXPECT_EQ(answer.body.find('\n'), std::string::npos) << "one line";
        EXPECT_FALSE(answer.queued);
    }
    EXPECT_TRUE(inbox->pending().empty());
}

}  // namespace
}  // namespace cocode::test
