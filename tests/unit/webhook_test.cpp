// The webhook intake's own rules: GitHub's signature (with GitHub's documented test vector),
// and the queue that holds a delivery before it is answered.
#include "scale/webhook.h"

#include <gtest/gtest.h>

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

TEST(WebhookInbox, ADeliveryIsQueuedOnceAndAnsweredByWhatItIs) {
    TempDir dir;
    auto inbox = scale::Inbox::open(dir.path()).value_or_throw();
    const std::string id = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
    auto answer = scale::receive(*inbox, kSecret, kSignature, "issues", id, kPayload);
    EXPECT_EQ(answer.status, 202);
    EXPECT_TRUE(answer.queued);
    ASSERT_EQ(inbox->pending().size(), 1u);
    auto queued = inbox->read(inbox->pending()[0]);
    ASSERT_TRUE(queued.ok()) << queued.error().message;
    EXPECT_EQ(queued->body, kPayload);
    EXPECT_EQ(queued->event, "issues");

    // GitHub redelivers: seen, not queued again — also after it was taken from the queue.
    EXPECT_EQ(scale::receive(*inbox, kSecret, kSignature, "issues", id, kPayload).status, 200);
    ASSERT_TRUE(inbox->done(inbox->pending()[0]).ok());
    EXPECT_EQ(scale::receive(*inbox, kSecret, kSignature, "issues", id, kPayload).status, 200);
    EXPECT_TRUE(inbox->pending().empty());

    EXPECT_EQ(scale::receive(*inbox, kSecret, "", "issues", "x1", kPayload).status, 401);
    EXPECT_EQ(scale::receive(*inbox, "other", kSignature, "issues", "x2", kPayload).status, 401);
    EXPECT_EQ(scale::receive(*inbox, kSecret, kSignature, "issues", "../../x", kPayload).status,
              400);
    EXPECT_EQ(scale::receive(*inbox, kSecret, kSignature, "ping", "x3", kPayload).status, 200);
    const auto other = scale::receive(*inbox, kSecret, kSignature, "push", "x4", kPayload);
    EXPECT_EQ(other.status, 202);
    EXPECT_FALSE(other.queued);
    EXPECT_TRUE(inbox->pending().empty());
}

}  // namespace
}  // namespace cocode::test
