// WebSocket framing (see ws_frame.hpp).
#include <algorithm>
#include <cstring>

#include <corio/http/websocket.hpp>

#include "http/ws/ws_deflate.hpp"
#include "http/ws/ws_frame.hpp"

namespace corio::http::detail {

namespace {

bool is_control(Opcode op) noexcept { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

bool is_known(std::uint8_t op) noexcept {
  return op <= 0x2 || (op >= 0x8 && op <= 0xA);
}

[[noreturn]] void protocol_error(const std::string& what) {
  throw WsProtocolError(ws_close::protocol_error, what);
}

std::uint64_t read_be(const unsigned char* p, std::size_t n) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

void apply_mask(char* data, std::size_t n, std::uint32_t key, std::size_t phase) noexcept {
  unsigned char k[8];
  for (std::size_t j = 0; j < 8; ++j) {
    k[j] = static_cast<unsigned char>(key >> (24 - 8 * ((phase + j) % 4)));
  }
  // Eight bytes per step: masking is on every byte a server receives.
  std::uint64_t k8;
  std::memcpy(&k8, k, 8);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, data + i, 8);
    v ^= k8;
    std::memcpy(data + i, &v, 8);
  }
  for (std::size_t j = 0; i < n; ++i, ++j) data[i] = static_cast<char>(data[i] ^ k[j]);
}

std::size_t frame_header(char* out, Opcode op, bool fin, bool rsv1, std::uint64_t len,
                         const std::optional<std::uint32_t>& mask) noexcept {
  auto* head = reinterpret_cast<unsigned char*>(out);
  std::size_t n = 0;
  head[n++] = static_cast<unsigned char>((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) |
                                         static_cast<std::uint8_t>(op));
  const unsigned char mask_bit = mask ? 0x80 : 0;
  if (len < 126) {
    head[n++] = static_cast<unsigned char>(mask_bit | len);
  } else if (len <= 0xFFFF) {
    head[n++] = mask_bit | 126;
    head[n++] = static_cast<unsigned char>(len >> 8);
    head[n++] = static_cast<unsigned char>(len);
  } else {
    head[n++] = mask_bit | 127;
    for (int shift = 56; shift >= 0; shift -= 8) head[n++] = static_cast<unsigned char>(len >> shift);
  }
  if (mask) {
    for (int shift = 24; shift >= 0; shift -= 8) head[n++] = static_cast<unsigned char>(*mask >> shift);
  }
  return n;
}

void append_frame_header(std::string& out, Opcode op, bool fin, bool rsv1, std::uint64_t len,
                         const std::optional<std::uint32_t>& mask) {
  char head[kMaxFrameHeader];
  out.append(head, frame_header(head, op, fin, rsv1, len, mask));
}

void append_frame(std::string& out, Opcode op, bool fin, bool rsv1, std::string_view payload,
                  const std::optional<std::uint32_t>& mask) {
  append_frame_header(out, op, fin, rsv1, payload.size(), mask);
  const std::size_t at = out.size();
  out += payload;
  if (mask) apply_mask(out.data() + at, payload.size(), *mask);
}

bool Utf8Validator::feed(std::string_view bytes) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = p[i];
    if (need_ > 0) {
      if (c < lo_ || c > hi_) return false;
      lo_ = 0x80;
      hi_ = 0xBF;
      --need_;
      continue;
    }
    if (c < 0x80) continue;
    // The lead byte fixes how many follow and, against overlong forms,
    // surrogates and code points past U+10FFFF, the range of the first.
    if (c >= 0xC2 && c <= 0xDF) {
      need_ = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need_ = 2;
      if (c == 0xE0) lo_ = 0xA0;
      if (c == 0xED) hi_ = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need_ = 3;
      if (c == 0xF0) lo_ = 0x90;
      if (c == 0xF4) hi_ = 0x8F;
    } else {
      return false;
    }
  }
  return true;
}

bool is_valid_utf8(std::string_view s) noexcept {
  Utf8Validator v;
  return v.feed(s) && v.complete();
}

bool is_valid_close_code(int code) noexcept {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
         (code >= 3000 && code <= 4999);
}

WsReader::WsReader(WsReaderConfig config) : config_(std::move(config)) {}
WsReader::WsReader(WsReader&&) noexcept = default;
WsReader& WsReader::operator=(WsReader&&) noexcept = default;
WsReader::~WsReader() = default;

std::optional<WsReader::Header> WsReader::parse_header(std::string_view buf) const {
  if (buf.size() < 2) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
  if ((p[0] & 0x30) != 0) protocol_error("reserved bits RSV2/RSV3 set");
  const std::uint8_t op = p[0] & 0x0F;
  if (!is_known(op)) protocol_error("unknown opcode " + std::to_string(op));
  Header h{(p[0] & 0x80) != 0, (p[0] & 0x40) != 0, static_cast<Opcode>(op), (p[1] & 0x80) != 0,
           0, p[1] & 0x7Fu, 2};
  if (is_control(h.op) && h.length > kMaxControlPayload) protocol_error("a control frame over 125 bytes");
  const std::size_t ext = h.length == 126 ? 2 : h.length == 127 ? 8 : 0;
  if (buf.size() < 2 + ext + (h.masked ? 4 : 0)) return std::nullopt;
  if (ext > 0) h.length = read_be(p + 2, ext);
  if (ext == 8 && (h.length >> 63) != 0) protocol_error("a frame length with its top bit set");
  h.size = 2 + ext;
  if (h.masked) {
    h.mask = static_cast<std::uint32_t>(read_be(p + h.size, 4));
    h.size += 4;
  }
  return h;
}

