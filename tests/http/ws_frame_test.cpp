// The WebSocket frame parser, UTF-8 check, permessage-deflate and handshake
// pieces, on strings (src/http/ws_*.hpp): every rule of RFC 6455 section 5
// and RFC 7692 a peer can break, and the close code each one gets.
#include <gtest/gtest.h>

#include <string>

#include <corio/http/websocket.hpp>

#include "http/ws/ws_deflate.hpp"
#include "http/ws/ws_frame.hpp"
#include "http/ws/ws_handshake.hpp"

namespace {

using corio::http::WsDeflateOptions;
using namespace corio::http::detail;

constexpr std::uint32_t kMask = 0x37fa213d;

std::string frame(Opcode op, std::string_view payload, bool fin = true, bool masked = true,
                  bool rsv1 = false) {
  std::string out;
  append_frame(out, op, fin, rsv1, payload, masked ? std::optional<std::uint32_t>(kMask) : std::nullopt);
  return out;
}

WsReader server_reader(std::size_t max = 1 << 20, bool deflate = false) {
  WsReaderConfig c;
  c.expect_masked = true;
  c.max_msg_size = max;
  if (deflate) c.inflater = std::make_unique<WsInflater>(DeflateDirection{});
  return WsReader(std::move(c));
}

// The close code parsing `bytes` ends with, or 0 when it parses.
int error_code(WsReader& r, std::string bytes) {
  try {
    WsEvent ev;
    std::size_t at = 0;
    while (at < bytes.size()) {
      const std::size_t n = r.parse(std::string_view(bytes).substr(at), ev);
      if (n == 0) return 0;
      at += n;
    }
  } catch (const WsProtocolError& e) {
    return e.code();
  }
  return 0;
}

TEST(WsFrame, RoundTripsEveryLengthForm) {
  for (std::size_t len : {0u, 1u, 125u, 126u, 65535u, 65536u, 200000u}) {
    const std::string payload(len, 'x');
    const std::string bytes = frame(Opcode::binary, payload);
    WsReader r = server_reader();
    WsEvent ev;
    // Short of a byte: not yet a frame.
    EXPECT_EQ(r.parse(std::string_view(bytes).substr(0, bytes.size() - 1), ev), 0u) << len;
    ASSERT_EQ(r.parse(bytes, ev), bytes.size()) << len;
    EXPECT_EQ(ev.kind, WsEvent::Kind::binary);
    EXPECT_EQ(ev.data, payload);
  }
}

TEST(WsFrame, MaskingUnmasksAtAnyPhase) {
  std::string data = "Hello, masking world: more than eight bytes";
  const std::string original = data;
  apply_mask(data.data(), data.size(), kMask);
  EXPECT_NE(data, original);
  apply_mask(data.data(), 5, kMask);
  apply_mask(data.data() + 5, data.size() - 5, kMask, 5 % 4);
  EXPECT_EQ(data, original);
}

TEST(WsFrame, ReassemblesFragmentsWithControlFramesBetween) {
  WsReader r = server_reader();
  const std::string bytes = frame(Opcode::text, "Hel", false) + frame(Opcode::ping, "p") +
                            frame(Opcode::continuation, "lo", false) +
                            frame(Opcode::continuation, "!", true);
  WsEvent ev;
  std::size_t at = 0;
  std::vector<WsEvent::Kind> kinds;
  while (at < bytes.size()) {
    at += r.parse(std::string_view(bytes).substr(at), ev);
    kinds.push_back(ev.kind);
  }
  EXPECT_EQ(kinds, (std::vector<WsEvent::Kind>{WsEvent::Kind::none, WsEvent::Kind::ping,
                                               WsEvent::Kind::none, WsEvent::Kind::text}));
  EXPECT_EQ(ev.data, "Hello!");
}

TEST(WsFrame, MaskingRulesAre1002BothWays) {
  WsReader server = server_reader();
  EXPECT_EQ(error_code(server, frame(Opcode::text, "x", true, false)), 1002);
  WsReaderConfig c;
  c.expect_masked = false;
  WsReader client{std::move(c)};
  EXPECT_EQ(error_code(client, frame(Opcode::text, "x", true, true)), 1002);
}

TEST(WsFrame, BadFramesAre1002) {
  const auto code = [](std::string bytes) {
    WsReader r = server_reader();
    return error_code(r, std::move(bytes));
  };
  std::string rsv2 = frame(Opcode::text, "x");
  rsv2[0] = static_cast<char>(rsv2[0] | 0x20);
  EXPECT_EQ(code(rsv2), 1002);
  std::string opcode3 = frame(Opcode::text, "x");
  opcode3[0] = static_cast<char>(0x83);
  EXPECT_EQ(code(opcode3), 1002);
  EXPECT_EQ(code(frame(Opcode::text, "x", true, true, true)), 1002) << "RSV1 without deflate";
  EXPECT_EQ(code(frame(Opcode::ping, std::string(126, 'p'))), 1002);
  EXPECT_EQ(code(frame(Opcode::ping, "p", false)), 1002) << "fragmented control";
  EXPECT_EQ(code(frame(Opcode::continuation, "x")), 1002) << "nothing to continue";
  EXPECT_EQ(code(frame(Opcode::text, "a", false) + frame(Opcode::binary, "b")), 1002);
  std::string huge("\x82\xff\x80", 3);  // masked, 64-bit length 2^63, then a mask key
  huge += std::string(11, '\0');
  EXPECT_EQ(code(huge), 1002) << "64-bit length with its top bit";
}

TEST(WsFrame, OversizeIsRefusedFromTheHeaderAlone) {
  WsReader r = server_reader(1000);
  std::string bytes = frame(Opcode::binary, std::string(1001, 'x'));
  bytes.resize(8);  // the header and mask, no payload yet
  EXPECT_EQ(error_code(r, bytes), 1009);
  WsReader fragments = server_reader(1000);
  EXPECT_EQ(error_code(fragments, frame(Opcode::binary, std::string(600, 'x'), false) +
                                      frame(Opcode::continuation, std::string(600, 'x'))),
            1009);
}

TEST(WsFrame, TextMustBeUtf8AcrossFragmentsAndFailsFast) {
  WsReader ok = server_reader();
  // "é" split between two fragments is fine.
  EXPECT_EQ(error_code(ok, frame(Opcode::text, "caf\xc3", false) + frame(Opcode::continuation, "\xa9")), 0);
  WsReader bad = server_reader();
  // A first fragment that no continuation can make valid is refused at once.
  EXPECT_EQ(error_code(bad, frame(Opcode::text, "ok\xff", false)), 1007);
  WsReader truncated = server_reader();
  EXPECT_EQ(error_code(truncated, frame(Opcode::text, "caf\xc3")), 1007);
  WsReader binary = server_reader();
  EXPECT_EQ(error_code(binary, frame(Opcode::binary, "\xff\xfe")), 0);
}

TEST(WsFrame, Utf8ValidatorRefusesOverlongsSurrogatesAndBeyondUnicode) {
  EXPECT_TRUE(is_valid_utf8("\x7f\xc2\x80\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\x80"));
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // cut short
}

TEST(WsFrame, CloseFramesCarryValidCodesAndReasons) {
  const auto close = [](std::string payload) {
    WsReader r = server_reader();
    WsEvent ev;
    try {
      const std::string bytes = frame(Opcode::close, payload);
      EXPECT_EQ(r.parse(bytes, ev), bytes.size());
    } catch (const WsProtocolError& e) {
      return std::pair<int, std::string>(-e.code(), "");
    }
    return std::pair<int, std::string>(ev.code, ev.data);
  };
  EXPECT_EQ(close(""), (std::pair<int, std::string>(1005, "")));
  EXPECT_EQ(close("\x03\xe8" "bye"), (std::pair<int, std::string>(1000, "bye")));
  EXPECT_EQ(close("\x0f\xa0"), (std::pair<int, std::string>(4000, "")));
  EXPECT_EQ(close("\x03").first, -1002);
  EXPECT_EQ(close("\x03\xed").first, -1002) << "1005 is never sent";
  EXPECT_EQ(close("\x03\xee").first, -1002) << "1006 is never sent";
  EXPECT_EQ(close("\x03\xe7").first, -1002) << "999";
  EXPECT_EQ(close("\x03\xe8\xff").first, -1007) << "a reason that is not UTF-8";
}

TEST(WsDeflate, RoundTripsWithAndWithoutContextTakeover) {
  for (bool no_takeover : {false, true}) {
    WsDeflater d({15, no_takeover}, 6);
    WsInflater i({15, no_takeover});
    for (int n = 0; n < 3; ++n) {
      const std::string msg = "the same words again and again and again " + std::to_string(n);
      const std::string z = d.compress(msg);
      std::string out;
      i.feed(z.substr(0, z.size() / 2), out, 1 << 20);
      i.feed(z.substr(z.size() / 2), out, 1 << 20);
      i.finish(out, 1 << 20);
      EXPECT_EQ(out, msg);
    }
  }
}

TEST(WsDeflate, CompressedMessagesThroughTheReader) {
  WsDeflater d({15, false}, 6);
  WsReader r = server_reader(1 << 20, true);
  const std::string msg(5000, 'a');
  const std::string z = d.compress(msg);
  const std::string bytes = frame(Opcode::text, z.substr(0, 10), false, true, true) +
                            frame(Opcode::continuation, z.substr(10));
  WsEvent ev;
  std::size_t at = 0;
  while (at < bytes.size()) at += r.parse(std::string_view(bytes).substr(at), ev);
  EXPECT_EQ(ev.kind, WsEvent::Kind::text);
  EXPECT_EQ(ev.data, msg);
  WsReader again = server_reader(1 << 20, true);
  EXPECT_EQ(error_code(again, frame(Opcode::text, "x", false, true, true) +
                                  frame(Opcode::continuation, "y", true, true, true)),
            1002)
      << "RSV1 on a continuation";
}

TEST(WsDeflate, BombsAre1009AndCorruptDataIs1007) {
  WsDeflater d({15, false}, 9);
  const std::string bomb = d.compress(std::string(10 * 1024 * 1024, '\0'));
  EXPECT_LT(bomb.size(), 20000u);
  WsReader r = server_reader(1 << 20, true);
  EXPECT_EQ(error_code(r, frame(Opcode::binary, bomb, true, true, true)), 1009);
  WsReader corrupt = server_reader(1 << 20, true);
  EXPECT_EQ(error_code(corrupt, frame(Opcode::binary, "\xff\xff\xff\xff", true, true, true)), 1007);
}

TEST(WsDeflate, ServerNegotiation) {
  WsDeflateOptions opts;
  opts.server_no_context_takeover = false;
  opts.client_max_window_bits = 15;
  auto plain = accept_deflate("permessage-deflate; client_max_window_bits", opts);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->answer, "permessage-deflate");
  auto limited = accept_deflate(
      "permessage-deflate; server_max_window_bits=10; client_no_context_takeover", opts);
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->agreed.server_max_window_bits, 10);
  EXPECT_TRUE(limited->agreed.client_no_context_takeover);
  EXPECT_EQ(limited->answer, "permessage-deflate; client_no_context_takeover; server_max_window_bits=10");
  // An offer we cannot honour is skipped for the next one.
  auto second = accept_deflate("permessage-deflate; server_max_window_bits=8, permessage-deflate", opts);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->agreed.server_max_window_bits, 15);
  EXPECT_FALSE(accept_deflate("permessage-deflate; unknown=1", opts));
  EXPECT_FALSE(accept_deflate("x-webkit-deflate-frame", opts));
  opts.enabled = false;
  EXPECT_FALSE(accept_deflate("permessage-deflate", opts));
}

