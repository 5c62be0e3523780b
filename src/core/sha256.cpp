#include "core/sha256.h"

#include <openssl/evp.h>

namespace cocode {
namespace {

std::string hex_of(const unsigned char* digest, unsigned int size) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
        out += kHex[digest[i] >> 4];
        out += kHex[digest[i] & 15];
    }
    return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr);
    return hex_of(digest, size);
}

struct Sha256::State {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;

void Sha256::add(std::string_view data) { EVP_DigestUpdate(state_->ctx, data.data(), data.size()); }

std::string Sha256::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(state_->ctx, digest, &size);
    return hex_of(digest, size);
}

}  // namespace cocode
