#include "scale/webhook.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "scale/trigger.h"

namespace cocode::scale {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::string_view kSignaturePrefix = "sha256=";

// GitHub's delivery ids are GUIDs; anything else is not a delivery (and never a file name).
bool valid_delivery_id(std::string_view id) {
    return !id.empty() && id.size() <= 80 && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
    });
}

std::string answer_line(std::string_view message) { return json{{"message", message}}.dump(); }

}  // namespace

bool signature_valid(std::string_view secret, std::string_view body, std::string_view header) {
    if (secret.empty() || header.size() != kSignaturePrefix.size() + 64 ||
        header.substr(0, kSignaturePrefix.size()) != kSignaturePrefix)
        return false;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
              reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest, &length) ||
        length != 32)
        return false;
    char expected[65];
    for (unsigned i = 0; i < 32; ++i) std::snprintf(expected + 2 * i, 3, "%02x", digest[i]);
    // Lower-case hex, as GitHub sends it; compared without an early exit.
    return CRYPTO_memcmp(expected, header.data() + kSignaturePrefix.size(), 64) == 0;
}

Result<std::unique_ptr<Inbox>> Inbox::open(const fs::path& dir) {
    std::error_code ec;
    for (const char* sub : {"queue", "seen"}) {
        fs::create_directories(dir / sub, ec);
        if (ec)
            return Error::general("cannot create " + (dir / sub).string() + ": " + ec.message());
    }
    return std::unique_ptr<Inbox>(new Inbox(dir));
}

Result<Inbox::Accepted> Inbox::accept(const Delivery& delivery) {
    std::lock_guard lock(mutex_);
    const fs::path seen = dir_ / "seen" / delivery.id;
    if (fs::exists(seen)) return Accepted::repeated;
    // Named by the time it came (nanoseconds since the epoch, fixed width): the queue's order.
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    char stamp[32];
    std::snprintf(
        stamp, sizeof stamp, "%020lld",
        static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
    const fs::path queued = dir_ / "queue" / (std::string(stamp) + "-" + delivery.id + ".json");
    const json record = {
        {"delivery", delivery.id}, {"event", delivery.event}, {"body", delivery.body}};
    // The event first, then the mark that it was seen: a crash between the two can only make a
    // repeat delivery queue it again (and a claim keeps that from running twice), never lose it.
    if (auto written = write_file_atomic(queued, record.dump(), 0600); !written)
        return std::move(written).error();
    if (auto marked = write_file_atomic(seen, "", 0600); !marked) return std::move(marked).error();
    return Accepted::queued;
}

std::vector<fs::path> Inbox::pending() const {
    std::lock_guard lock(mutex_);
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_ / "queue", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() > 5 && name.substr(name.size() - 5) == ".json" && name[0] != '.')
            out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<Delivery> Inbox::read(const fs::path& queued) const {
    auto text = read_file(queued);
    if (!text) return std::move(text).error();
    const json record = json::parse(*text, nullptr, false);
    if (!record.is_object() || !record.contains("delivery") || !record["delivery"].is_string() ||
        !record.contains("event") || !record["event"].is_string() || !record.contains("body") ||
        !record["body"].is_string())
        return Error::general(queued.string() + ": not a queued delivery (delivery, event, body)");
    return Delivery{record["delivery"].get<std::string>(), record["event"].get<std::string>(),
                    record["body"].get<std::string>()};
}

Result<void> Inbox::done(const fs::path& queued) {
    std::lock_guard lock(mutex_);
    std::error_code ec;
    fs::remove(queued, ec);
    if (ec) return Error::general("cannot remove " + queued.string() + ": " + ec.message());
    return {};
}

WebhookAnswer receive(Inbox& inbox, std::string_view secret, std::string_view signature,
                      std::string_view event, std::string_view delivery_id, std::string_view body) {
    if (signature.empty())
        return {401, answer_line("no X-Hub-Signature-256: a webhook needs its secret"), false};
    if (!signature_valid(secret, body, signature))
        return {401, answer_line("X-Hub-Signature-256 does not match this body and secret"), false};
    if (event.empty()) return {400, answer_line("no X-GitHub-Event"), false};
    if (!valid_delivery_id(delivery_id))
        return {400, answer_line("X-GitHub-Delivery: expected a delivery id (a GUID)"), false};
    if (event == "ping") return {200, answer_line("pong"), false};
    if (!event_read(event))
        return {202, answer_line("not an event cocode acts on: " + std::string(event)), false};
    // Signed, but not what the event needs: refused now, with why, so that GitHub's log of
    // deliveries shows the failure rather than a 202 for something thrown away later.
    const auto payload = nlohmann::json::parse(body, nullptr, false);
    if (payload.is_discarded() || !payload.is_object())
        return {400,
                answer_line("body: expected a JSON object (the " + std::string(event) +
                            " event's payload)"),
                false};
    if (auto read = read_event(event, payload, config::TriggerConfig{}); !read)
        return {400, answer_line(read.error().message), false};
    auto accepted =
        inbox.accept(Delivery{std::string(delivery_id), std::string(event), std::string(body)});
    if (!accepted) return {500, answer_line("cannot queue: " + accepted.error().message), false};
    if (*accepted == Inbox::Accepted::repeated)
        return {200, answer_line("delivery seen before; not queued again"), false};
    return {202, answer_line("queued"), true};
}

}  // namespace cocode::scale
