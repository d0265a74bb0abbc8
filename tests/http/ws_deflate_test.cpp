// permessage-deflate's zlib streams come and go (src/http/ws/ws_deflate.hpp):
// a direction without context takeover holds no stream between messages, a
// parked inflater holds only the window's bytes, and messages still round
// trip, many of them, whole and in fragments, whether the stream lived on or
// was freed and made again in between. Structural checks, no RSS.
#include <gtest/gtest.h>

#include <string>

#include <corio/http/websocket.hpp>

#include "http/ws/ws_deflate.hpp"
#include "http/ws/ws_frame.hpp"

namespace {

using namespace corio::http::detail;

constexpr std::size_t kMax = 1 << 20;

// Messages alike enough that a carried-over context shrinks the later ones.
std::string message(int i) {
  return R"({"type":"quote","symbol":"ACME","bid":)" + std::to_string(1000 + i) +
         R"(,"ask":)" + std::to_string(1001 + i) + R"(,"venue":"XNAS","note":"the same words again"})";
}

std::string inflate_whole(WsInflater& in, const std::string& z) {
  std::string out;
  in.feed(z, out, kMax);
  in.finish(out, kMax);
  return out;
}

TEST(WsDeflateState, NoContextTakeoverHoldsNoStreamBetweenMessages) {
  WsDeflater d({15, true}, 6);
  WsInflater i({15, true});
  EXPECT_FALSE(d.holds_stream()) << "made lazily, on the first message";
  EXPECT_FALSE(i.holds_stream());
  for (int n = 0; n < 20; ++n) {
    const std::string z = d.compress(message(n));
    EXPECT_FALSE(d.holds_stream());
    EXPECT_EQ(inflate_whole(i, z), message(n));
    EXPECT_FALSE(i.holds_stream());
    EXPECT_EQ(i.parked_window(), 0u);
  }
}

TEST(WsDeflateState, ContextTakeoverKeepsTheDeflaterAndParksTheInflatersWindow) {
  WsDeflater d({12, false}, 6);
  WsInflater i({12, false});
  std::size_t first = 0, later = 0;
  std::size_t received = 0;
  for (int n = 0; n < 20; ++n) {
    const std::string z = d.compress(message(n));
    (n == 0 ? first : later) = z.size();
    EXPECT_TRUE(d.holds_stream());
    EXPECT_EQ(inflate_whole(i, z), message(n));
    EXPECT_TRUE(i.holds_stream()) << "kept until the connection waits";
    i.park();
    EXPECT_FALSE(i.holds_stream());
    received += message(n).size();
    EXPECT_EQ(i.parked_window(), std::min<std::size_t>(received, 1u << 12)) << "the window, no more";
  }
  EXPECT_LT(later * 2, first) << "the context carried over the parking";
}

// Each message whole or in fragments, the inflater parked or not between
// them: the same messages come out of a reader fed by one deflater.
void round_trip_through_reader(bool park_between, bool fragmented) {
  WsDeflater d({15, false}, 6);
  WsReaderConfig c;
  c.max_msg_size = kMax;
  c.inflater = std::make_unique<WsInflater>(DeflateDirection{15, false});
  WsReader r(std::move(c));
  for (int n = 0; n < 50; ++n) {
    const std::string text = message(n) + std::string(static_cast<std::size_t>(n) * 97, 'x');
    const std::string z = d.compress(text);
    std::string bytes;
    const std::size_t piece = fragmented ? 7 : z.size();
    for (std::size_t at = 0; at < z.size() || at == 0; at += piece) {
      const bool fin = at + piece >= z.size();
      append_frame(bytes, at == 0 ? Opcode::text : Opcode::continuation, fin, at == 0,
                   std::string_view(z).substr(at, piece), 0x11223344u);
    }
    WsEvent ev;
    std::size_t at = 0;
    while (at < bytes.size()) {
      at += r.parse(std::string_view(bytes).substr(at), ev);
      if (park_between) r.park();  // inside a fragmented message it must keep the stream
    }
    ASSERT_EQ(ev.kind, WsEvent::Kind::text) << n;
    ASSERT_EQ(ev.data, text) << n;
    if (park_between) {
      EXPECT_FALSE(r.inflater()->holds_stream());
    }
  }
}

TEST(WsDeflateState, MessagesRoundTripAcrossParking) {
  for (bool park : {false, true}) {
    for (bool fragmented : {false, true}) {
      SCOPED_TRACE(std::string(park ? "parked" : "live") + (fragmented ? ", fragmented" : ", whole"));
      round_trip_through_reader(park, fragmented);
    }
  }
}

// A peer that agreed to 512 bytes of window and refers 6000 bytes back into
// its previous message: corrupt data, whether the window was parked or not.
TEST(WsDeflateState, ABackReferenceBeyondTheAgreedWindowIsCorruptData) {
  for (bool park : {false, true}) {
    WsDeflater d({15, false}, 6);
    WsInflater i({9, false});
    const std::string first = message(0) + std::string(6000, 'y');
    EXPECT_EQ(inflate_whole(i, d.compress(first)), first);
    if (park) i.park();
    EXPECT_EQ(i.parked_window(), park ? 512u : 0u);
    try {
      (void)inflate_whole(i, d.compress(message(0)));
      ADD_FAILURE() << "inflated a reference past the agreed window, parked: " << park;
    } catch (const WsProtocolError& e) {
      EXPECT_EQ(e.code(), 1007);
    }
  }
}

// The reader unmasks a compressed payload piece by piece through a buffer of
// its own (so that none outlives the message): a payload many pieces long,
// that does not compress, still inflates whole, in one frame or in odd-sized
// fragments (each masked from its own key's first byte).
TEST(WsDeflateState, ACompressedPayloadLongerThanTheUnmaskingBufferInflatesWhole) {
  std::string text;
  std::uint32_t x = 12345;
  for (int n = 0; n < 40000; ++n) {
    x = x * 1103515245u + 12345u;
    text += static_cast<char>('!' + (x >> 16) % 90);
  }
  for (std::size_t piece : {std::size_t{0}, std::size_t{5001}}) {
    WsDeflater d({15, true}, 6);
    const std::string z = d.compress(text);
    ASSERT_GT(z.size(), 3 * 4096u) << "many pieces of the reader's buffer";
    WsReaderConfig c;
    c.max_msg_size = kMax;
    c.inflater = std::make_unique<WsInflater>(DeflateDirection{15, true});
    WsReader r(std::move(c));
    const std::size_t step = piece == 0 ? z.size() : piece;
    std::string bytes;
    for (std::size_t at = 0; at < z.size(); at += step) {
      append_frame(bytes, at == 0 ? Opcode::text : Opcode::continuation, at + step >= z.size(), at == 0,
                   std::string_view(z).substr(at, step), 0xA1B2C3D4u);
    }
    WsEvent ev;
    for (std::size_t at = 0; at < bytes.size();) at += r.parse(std::string_view(bytes).substr(at), ev);
    ASSERT_EQ(ev.kind, WsEvent::Kind::text) << piece;
    EXPECT_EQ(ev.data, text) << piece;
  }
}

}  // namespace
