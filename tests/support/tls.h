// Keys and certificates made at test time with OpenSSL: a self-signed certificate for the
// loopback GitHub (SAN 127.0.0.1 and localhost), and RSA keys for GitHub App auth.
#pragma once

#include <filesystem>
#include <string>

namespace cocode::test {

struct CertificateFiles {
    std::filesystem::path certificate;  // PEM; also the CA bundle a client must trust
    std::filesystem::path private_key;  // PEM
};

// Writes `server.crt` and `server.key` into `dir`. Aborts the test program on failure.
CertificateFiles make_self_signed_certificate(const std::filesystem::path& dir);

struct RsaKeyPair {
    std::string private_pem;
    std::string public_pem;
};
RsaKeyPair make_rsa_key_pair();

// Checks an RS256 JWT's signature with `public_pem`; returns its claims JSON, or "" when the
// signature does not verify.
std::string verify_rs256_jwt(const std::string& jwt, const std::string& public_pem);

}  // namespace cocode::test
