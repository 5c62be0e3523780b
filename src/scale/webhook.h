// What `cocode-dispatch serve` does with a webhook delivery before it answers: checks GitHub's
// signature (X-Hub-Signature-256: HMAC-SHA256 of the raw body with the shared secret, compared
// in constant time), drops a delivery it has had already (X-GitHub-Delivery), and writes the
// accepted event to an on-disk queue (.cocode/serve/queue/, atomically, synced) before the 202
// goes out — so a crash right after the answer loses nothing: the event is taken from the
// queue after a restart.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace cocode::scale {

inline constexpr char kServeDir[] = ".cocode/serve";
// The largest body taken (413 above it): an issue's webhook is tens of kilobytes; GitHub's own
// cap is 25 MB, which no issue event comes near.
inline constexpr std::size_t kMaxWebhookBody = 1 << 20;

// `header` is "sha256=<64 hex digits>" of HMAC-SHA256(secret, body).
bool signature_valid(std::string_view secret, std::string_view body, std::string_view header);

struct Delivery {
    std::string id;     // X-GitHub-Delivery
    std::string event;  // X-GitHub-Event
    std::string body;   // the payload, as received
};

// The queue and the deliveries seen, under `<repo>/.cocode/serve/`. Safe to use from the
// server's threads at once.
class Inbox {
  public:
    static Result<std::unique_ptr<Inbox>> open(const std::filesystem::path& dir);

    enum class Accepted { queued, repeated };
    // Queued (durably) unless the delivery id was seen before.
    Result<Accepted> accept(const Delivery& delivery);
    // Queued deliveries, oldest first.
    std::vector<std::filesystem::path> pending() const;
    Result<Delivery> read(const std::filesystem::path& queued) const;
    Result<void> done(const std::filesystem::path& queued);

  private:
    explicit Inbox(std::filesystem::path dir) : dir_(std::move(dir)) {}
    std::filesystem::path dir_;
    mutable std::mutex mutex_;
};

struct WebhookAnswer {
    int status = 0;
    std::string body;  // one line of JSON for the delivery log on GitHub
    bool queued = false;
};

// The answer to a POST: 401 for a missing or wrong signature; 400 for a delivery without an
// event or a usable id, or whose body is not the payload its event needs (with why); 200 for `ping`
// and for a delivery seen before; 202 once queued. Events read_event does not read are answered
// 202 and dropped (the hook may send more than cocode needs).
WebhookAnswer receive(Inbox& inbox, std::string_view secret, std::string_view signature,
                      std::string_view event, std::string_view delivery_id, std::string_view body);

}  // namespace cocode::scale