void WsReader::check_header(const Header& h) const {
  if (h.masked != config_.expect_masked) {
    protocol_error(h.masked ? "a masked frame from the server" : "an unmasked frame from the client");
  }
  if (is_control(h.op)) {
    if (!h.fin) protocol_error("a fragmented control frame");
    if (h.rsv1) protocol_error("RSV1 set on a control frame");
    return;
  }
  if (h.op == Opcode::continuation && !in_message_) protocol_error("a continuation frame with no message begun");
  if (h.op != Opcode::continuation && in_message_) protocol_error("a new message inside a fragmented one");
  if (h.rsv1 && (h.op == Opcode::continuation || !config_.inflater)) {
    protocol_error(config_.inflater ? "RSV1 set on a continuation frame"
                                    : "RSV1 set without permessage-deflate");
  }
  const std::uint64_t so_far = h.op == Opcode::continuation ? message_.size() : 0;
  if (h.length > config_.max_msg_size || so_far + h.length > config_.max_msg_size) {
    throw WsProtocolError(ws_close::message_too_big,
                          "a message over " + std::to_string(config_.max_msg_size) + " bytes");
  }
}

std::size_t WsReader::parse(std::string_view buf, WsEvent& ev) {
  ev.kind = WsEvent::Kind::none;
  const std::optional<Header> h = parse_header(buf);
  if (!h) return 0;
  check_header(*h);
  if (buf.size() - h->size < h->length) return 0;
  const std::string_view raw = buf.substr(h->size, static_cast<std::size_t>(h->length));
  if (is_control(h->op)) {
    ev.data.assign(raw);
    if (h->masked) apply_mask(ev.data.data(), ev.data.size(), h->mask);
    take_control(*h, ev);
  } else {
    take_data(*h, raw, ev);
  }
  return h->size + raw.size();
}

void WsReader::park() {
  if (!in_message_ && config_.inflater) config_.inflater->park();
}

void WsReader::append_text(std::string_view piece, bool final_piece) {
  if (message_op_ != Opcode::text) return;
  if (!utf8_.feed(piece) || (final_piece && !utf8_.complete())) {
    throw WsProtocolError(ws_close::invalid_data, "a text message that is not UTF-8");
  }
}

void WsReader::take_data(const Header& h, std::string_view raw, WsEvent& ev) {
  if (h.op != Opcode::continuation) {
    in_message_ = true;
    compressed_ = h.rsv1;
    message_op_ = h.op;
    message_.clear();
    utf8_.reset();
  }
  const std::size_t before = message_.size();
  if (compressed_) {
    inflate(h, raw);
  } else {
    message_ += raw;
    if (h.masked) apply_mask(message_.data() + before, raw.size(), h.mask);
  }
  append_text(std::string_view(message_).substr(before), h.fin);
  if (!h.fin) return;
  in_message_ = false;
  ev.kind = message_op_ == Opcode::text ? WsEvent::Kind::text : WsEvent::Kind::binary;
  ev.data = std::move(message_);
  message_.clear();
}

// The payload is unmasked through a buffer on the stack, so that no buffer
// of the reader's keeps a message's size while the connection idles.
void WsReader::inflate(const Header& h, std::string_view raw) {
  char piece[4096];
  for (std::size_t at = 0; at < raw.size();) {
    const std::size_t n = std::min(sizeof piece, raw.size() - at);
    std::memcpy(piece, raw.data() + at, n);
    if (h.masked) apply_mask(piece, n, h.mask, at % 4);
    config_.inflater->feed(std::string_view(piece, n), message_, config_.max_msg_size);
    at += n;
  }
  if (h.fin) config_.inflater->finish(message_, config_.max_msg_size);
}

// ev.data holds the unmasked payload.
void WsReader::take_control(const Header& h, WsEvent& ev) {
  if (h.op == Opcode::ping || h.op == Opcode::pong) {
    ev.kind = h.op == Opcode::ping ? WsEvent::Kind::ping : WsEvent::Kind::pong;
    return;
  }
  ev.kind = WsEvent::Kind::close;
  const std::string_view payload = ev.data;
  if (payload.empty()) {
    ev.code = ws_close::no_status;
    return;
  }
  if (payload.size() == 1) protocol_error("a close frame with a 1-byte payload");
  ev.code = (static_cast<unsigned char>(payload[0]) << 8) | static_cast<unsigned char>(payload[1]);
  if (!is_valid_close_code(ev.code)) protocol_error("close code " + std::to_string(ev.code) + " is not valid");
  if (!is_valid_utf8(payload.substr(2))) {
    throw WsProtocolError(ws_close::invalid_data, "a close reason that is not UTF-8");
  }
  ev.data.erase(0, 2);
}

}  // namespace corio::http::detail
