// Content blocks and base64 (see content.hpp).
#include <corio/mcp/content.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include <corio/mcp/server.hpp>

#include "mcp/server_internal.hpp"

namespace corio::mcp {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each character's 6-bit value; -1 for those outside the alphabet.
constexpr std::array<int, 256> decoding_table() {
  std::array<int, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
  return t;
}

json binary_block(const char* type, std::string_view bytes, std::string mime_type) {
  return {{"type", type}, {"data", base64_encode(bytes)}, {"mimeType", std::move(mime_type)}};
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
    }
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  static constexpr std::array<int, 256> kTable = decoding_table();
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < text.size() - pad; ++i) {
    const int d = kTable[static_cast<unsigned char>(text[i])];
    if (d < 0) return std::nullopt;
    v = v << 6 | static_cast<std::uint32_t>(d);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>(v >> 16));
      out.push_back(static_cast<char>(v >> 8 & 0xff));
      out.push_back(static_cast<char>(v & 0xff));
      v = 0;
    }
  }
  // The last group: 2 or 3 characters carry 1 or 2 bytes.
  if (pad == 2) out.push_back(static_cast<char>(v >> 4));
  if (pad == 1) {
    out.push_back(static_cast<char>(v >> 10));
    out.push_back(static_cast<char>(v >> 2 & 0xff));
  }
  return out;
}

namespace content {

json text(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

json image(std::string_view bytes, std::string mime_type) {
  return binary_block("image", bytes, std::move(mime_type));
}

json audio(std::string_view bytes, std::string mime_type) {
  return binary_block("audio", bytes, std::move(mime_type));
}

json resource(const ResourceContents& contents) {
  return {{"type", "resource"}, {"resource", contents_json(contents)}};
}

json resource_link(const Resource& r) {
  json j = resource_json(r);
  j["type"] = "resource_link";
  return j;
}

}  // namespace content

}  // namespace corio::mcp
