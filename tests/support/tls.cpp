#include "tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace cocode::test {
namespace {

template <class T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, std::integral_constant<decltype(Free), Free>>;

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "test TLS setup failed: %s\n", what);
    std::abort();
}

Owned<EVP_PKEY, EVP_PKEY_free> new_key(int type) {
    Owned<EVP_PKEY, EVP_PKEY_free> key(type == EVP_PKEY_RSA ? EVP_RSA_gen(2048)
                                                            : EVP_EC_gen("P-256"));
    if (!key) die("key generation");
    return key;
}

std::string bio_text(BIO* bio) {
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(size));
}

std::string base64url_decode(const std::string& text) {
    std::string b64 = text;
    for (char& c : b64) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (b64.size() % 4) b64 += '=';
    std::string out(b64.size(), '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(b64.data()),
                            static_cast<int>(b64.size()));
    if (n < 0) return {};
    std::size_t pad = b64.size() - b64.find_last_not_of('=') - 1;
    out.resize(static_cast<std::size_t>(n) - pad);
    return out;
}

}  // namespace

CertificateFiles make_self_signed_certificate(const std::filesystem::path& dir) {
    auto key = new_key(EVP_PKEY_EC);
    Owned<X509, X509_free> cert(X509_new());
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7 * 24 * 3600);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("cocode loopback GitHub"), -1,
                               -1, 0);
    X509_set_issuer_name(cert.get(), name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                              {NID_basic_constraints, "critical,CA:TRUE"}}) {
        Owned<X509_EXTENSION, X509_EXTENSION_free> ext(
            X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
        if (!ext || !X509_add_ext(cert.get(), ext.get(), -1)) die("certificate extension");
    }
    if (!X509_sign(cert.get(), key.get(), EVP_sha256())) die("certificate signature");

    CertificateFiles files{dir / "server.crt", dir / "server.key"};
    FILE* out = std::fopen(files.certificate.c_str(), "w");
    if (!out || !PEM_write_X509(out, cert.get())) die("writing the certificate");
    std::fclose(out);
    out = std::fopen(files.private_key.c_str(), "w");
    if (!out || !PEM_write_PrivateKey(out, key.get(), nullptr, nullptr, 0, nullptr, nullptr))
        die("writing the key");
    std::fclose(out);
    return files;
}

RsaKeyPair make_rsa_key_pair() {
    auto key = new_key(EVP_PKEY_RSA);
    Owned<BIO, BIO_free_all> priv(BIO_new(BIO_s_mem()));
    Owned<BIO, BIO_free_all> pub(BIO_new(BIO_s_mem()));
    if (!PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) ||
        !PEM_write_bio_PUBKEY(pub.get(), key.get()))
        die("writing the RSA key");
    return {bio_text(priv.get()), bio_text(pub.get())};
}

std::string verify_rs256_jwt(const std::string& jwt, const std::string& public_pem) {
    auto first = jwt.find('.');
    auto second = jwt.find('.', first + 1);
    if (first == std::string::npos || second == std::string::npos) return {};
    std::string signing_input = jwt.substr(0, second);
    std::string signature = base64url_decode(jwt.substr(second + 1));
    Owned<BIO, BIO_free_all> bio(
        BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size())));
    Owned<EVP_PKEY, EVP_PKEY_free> key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    Owned<EVP_MD_CTX, EVP_MD_CTX_free> ctx(EVP_MD_CTX_new());
    if (!key || !ctx ||
        EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
        EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(),
                         reinterpret_cast<const unsigned char*>(signing_input.data()),
                         signing_input.size()) != 1)
        return {};
    return base64url_decode(jwt.substr(first + 1, second - first - 1));
}

}  // namespace cocode::test
