// permessage-deflate (RFC 7692): the extension's negotiation, and the zlib
// streams that compress a side's messages and inflate the peer's.
//
// A message is deflated with a sync flush and its final 00 00 FF FF
// removed; the receiver puts them back. With context takeover the window
// carries over from message to message; without, each message is
// compressed on its own.
//
// Memory (an idle connection holds no zlib stream): a stream is made when
// a compressed message starts and freed when the direction's agreement lets
// it go. Without context takeover that is right after each message. With
// it, the deflater keeps its stream (zlib cannot shrink a live one); the
// inflater is parked when the connection waits for bytes between messages:
// only the window's bytes are kept (inflateGetDictionary: at most the
// peer's 2^window_bits, fewer when less arrived) and a fresh stream gets
// them back with inflateSetDictionary when the next message starts. At 15
// bits (memLevel 5, ws_deflate.cpp) a deflate stream holds 144 KiB of zlib's
// memory and an inflate stream 39 KiB; a parked window of the 12 bits a server asks of its
// clients by default (WsDeflateOptions) holds 4 KiB at most.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace corio::http {
struct WsDeflateOptions;
}

namespace corio::http::detail {

// One direction's agreement: the LZ77 window (9..15 bits) and whether the
// sender starts each message afresh.
struct DeflateDirection {
  int window_bits = 15;
  bool no_context_takeover = false;
};

struct DeflateAgreement {
  bool server_no_context_takeover = false;
  bool client_no_context_takeover = false;
  int server_max_window_bits = 15;
  int client_max_window_bits = 15;
  DeflateDirection server() const noexcept { return {server_max_window_bits, server_no_context_takeover}; }
  DeflateDirection client() const noexcept { return {client_max_window_bits, client_no_context_takeover}; }
};

struct DeflateAccept {
  DeflateAgreement agreed;
  std::string answer;  // the Sec-WebSocket-Extensions value of the 101
};

// Server: the first permessage-deflate offer in the client's
// Sec-WebSocket-Extensions it can honour, or nullopt (no compression).
std::optional<DeflateAccept> accept_deflate(std::string_view offers, const WsDeflateOptions& opts);
// Client: the offer to send, and what the server's answer agrees to
// (std::invalid_argument when the answer is not one the offer allows). The
// client's own window is at most what it offered, whatever the answer says.
std::string offer_deflate(const WsDeflateOptions& opts);
DeflateAgreement parse_deflate_answer(std::string_view answer, const WsDeflateOptions& offered);

class WsDeflater {
 public:
  WsDeflater(DeflateDirection agreed, int level);
  WsDeflater(const WsDeflater&) = delete;
  WsDeflater& operator=(const WsDeflater&) = delete;
  ~WsDeflater();
  // One message's compressed payload (without the 00 00 FF FF tail).
  std::string compress(std::string_view message);
  // Whether a zlib stream is held: between messages, only with context takeover.
  bool holds_stream() const noexcept { return z_ != nullptr; }

 private:
  struct Stream;
  std::unique_ptr<Stream> z_;
  DeflateDirection agreed_;
  int level_;
};

class WsInflater {
 public:
  explicit WsInflater(DeflateDirection agreed);
  WsInflater(const WsInflater&) = delete;
  WsInflater& operator=(const WsInflater&) = delete;
  ~WsInflater();
  // Inflates a piece of a compressed message onto out. WsProtocolError:
  // 1009 when out would grow past max_size, 1007 for corrupt data (a
  // distance beyond the agreed window too).
  void feed(std::string_view in, std::string& out, std::size_t max_size);
  // The message's end (the removed tail goes in).
  void finish(std::string& out, std::size_t max_size);
  // Between messages: frees the stream, keeping only the window's bytes
  // when the peer takes its context over (not after a message that ended
  // inside a deflate block: its state is more than the window).
  void park();
  bool holds_stream() const noexcept { return z_ != nullptr; }
  // The bytes kept for the peer's context while parked.
  std::size_t parked_window() const noexcept { return window_.size(); }

 private:
  struct Stream;
  Stream& stream();
  void inflate_into(std::string_view in, std::string& out, std::size_t max_size, int flush);
  std::unique_ptr<Stream> z_;
  std::string window_;  // parked: the last bytes inflated, what the next message may refer to
  DeflateDirection agreed_;
};

}  // namespace corio::http::detail
