// permessage-deflate (RFC 7692): the extension's negotiation, and the zlib
// streams that compress a side's messages and inflate the peer's.
//
// A message is deflated with a sync flush and its final 00 00 FF FF
// removed; the receiver puts them back. With context takeover (the
// default) the window carries over from message to message; without, each
// message is compressed on its own. Inflating always uses a 32 KiB window
// (it decodes whatever window the peer uses) and resets when the peer's
// stream ends or the peer said it takes no context over.
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

struct DeflateAgreement {
  bool server_no_context_takeover = false;
  bool client_no_context_takeover = false;
  int server_max_window_bits = 15;
  int client_max_window_bits = 15;
};

struct DeflateAccept {
  DeflateAgreement agreed;
  std::string answer;  // the Sec-WebSocket-Extensions value of the 101
};

// Server: the first permessage-deflate offer in the client's
// Sec-WebSocket-Extensions it can honour, or nullopt (no compression).
std::optional<DeflateAccept> accept_deflate(std::string_view offers, const WsDeflateOptions& opts);
// Client: the offer to send, and what the server's answer agrees to
// (std::invalid_argument when the answer is not one the offer allows).
std::string offer_deflate(const WsDeflateOptions& opts);
DeflateAgreement parse_deflate_answer(std::string_view answer);

class WsDeflater {
 public:
  WsDeflater(int window_bits, bool no_context_takeover, int level);
  WsDeflater(const WsDeflater&) = delete;
  WsDeflater& operator=(const WsDeflater&) = delete;
  ~WsDeflater();
  // One message's compressed payload (without the 00 00 FF FF tail).
  std::string compress(std::string_view message);

 private:
  struct Stream;
  std::unique_ptr<Stream> z_;
  bool no_context_takeover_;
};

class WsInflater {
 public:
  explicit WsInflater(bool no_context_takeover);
  WsInflater(const WsInflater&) = delete;
  WsInflater& operator=(const WsInflater&) = delete;
  ~WsInflater();
  // Inflates a piece of a compressed message onto out. WsProtocolError:
  // 1009 when out would grow past max_size, 1007 for corrupt data.
  void feed(std::string_view in, std::string& out, std::size_t max_size);
  // The message's end (the removed tail goes in).
  void finish(std::string& out, std::size_t max_size);

 private:
  struct Stream;
  std::unique_ptr<Stream> z_;
  bool no_context_takeover_;
};

}  // namespace corio::http::detail
