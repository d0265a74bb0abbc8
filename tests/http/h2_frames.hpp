// Hand-built HTTP/2 frames (RFC 9113 section 4) and HPACK blocks (RFC 7541)
// for the server's h2 tests that play a peer nghttp2's client session would
// not be (an attacker, a peer breaking the protocol), and a reader of the
// server's frames. Byte-exact on purpose: each test says what goes on the
// wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nghttp2/nghttp2.h>

#include "http/server_support.hpp"

namespace corio_http_test::h2 {

inline constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// Frame types, flags and error codes (RFC 9113 sections 6 and 7), by
// nghttp2's names.
constexpr std::uint8_t kData = NGHTTP2_DATA, kHeaders = NGHTTP2_HEADERS,
                       kPriority = NGHTTP2_PRIORITY, kRst = NGHTTP2_RST_STREAM,
                       kSettings = NGHTTP2_SETTINGS, kPing = NGHTTP2_PING, kGoaway = NGHTTP2_GOAWAY,
                       kWindowUpdate = NGHTTP2_WINDOW_UPDATE, kContinuation = NGHTTP2_CONTINUATION;
constexpr std::uint8_t kEndStream = NGHTTP2_FLAG_END_STREAM, kAck = NGHTTP2_FLAG_ACK,
                       kEndHeaders = NGHTTP2_FLAG_END_HEADERS;
constexpr std::uint32_t kNoError = NGHTTP2_NO_ERROR, kProtocolError = NGHTTP2_PROTOCOL_ERROR,
                        kFlowControlError = NGHTTP2_FLOW_CONTROL_ERROR,
                        kStreamClosed = NGHTTP2_STREAM_CLOSED,
                        kFrameSizeError = NGHTTP2_FRAME_SIZE_ERROR, kCancel = NGHTTP2_CANCEL,
                        kCompressionError = NGHTTP2_COMPRESSION_ERROR,
                        kEnhanceYourCalm = NGHTTP2_ENHANCE_YOUR_CALM;

inline void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

inline std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                         std::string_view payload) {
  std::string out;
  const auto n = static_cast<std::uint32_t>(payload.size());
  out += static_cast<char>(n >> 16);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>(type);
  out += static_cast<char>(flags);
  put32(out, stream);
  out += payload;
  return out;
}

inline std::string settings(
    const std::vector<std::pair<std::uint16_t, std::uint32_t>>& entries = {}) {
  std::string payload;
  for (const auto& [id, value] : entries) {
    payload += static_cast<char>(id >> 8);
    payload += static_cast<char>(id & 0xff);
    put32(payload, value);
  }
  return frame(kSettings, 0, 0, payload);
}

inline std::string u32_frame(std::uint8_t type, std::uint32_t stream, std::uint32_t value) {
  std::string payload;
  put32(payload, value);
  return frame(type, 0, stream, payload);
}
inline std::string rst(std::uint32_t stream, std::uint32_t code = kCancel) {
  return u32_frame(kRst, stream, code);
}
inline std::string window_update(std::uint32_t stream, std::uint32_t increment) {
  return u32_frame(kWindowUpdate, stream, increment);
}
inline std::string ping() { return frame(kPing, 0, 0, std::string(8, 'p')); }
inline std::string priority(std::uint32_t stream, std::uint32_t depends_on) {
  return frame(kPriority, 0, stream, [&] {
    std::string p;
    put32(p, depends_on);
    p += '\x0f';  // weight
    return p;
  }());
}

// The client's opening: the preface and an empty SETTINGS frame.
inline std::string opening() { return std::string(kPreface) + settings(); }

