// The opening handshake's pieces (see ws_handshake.hpp). SHA-1, base64 and
// the random bytes are OpenSSL's libcrypto (already a dependency for TLS).
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <stdexcept>

#include <corio/detail/entropy.hpp>

#include "http/wire/syntax.hpp"
#include "http/ws/ws_handshake.hpp"

namespace corio::http::detail {

namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

std::string base64(const unsigned char* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3) + 1, '\0');
  const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(len));
  return out;
}

bool is_base64_char(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

}  // namespace

std::string make_ws_key() {
  unsigned char raw[16];
  if (!corio::detail::seeded_secret(raw, sizeof raw) && RAND_bytes(raw, sizeof raw) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  return base64(raw, sizeof raw);
}

// 16 bytes are 22 base64 characters and "==" (the last one's low bits zero).
bool is_valid_ws_key(std::string_view key) noexcept {
  if (key.size() != 24 || key.substr(22) != "==") return false;
  for (std::size_t i = 0; i < 22; ++i) {
    if (!is_base64_char(key[i])) return false;
  }
  return std::string_view("AQgw").find(key[21]) != std::string_view::npos;
}

std::string ws_accept(std::string_view key) {
  std::string text(key);
  text += kGuid;
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return base64(digest, sizeof digest);
}

std::vector<std::string> list_values(const Headers& headers, std::string_view name) {
  std::vector<std::string> out;
  for (std::string_view value : headers.get_all(name)) {
    syntax::for_each_element(value, [&](std::string_view v) { out.emplace_back(v); });
  }
  return out;
}

std::string joined(const Headers& headers, std::string_view name) {
  std::string out;
  for (std::string_view value : headers.get_all(name)) {
    if (!out.empty()) out += ", ";
    out += value;
  }
  return out;
}

}  // namespace corio::http::detail