TEST(WsDeflate, ServerAnswersNoContextTakeoverAndA4KiBClientWindowByDefault) {
  const WsDeflateOptions opts;
  // What browsers, npm ws and python-websockets offer.
  auto usual = accept_deflate("permessage-deflate; client_max_window_bits", opts);
  ASSERT_TRUE(usual);
  EXPECT_EQ(usual->answer, "permessage-deflate; server_no_context_takeover; client_max_window_bits=12");
  EXPECT_TRUE(usual->agreed.server_no_context_takeover);
  EXPECT_FALSE(usual->agreed.client_no_context_takeover);
  EXPECT_EQ(usual->agreed.client_max_window_bits, 12);
  // A client that did not say it can be limited keeps its 15 bits.
  auto bare = accept_deflate("permessage-deflate", opts);
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->answer, "permessage-deflate; server_no_context_takeover");
  EXPECT_EQ(bare->agreed.client_max_window_bits, 15);
  // A smaller window the client asks for stands.
  auto small = accept_deflate("permessage-deflate; client_max_window_bits=10", opts);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->agreed.client_max_window_bits, 10);
}

TEST(WsDeflate, ServerTakesItsContextOverWhenOptedOutAndNotAsked) {
  WsDeflateOptions opts;
  opts.server_no_context_takeover = false;
  auto kept = accept_deflate("permessage-deflate; client_max_window_bits", opts);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->agreed.server_no_context_takeover);
  EXPECT_EQ(kept->answer, "permessage-deflate; client_max_window_bits=12");
  // The client's request binds the server all the same (RFC 7692 section 7.1.1.1).
  auto asked = accept_deflate("permessage-deflate; server_no_context_takeover", opts);
  ASSERT_TRUE(asked);
  EXPECT_TRUE(asked->agreed.server_no_context_takeover);
}

