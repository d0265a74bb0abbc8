// Upgrade and CONNECT in the parser (llhttp's "upgrade" cases): the head
// ends the HTTP part, is_upgrade() says so, and the bytes after it are left
// for the protocol that follows (a WebSocket's frames, a tunnel's bytes).
#include <gtest/gtest.h>

#include <corio/http/parser.hpp>

namespace {

using namespace corio::http;

struct Parsed {
  RequestHead head;
  std::string_view rest;
};

Parsed request(std::string_view bytes) {
  RequestParser p;
  Parsed out;
  const std::size_t n = p.parse(bytes, out.head);
  EXPECT_GT(n, 0u);
  out.rest = bytes.substr(n);
  return out;
}

TEST(Upgrade, WebSocketRequestLeavesTheFramesAfterItsHead) {
  const Parsed p = request(
      "GET /demo HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n\x81\x85\x37\xfa");
  EXPECT_TRUE(is_upgrade(p.head));
  EXPECT_EQ(request_framing(p.head).kind, BodyFraming::Kind::none);
  EXPECT_EQ(p.rest, "\x81\x85\x37\xfa");
}

TEST(Upgrade, UpgradeWithABodySwitchesAfterTheBody) {
  const Parsed p = request(
      "POST /x HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: h2c\r\n"
      "Content-Length: 4\r\n\r\nbodynew-protocol");
  EXPECT_TRUE(is_upgrade(p.head));
  const BodyFraming f = request_framing(p.head);
  ASSERT_EQ(f.kind, BodyFraming::Kind::length);
  BodyDecoder body(f);
  std::string out;
  EXPECT_EQ(body.decode(p.rest, out), 4u);
  EXPECT_EQ(out, "body");
  EXPECT_TRUE(body.done());
}

TEST(Upgrade, AnUpgradeFieldWithoutConnectionUpgradeIsNotOne) {
  EXPECT_FALSE(is_upgrade(request("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n").head));
  EXPECT_FALSE(is_upgrade(request("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n").head));
}

TEST(Upgrade, ConnectIsATunnelAtOnceWhateverItsFields) {
  const Parsed p = request(
      "CONNECT home.netscape.com:443 HTTP/1.0\r\nUser-agent: Mozilla/1.1N\r\n"
      "Proxy-authorization: basic aGVsbG86d29ybGQ=\r\nContent-Length: 10\r\n\r\nsome data\r\nand yet even more data");
  EXPECT_TRUE(is_upgrade(p.head));
  EXPECT_EQ(p.head.target, "home.netscape.com:443");
  EXPECT_EQ(request_framing(p.head).kind, BodyFraming::Kind::none) << "the bytes are the tunnel's";
  EXPECT_EQ(p.rest, "some data\r\nand yet even more data");
}

TEST(Upgrade, Responses101And2xxToConnectEndTheHttpPart) {
  ResponseParser p;
  ResponseHead head;
  const std::string_view bytes =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi";
  const std::size_t n = p.parse(bytes, head);
  ASSERT_GT(n, 0u);
  EXPECT_TRUE(is_upgrade(head, "GET"));
  EXPECT_EQ(response_framing(head, "GET").kind, BodyFraming::Kind::none);
  EXPECT_EQ(bytes.substr(n), "\x81\x02hi");

  p.reset();
  ResponseHead ok;
  ASSERT_GT(p.parse("HTTP/1.1 200 Connection established\r\n\r\n", ok), 0u);
  EXPECT_TRUE(is_upgrade(ok, "CONNECT"));
  EXPECT_FALSE(is_upgrade(ok, "GET"));
  EXPECT_EQ(response_framing(ok, "CONNECT").kind, BodyFraming::Kind::none);
  p.reset();
  ResponseHead refused;
  ASSERT_GT(p.parse("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n", refused), 0u);
  EXPECT_FALSE(is_upgrade(refused, "CONNECT"));
}

}  // namespace
