// ClientResponse::text() and its charset: the Content-Type parameter's
// parsing, the conversion to UTF-8 (iconv), and both through a real server.
#include "http/wire/charset.hpp"

#include <nlohmann/json.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientPayloadError;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::UnicodeDecodeError;
using corio::http::detail::content_type_charset;
using corio::http::detail::to_utf8;
using namespace std::string_literals;

const std::string kCafeUtf8 = "caf\xc3\xa9";

TEST(Charset, ParameterIsFoundCaseInsensitivelyAmongOthers) {
  EXPECT_EQ(content_type_charset("text/plain; charset=iso-8859-1"), "iso-8859-1");
  EXPECT_EQ(content_type_charset("text/plain;charset=UTF-8"), "UTF-8");
  EXPECT_EQ(content_type_charset("text/html; CharSet=latin1"), "latin1");
  EXPECT_EQ(content_type_charset("text/plain; format=flowed; charset=koi8-r"), "koi8-r");
  EXPECT_EQ(content_type_charset("text/plain; bogus; charset=utf-8"), "utf-8");
}

TEST(Charset, WhitespaceAndQuotesAreRemoved) {
  EXPECT_EQ(content_type_charset("text/plain ;\tcharset = windows-1252 "), "windows-1252");
  EXPECT_EQ(content_type_charset("text/plain; charset=\"windows-1252\""), "windows-1252");
  EXPECT_EQ(content_type_charset("text/plain; charset=\"a\\\"b\" ; x=y"), "a\"b");
  // A ";" inside a quoted value ends nothing.
  EXPECT_EQ(content_type_charset("text/plain; title=\"x;charset=bad\"; charset=latin1"), "latin1");
}

TEST(Charset, AbsentOrEmptyIsNone) {
  EXPECT_EQ(content_type_charset(""), std::nullopt);
  EXPECT_EQ(content_type_charset("text/plain"), std::nullopt);
  EXPECT_EQ(content_type_charset("text/plain; charset"), std::nullopt);
  EXPECT_EQ(content_type_charset("text/plain; charset="), std::nullopt);
  EXPECT_EQ(content_type_charset("text/plain; charset=\"\""), std::nullopt);
  EXPECT_EQ(content_type_charset("text/plain; xcharset=latin1"), std::nullopt);
}

TEST(Charset, Utf8AndAsciiPassThroughUnchanged) {
  const std::string odd = "caf\xe9 \xff";  // not UTF-8, and not checked
  for (const char* cs : {"utf-8", "UTF8", "us-ascii", "ASCII"})
    EXPECT_EQ(to_utf8(odd, cs), odd) << cs;
}

TEST(Charset, SingleByteCharsetsBecomeUtf8) {
  EXPECT_EQ(to_utf8("caf\xe9", "ISO-8859-1"), kCafeUtf8);
  EXPECT_EQ(to_utf8("caf\xe9", "latin1"), kCafeUtf8);
  EXPECT_EQ(to_utf8("", "latin1"), "");
  std::string high;
  for (int c = 0x80; c <= 0xff; ++c) high += static_cast<char>(c);
  const std::string converted = to_utf8(high, "iso-8859-1");
  EXPECT_EQ(converted.size(), 256u);  // two bytes each
  EXPECT_EQ(converted.substr(converted.size() - 2), "\xc3\xbf");
}

TEST(Charset, OutputThreeTimesTheInputGrowsTheBuffer) {
  // windows-1252's 0x80 is the euro sign, three bytes in UTF-8.
  std::string euros;
  for (int i = 0; i < 10'000; ++i) euros += "\xe2\x82\xac";
  EXPECT_EQ(to_utf8(std::string(10'000, '\x80'), "windows-1252"), euros);
}

TEST(Charset, Utf16WithBomBecomesUtf8) {
  EXPECT_EQ(to_utf8("\xff\xfe\x63\0a\0f\0\xe9\0"s, "UTF-16"), kCafeUtf8);
  EXPECT_EQ(to_utf8("\xfe\xff\0c\0a\0f\0\xe9"s, "utf-16"), kCafeUtf8);
}

TEST(Charset, UnknownCharsetIsAnError) {
  for (const char* cs : {"x-no-such-charset", "utf-8//IGNORE", "latin1 junk"}) {
    try {
      to_utf8("abc", cs);
      ADD_FAILURE() << cs << " was accepted";
    } catch (const UnicodeDecodeError& e) {
      EXPECT_EQ(e.encoding(), cs);
      EXPECT_EQ(e.offset(), std::nullopt);
      EXPECT_NE(std::string(e.what()).find("unknown charset"), std::string::npos) << e.what();
    }
  }
}

TEST(Charset, InvalidBytesAreAnErrorWithTheirOffset) {
  try {
    to_utf8("ab\x81", "windows-1252");  // 0x81 is unassigned there
    ADD_FAILURE() << "0x81 was accepted";
  } catch (const UnicodeDecodeError& e) {
    EXPECT_EQ(e.offset(), 2u);
    EXPECT_NE(std::string(e.what()).find("windows-1252"), std::string::npos) << e.what();
  }
  try {
    to_utf8("\xff\xfe\x63\0a"s, "UTF-16");  // the last unit cut short
    ADD_FAILURE() << "a truncated UTF-16 body was accepted";
  } catch (const UnicodeDecodeError& e) {
    EXPECT_EQ(e.offset(), 4u);
  }
  // One family with the client's other payload errors.
  EXPECT_THROW(to_utf8("\x81", "windows-1252"), ClientPayloadError);
}

std::string reply(const std::string& content_type, const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

Coro<void> latin1_from_server() {
  CannedPeer peer = co_await start_canned_peer(reply("text/plain; charset=iso-8859-1", "caf\xe9"));
  ClientSession s;
  ClientResponse r = co_await s.get(peer.url());
  EXPECT_EQ(r.charset(), "iso-8859-1");
  EXPECT_EQ(co_await r.text(), kCafeUtf8);
  ClientResponse forced = co_await s.get(peer.url());
  EXPECT_EQ(co_await forced.text("utf-8"), "caf\xe9");  // the argument wins over the header
  EXPECT_EQ(s.idle_connections(), 1u);
}

TEST(Charset, TextDecodesTheServersCharset) { run_bounded(latin1_from_server(), 20s); }

Coro<void> json_and_unknown_from_server() {
  CannedPeer json_peer = co_await start_canned_peer(
      reply("application/json; charset=ISO-8859-1", "{\"word\": \"caf\xe9\"}"));
  CannedPeer odd_peer = co_await start_canned_peer(reply("text/plain; charset=x-klingon", "abc"));
  ClientSession s;
  ClientResponse j = co_await s.get(json_peer.url());
  EXPECT_EQ((co_await j.json())["word"], kCafeUtf8);
  ClientResponse odd = co_await s.get(odd_peer.url());
  bool refused = false;
  try {
    co_await odd.text();
  } catch (const UnicodeDecodeError& e) {
    refused = e.encoding() == "x-klingon";
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(s.idle_connections(), 2u);  // each body was read whole: both pooled
}

TEST(Charset, JsonIsDecodedAndAnUnknownCharsetRefused) {
  run_bounded(json_and_unknown_from_server(), 20s);
}

}  // namespace
}  // namespace corio_http_test