// HPACK: an integer with an n-bit prefix (section 5.1) after `flags`.
inline std::string hpack_int(std::uint8_t flags, int prefix_bits, std::uint64_t v) {
  const std::uint64_t max = (1u << prefix_bits) - 1;
  std::string out;
  if (v < max) {
    out += static_cast<char>(flags | v);
    return out;
  }
  out += static_cast<char>(flags | max);
  for (v -= max; v >= 128; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  out += static_cast<char>(v);
  return out;
}
inline std::string hpack_string(std::string_view s) {
  return hpack_int(0, 7, s.size()) + std::string(s);
}
// A literal field with a new name: without indexing (0x00) or added to
// the dynamic table (0x40).
inline std::string literal(std::string_view name, std::string_view value, bool index = false) {
  return std::string(1, index ? '\x40' : '\x00') + hpack_string(name) + hpack_string(value);
}
// GET `path` over http, :authority "h" (static table indexes 2, 6, 1).
inline std::string get_block(std::string_view path = "/") {
  std::string b = "\x82\x86";
  b += hpack_int(0x00, 4, 4) + hpack_string(path);  // :path, literal, indexed name
  b += hpack_int(0x00, 4, 1) + hpack_string("h");   // :authority
  return b;
}
inline std::string get(std::uint32_t stream, std::string_view path = "/") {
  return frame(kHeaders, kEndHeaders | kEndStream, stream, get_block(path));
}

struct Frame {
  std::uint8_t type = 0;
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
  std::string payload;
  std::uint32_t u32(std::size_t at) const {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(payload[at + i]);
    return v;
  }
};

// The server's next frame; nullopt at EOF (or a reset).
inline Coro<std::optional<Frame>> read_frame(StreamReader& r) {
  for (;;) {
    const std::string_view in = r.buffered();
    if (in.size() >= 9) {
      const std::size_t length =
          (static_cast<std::size_t>(static_cast<unsigned char>(in[0])) << 16) |
          (static_cast<std::size_t>(static_cast<unsigned char>(in[1])) << 8) |
          static_cast<unsigned char>(in[2]);
      if (in.size() >= 9 + length) {
        Frame f{static_cast<std::uint8_t>(in[3]), static_cast<std::uint8_t>(in[4]), 0,
                std::string(in.substr(9, length))};
        f.stream = Frame{0, 0, 0, std::string(in.substr(5, 4))}.u32(0) & 0x7fffffff;
        r.consume(9 + length);
        co_return f;
      }
    }
    try {
      if (co_await r.fill_buffer() == 0) co_return std::nullopt;
    } catch (const std::system_error&) {
      co_return std::nullopt;
    }
  }
}

// The server's header blocks decoded, in the order it sent them (one
// decoder per connection: HPACK's dynamic table spans the blocks).
class Inflater {
 public:
  Inflater() { nghttp2_hd_inflate_new(&p_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater() { nghttp2_hd_inflate_del(p_); }
  Headers fields(const Frame& headers) {
    Headers out;
    const auto* in = reinterpret_cast<const std::uint8_t*>(headers.payload.data());
    std::size_t left = headers.payload.size();
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      const ssize_t n = nghttp2_hd_inflate_hd2(p_, &nv, &flags, in, left, 1);
      if (n < 0) return out;
      in += n;
      left -= static_cast<std::size_t>(n);
      if ((flags & NGHTTP2_HD_INFLATE_EMIT) != 0) {
        out.add(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
      }
      if ((flags & NGHTTP2_HD_INFLATE_FINAL) != 0) break;
    }
    nghttp2_hd_inflate_end_headers(p_);
    return out;
  }

 private:
  nghttp2_hd_inflater* p_ = nullptr;
};

// Stream 1's answer: its head's fields (:status among them), its body, and
// how it ended (RST_STREAM's code, if it was reset). Other frames are
// skipped.
struct Answer {
  Headers fields;
  std::string body;
  std::optional<std::uint32_t> reset;
};

inline Coro<Answer> read_answer(StreamReader& r, std::uint32_t stream = 1) {
  Answer a;
  Inflater inflater;
  while (std::optional<Frame> f = co_await read_frame(r)) {
    if (f->type == kHeaders) {
      Headers fields = inflater.fields(*f);
      if (f->stream == stream) a.fields = std::move(fields);
    }
    if (f->stream != stream) continue;
    if (f->type == kData) a.body += f->payload;
    if (f->type == kRst) a.reset = f->u32(0);
    if (f->type == kRst ||
        ((f->type == kData || f->type == kHeaders) && (f->flags & kEndStream) != 0))
      break;
  }
  co_return a;
}

// What the server said until it closed the connection.
struct Ending {
  std::vector<Frame> frames;
  std::optional<std::uint32_t> goaway;  // the last GOAWAY's error code
  std::optional<std::uint32_t> rst(std::uint32_t stream) const {
    for (const Frame& f : frames) {
      if (f.type == kRst && f.stream == stream) return f.u32(0);
    }
    return std::nullopt;
  }
  bool has(std::uint8_t type, std::uint32_t stream) const {
    for (const Frame& f : frames) {
      if (f.type == type && f.stream == stream) return true;
    }
    return false;
  }
};

inline Coro<Ending> read_until_eof(StreamReader& r) {
  Ending e;
  while (std::optional<Frame> f = co_await read_frame(r)) {
    if (f->type == kGoaway) e.goaway = f->u32(4);
    if (f->type != kData) e.frames.push_back(std::move(*f));  // bodies are not looked at
  }
  co_return e;
}

}  // namespace corio_http_test::h2
