// libFuzzer target: WsReader, the WebSocket frame parser, with the UTF-8
// check and permessage-deflate's inflater behind it. Input: one steering
// byte (bit 0: a server's reader, which wants masked frames, else a
// client's; bit 1: permessage-deflate agreed; bit 2: a 256-byte message
// limit; the rest: where the bytes are split), then the bytes received.
//
// Checks: the same events and the same error whether the bytes arrive
// whole or in two pieces (the reader parked between them, as a WebSocket's
// is when it waits, so the inflater's stream is freed and re-made); errors are WsProtocolError with 1002, 1007 or
// 1009 only; text messages are UTF-8; no message is over the limit; a
// close frame's code is one a frame may carry, or 1005.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "http/ws/ws_frame.hpp"

namespace {

using namespace corio::http::detail;

struct Outcome {
  std::vector<std::pair<WsEvent::Kind, std::string>> events;
  int error = 0;
};

WsReaderConfig config(unsigned char steer) {
  WsReaderConfig c;
  c.expect_masked = (steer & 1) != 0;
  if (steer & 2) c.inflater = std::make_unique<WsInflater>(DeflateDirection{15, (steer & 8) != 0});
  c.max_msg_size = (steer & 4) ? 256 : 1 << 20;
  return c;
}

void check_event(const WsEvent& ev, std::size_t max) {
  FUZZ_CHECK(ev.data.size() <= max || ev.kind == WsEvent::Kind::close);
  if (ev.kind == WsEvent::Kind::text) FUZZ_CHECK(is_valid_utf8(ev.data));
  if (ev.kind == WsEvent::Kind::ping || ev.kind == WsEvent::Kind::pong) FUZZ_CHECK(ev.data.size() <= 125);
  if (ev.kind == WsEvent::Kind::close) {
    FUZZ_CHECK(ev.code == 1005 || is_valid_close_code(ev.code));
    FUZZ_CHECK(is_valid_utf8(ev.data));
  }
}

// Parses in as a reader's buffer would hold it: first its first `split`
// bytes, then all of them.
Outcome run(std::string_view in, std::size_t split, unsigned char steer) {
  WsReaderConfig c = config(steer);
  const std::size_t max = c.max_msg_size;
  WsReader reader(std::move(c));
  Outcome o;
  std::size_t at = 0, avail = split;
  for (;;) {
    WsEvent ev;
    std::size_t n = 0;
    try {
      n = reader.parse(in.substr(at, avail - at), ev);
    } catch (const WsProtocolError& e) {
      FUZZ_CHECK(e.code() == 1002 || e.code() == 1007 || e.code() == 1009);
      o.error = e.code();
      return o;
    }
    if (n == 0) {
      if (avail == in.size()) return o;
      reader.park();  // as WebSocket::receive() does before it waits
      avail = in.size();
      continue;
    }
    at += n;
    if (ev.kind == WsEvent::Kind::none) continue;
    check_event(ev, max);
    o.events.emplace_back(ev.kind, std::move(ev.data));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const unsigned char steer = data[0];
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = run(in, in.size(), steer);
  const Outcome halves = run(in, corio_fuzz::split_point(steer, in.size()), steer);
  FUZZ_CHECK(whole.error == halves.error);
  FUZZ_CHECK(whole.events == halves.events);
  return 0;
}