TEST(WsDeflate, ClientOfferAndAnswer) {
  WsDeflateOptions opts;
  EXPECT_EQ(offer_deflate(opts), "permessage-deflate; server_no_context_takeover; client_max_window_bits=12");
  opts.server_no_context_takeover = false;
  opts.client_no_context_takeover = true;
  opts.client_max_window_bits = 15;
  EXPECT_EQ(offer_deflate(opts), "permessage-deflate; client_no_context_takeover; client_max_window_bits");
  const DeflateAgreement g = parse_deflate_answer("permessage-deflate; client_max_window_bits=12", opts);
  EXPECT_EQ(g.client_max_window_bits, 12);
  // The client stays within the window it offered, whatever the answer allows.
  WsDeflateOptions small;
  small.client_max_window_bits = 10;
  EXPECT_EQ(parse_deflate_answer("permessage-deflate; client_max_window_bits=12", small).client_max_window_bits, 10);
  EXPECT_EQ(parse_deflate_answer("permessage-deflate", small).client_max_window_bits, 10);
  EXPECT_THROW(parse_deflate_answer("permessage-deflate; client_max_window_bits", opts), std::invalid_argument);
  EXPECT_THROW(parse_deflate_answer("permessage-deflate, permessage-deflate", opts), std::invalid_argument);
  EXPECT_THROW(parse_deflate_answer("other", opts), std::invalid_argument);
}

TEST(WsHandshake, AcceptKeyIsRfc6455sExample) {
  EXPECT_EQ(ws_accept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_TRUE(is_valid_ws_key("dGhlIHNhbXBsZSBub25jZQ=="));
  EXPECT_TRUE(is_valid_ws_key(make_ws_key()));
  EXPECT_NE(make_ws_key(), make_ws_key());
  EXPECT_FALSE(is_valid_ws_key("dGhlIHNhbXBsZSBub25jZQ"));
  EXPECT_FALSE(is_valid_ws_key("dGhlIHNhbXBsZSBub25jZR=="));  // 17 bits in the last characters
}

}  // namespace
