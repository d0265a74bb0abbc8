// private_key_jwt client authentication (RFC 7523 section 2.2, as
// SEP-1046 uses it for client credentials): a JWT signed with the
// client's key, ES256 (ECDSA P-256, the signature as raw r||s, RFC 7518
// section 3.4) or RS256.
#include <openssl/bio.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

#include "mcp/oauth_internal.hpp"

namespace corio::mcp::detail {

namespace {

template <class T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const noexcept { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Freer<EVP_MD_CTX, EVP_MD_CTX_free>>;
using Sig = std::unique_ptr<ECDSA_SIG, Freer<ECDSA_SIG, ECDSA_SIG_free>>;

Key read_key(const std::string& pem) {
  std::unique_ptr<BIO, Freer<BIO, BIO_free_all>> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Key key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) fail("the client's private key is not a PEM private key");
  return key;
}

std::string sign_sha256(EVP_PKEY* key, std::string_view input) {
  MdCtx ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1) {
    fail("signing the client assertion failed");
  }
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    fail("signing the client assertion failed");
  }
  sig.resize(len);
  return sig;
}

// OpenSSL's ECDSA signature is DER; JWS wants r and s, 32 bytes each.
std::string raw_ecdsa(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  Sig sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  if (!sig) fail("an ECDSA signature that is not DER");
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  return raw;
}

}  // namespace

std::string signed_jwt(const json& claims, const std::string& private_key_pem, const std::string& alg) {
  if (alg != "ES256" && alg != "RS256") fail("unsupported signing algorithm " + alg);
  const std::string input = base64url(json{{"alg", alg}, {"typ", "JWT"}}.dump()) + "." + base64url(claims.dump());
  const Key key = read_key(private_key_pem);
  const std::string sig = sign_sha256(key.get(), input);
  return input + "." + base64url(alg == "ES256" ? raw_ecdsa(sig) : sig);
}

}  // namespace corio::mcp::detail
