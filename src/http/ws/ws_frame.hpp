// WebSocket framing (RFC 6455 section 5): the frame header's codec, the
// masking, the UTF-8 check text messages need, and WsReader, the
// incremental parser that turns received bytes into messages and control
// frames. Like the HTTP parser it works on bytes the caller buffered
// (StreamReader::buffered()), so it is fuzzed and tested on strings.
//
//   WsReader r(config);
//   WsEvent ev;
//   std::size_t n;
//   while ((n = r.parse(reader.buffered(), ev)) == 0) co_await reader.fill_buffer();
//   reader.consume(n);   // ev.kind: none (a fragment went into the message), text, ...
//
// A frame is taken once it is whole in the buffer; its header is checked as
// soon as it arrives, so a frame over the message limit is refused before
// its payload is waited for (the buffer never holds more than one
// message's worth). Every violation is a WsProtocolError with the close
// code to answer with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "http/ws/ws_deflate.hpp"

namespace corio::http::detail {

// The peer broke the protocol: close with code() (1002, 1007, 1009).
class WsProtocolError : public std::runtime_error {
 public:
  WsProtocolError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

enum class Opcode : std::uint8_t {
  continuation = 0x0,
  text = 0x1,
  binary = 0x2,
  close = 0x8,
  ping = 0x9,
  pong = 0xA,
};

inline constexpr std::size_t kMaxControlPayload = 125;
inline constexpr std::size_t kMaxFrameHeader = 14;

// Writes a frame header for a payload of `length` bytes into out (room for
// kMaxFrameHeader); returns its size.
std::size_t frame_header(char* out, Opcode op, bool fin, bool rsv1, std::uint64_t length,
                         const std::optional<std::uint32_t>& mask) noexcept;
// Appends a frame header for a payload of `length` bytes.
void append_frame_header(std::string& out, Opcode op, bool fin, bool rsv1, std::uint64_t length,
                         const std::optional<std::uint32_t>& mask);
// Appends one frame: the header, then payload masked with mask when given
// (clients mask every frame, servers none).
void append_frame(std::string& out, Opcode op, bool fin, bool rsv1, std::string_view payload,
                  const std::optional<std::uint32_t>& mask);
// XORs data with the 4-byte key (in network order), starting at key byte
// `phase` (0..3).
void apply_mask(char* data, std::size_t n, std::uint32_t key, std::size_t phase = 0) noexcept;

// Checks UTF-8 as it arrives in pieces: fails at the first byte no valid
// text can continue with (RFC 6455's "fail fast"), so a message is refused
// before it is complete.
class Utf8Validator {
 public:
  bool feed(std::string_view bytes) noexcept;  // false: not UTF-8
  bool complete() const noexcept { return need_ == 0; }
  void reset() noexcept { *this = Utf8Validator(); }

 private:
  int need_ = 0;  // continuation bytes still owed
  unsigned char lo_ = 0x80, hi_ = 0xBF;  // the range the next one must be in
};

bool is_valid_utf8(std::string_view s) noexcept;
// A close code a frame may carry (RFC 6455 section 7.4; 1012-1014 as IANA
// registered them).
bool is_valid_close_code(int code) noexcept;

struct WsEvent {
  enum class Kind { none, text, binary, ping, pong, close };
  Kind kind = Kind::none;
  std::string data;  // the message, the ping/pong payload, the close reason
  int code = 0;      // close: the code (1005 when the frame had none)
};

struct WsReaderConfig {
  bool expect_masked = true;  // a server reads masked frames, a client unmasked ones
  std::size_t max_msg_size = 4 * 1024 * 1024;
  // permessage-deflate agreed: RSV1 marks a compressed message, inflated by
  // this (owned by the reader).
  std::unique_ptr<WsInflater> inflater;
};

class WsReader {
 public:
  explicit WsReader(WsReaderConfig config);
  WsReader(WsReader&&) noexcept;
  WsReader& operator=(WsReader&&) noexcept;
  ~WsReader();

  // Takes at most one frame from the front of buf: returns its length once
  // it is whole (and fills ev when it completed a message or is a control
  // frame), 0 while more bytes are needed. Throws WsProtocolError.
  std::size_t parse(std::string_view buf, WsEvent& ev);
  // Before waiting for more bytes: between messages, the inflater lets its
  // stream go (ws_deflate.hpp); inside a compressed message it must stay.
  void park();
  // The inflater, for tests; null without permessage-deflate.
  const WsInflater* inflater() const noexcept { return config_.inflater.get(); }

 private:
  struct Header {
    bool fin, rsv1;
    Opcode op;
    bool masked;
    std::uint32_t mask;
    std::uint64_t length;
    std::size_t size;  // of the header
  };
  std::optional<Header> parse_header(std::string_view buf) const;
  void check_header(const Header& h) const;
  void take_data(const Header& h, std::string_view payload, WsEvent& ev);
  void take_control(const Header& h, WsEvent& ev);
  void inflate(const Header& h, std::string_view raw);
  void append_text(std::string_view piece, bool final_piece);

  WsReaderConfig config_;
  bool in_message_ = false;  // a fragmented message is being received
  bool compressed_ = false;  // its first frame had RSV1
  Opcode message_op_ = Opcode::text;
  std::string message_;  // moved out whole: no capacity kept between messages
  Utf8Validator utf8_;
};

}  // namespace corio::http::detail
