// BodyDecoder: Content-Length, chunked (extensions skipped, trailers
// kept), until-close and none; invalid chunk sizes, the body and line
// limits, truncation at EOF, and the rest of the buffer left for the next
// message. Byte-at-a-time decoding gives what whole decoding gives.
#include <vector>

#include "http/http_parse_support.hpp"

namespace corio_http_test {
namespace {

using Kind = BodyFraming::Kind;

struct Decoded {
  std::string body;
  std::size_t used = 0;
  bool done = false;
  int error = 0;
  Headers trailers;
};

Decoded decode_whole(BodyFraming framing, std::string_view in, const Limits& limits = {}) {
  Decoded d;
  try {
    BodyDecoder dec(framing, limits);
    d.used = dec.decode(in, d.body);
    d.done = dec.done();
    d.trailers = dec.trailers();
  } catch (const ParseError& e) {
    d.error = e.status();
  }
  return d;
}

// The input arrives a byte at a time; what is not used stays buffered.
Decoded decode_bytewise(BodyFraming framing, std::string_view in, const Limits& limits = {}) {
  Decoded d;
  try {
    BodyDecoder dec(framing, limits);
    std::size_t start = 0;
    for (std::size_t end = 1; end <= in.size() && !dec.done(); ++end) {
      start += dec.decode(in.substr(start, end - start), d.body);
    }
    d.used = start;
    d.done = dec.done();
    d.trailers = dec.trailers();
  } catch (const ParseError& e) {
    d.error = e.status();
  }
  return d;
}

const BodyFraming kChunked{Kind::chunked, 0};

int chunked_error(std::string_view in, const Limits& limits = {}) {
  return decode_whole(kChunked, in, limits).error;
}

TEST(BodyDecoder, ContentLengthStopsAtItsEnd) {
  Decoded d = decode_whole({Kind::length, 5}, "helloGET / HTTP/1.1");
  EXPECT_EQ(d.body, "hello");
  EXPECT_EQ(d.used, 5u);
  EXPECT_TRUE(d.done);
  d = decode_whole({Kind::length, 10}, "hello");
  EXPECT_EQ(d.used, 5u);
  EXPECT_FALSE(d.done);
}

TEST(BodyDecoder, NoneAndZeroLengthAreDoneAtOnce) {
  EXPECT_TRUE(decode_whole({Kind::none, 0}, "GET").done);
  EXPECT_EQ(decode_whole({Kind::none, 0}, "GET").used, 0u);
  EXPECT_TRUE(decode_whole({Kind::length, 0}, "").done);
}

TEST(BodyDecoder, ChunkedWithExtensionsAndTrailers) {
  std::string_view in =
      "5;name=value;flag\r\nhello\r\n"
      "6 ; q=\"x y\"\r\n world\r\n"
      "0\r\nExpires: never\r\nX-Sum:  abc \r\n\r\n"
      "NEXT";
  Decoded d = decode_whole(kChunked, in);
  ASSERT_EQ(d.error, 0);
  EXPECT_TRUE(d.done);
  EXPECT_EQ(d.body, "hello world");
  EXPECT_EQ(in.substr(d.used), "NEXT");
  ASSERT_EQ(d.trailers.size(), 2u);
  EXPECT_EQ(d.trailers.get("expires"), "never");
  EXPECT_EQ(d.trailers.get("x-sum"), "abc");
}

TEST(BodyDecoder, ChunkSizesInHexDigitsOnly) {
  EXPECT_EQ(decode_whole(kChunked, "A\r\n0123456789\r\n0\r\n\r\n").body, "0123456789");
  EXPECT_EQ(decode_whole(kChunked, "000000000000000000001\r\nx\r\n0\r\n\r\n").body, "x")
      << "leading zeros are digits, not overflow";
  for (const char* bad : {"-1\r\n", "+1\r\n", "0x10\r\n", "1 0\r\n", "\r\n", "g\r\n", " 1\r\n",
                          "1 \r\n", "1\t\r\n", "1;a\rb\r\n", "1\n", "1\r\r\n", "1;\x01\r\n"}) {
    EXPECT_EQ(chunked_error(bad), 400) << bad;
  }
}

// RFC 9112 section 7.1.1: *( BWS ";" BWS name [ BWS "=" BWS value ] ),
// a name and a token value being tokens, a quoted value closed.
TEST(BodyDecoder, ChunkExtensionsFollowTheirGrammar) {
  for (const char* good : {"3;a\r\nabc\r\n0\r\n\r\n", "3 ; a = b ;c\r\nabc\r\n0\r\n\r\n",
                           "3;a=\"b;\\\"c\"\r\nabc\r\n0\r\n\r\n", "3;a=\"\"\r\nabc\r\n0\r\n\r\n"}) {
    EXPECT_EQ(decode_whole(kChunked, good).body, "abc") << good;
  }
  for (const char* bad : {"2;\r\n", "3;a=\"b\r\n", "3;f@o=1\r\n", "3;=1\r\n", "3;a=\r\n",
                          "3;a=b c\r\n", "3;a=\"b\\\r\n", "3;a;\r\n", "3;a=\"b\"c\r\n"}) {
    EXPECT_EQ(chunked_error(bad), 400) << bad;
  }
}

TEST(BodyDecoder, ChunkSizeOverflowIsRefused) {
  Limits unlimited;
  unlimited.max_body = UINT64_MAX;
  EXPECT_EQ(chunked_error("10000000000000000\r\n", unlimited), 400) << "2^64";
  EXPECT_EQ(chunked_error("fffffffffffffffff\r\n", unlimited), 400);
  Decoded d = decode_whole(kChunked, "ffffffffffffffff\r\nabc", unlimited);
  EXPECT_EQ(d.error, 0) << "2^64 - 1 is a size";
  EXPECT_EQ(d.body, "abc");
  EXPECT_EQ(chunked_error("ffffffffffffffff\r\n"), 413) << "over the default body limit";
}

TEST(BodyDecoder, ChunkDataMustEndWithCrlf) {
  EXPECT_EQ(chunked_error("3\r\nabcX\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(chunked_error("3\r\nabc\rX0\r\n\r\n"), 400);
  EXPECT_EQ(chunked_error("3\r\nabc\n0\r\n\r\n"), 400);
  Decoded d = decode_whole(kChunked, "3\r\nabc\r");
  EXPECT_EQ(d.error, 0) << "the LF may still come";
  EXPECT_EQ(d.used, 6u);
}

TEST(BodyDecoder, TrailersAreCheckedLikeHeaders) {
  EXPECT_EQ(chunked_error("0\r\nX : y\r\n\r\n"), 400);
  EXPECT_EQ(chunked_error("0\r\nX: y\r\n z\r\n\r\n"), 400);
  EXPECT_EQ(chunked_error("0\r\nX: a\rb\r\n\r\n"), 400);
  EXPECT_EQ(chunked_error("0\r\nX: y\n\r\n"), 400);
}

TEST(BodyDecoder, LimitsApply) {
  Limits l;
  l.max_body = 10;
  l.max_chunk_line = 8;
  l.max_head_bytes = 32;
  l.max_headers = 2;
  EXPECT_EQ(decode_whole({Kind::length, 11}, "", l).error, 413) << "refused before reading";
  EXPECT_EQ(decode_whole({Kind::length, 10}, "0123456789", l).body, "0123456789");
  EXPECT_EQ(chunked_error("6\r\nabcdef\r\n5\r\n", l), 413);
  EXPECT_EQ(decode_whole(kChunked, "5\r\nabcde\r\n5\r\nabcde\r\n0\r\n\r\n", l).body, "abcdeabcde");
  EXPECT_EQ(decode_whole({Kind::until_close, 0}, "0123456789", l).error, 0);
  EXPECT_EQ(decode_whole({Kind::until_close, 0}, "0123456789x", l).error, 413);
  EXPECT_EQ(chunked_error("1;abcdef\r\n", l), 0) << "8 bytes: at the chunk-line limit";
  EXPECT_EQ(chunked_error("1;abcdefg\r\n", l), 400);
  EXPECT_EQ(chunked_error("1;abcdefghi", l), 400) << "refused before its CRLF comes";
  EXPECT_EQ(chunked_error("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", l), 431) << "three trailers";
  EXPECT_EQ(chunked_error("0\r\nA: " + std::string(40, 'v'), l), 431) << "trailer bytes";
}

TEST(BodyDecoder, TruncatedBodyThrowsAtEof) {
  auto eof_error = [](BodyFraming framing, std::string_view in) {
    BodyDecoder dec(framing);
    std::string out;
    dec.decode(in, out);
    try {
      dec.finish_at_eof();
    } catch (const ParseError& e) {
      return e.status();
    }
    return dec.done() ? 0 : -1;
  };
  EXPECT_EQ(eof_error({Kind::length, 10}, "hello"), 400);
  EXPECT_EQ(eof_error({Kind::length, 5}, "hello"), 0);
  EXPECT_EQ(eof_error(kChunked, "5\r\nhello\r\n"), 400);
  EXPECT_EQ(eof_error(kChunked, "5\r\nhello\r\n0\r\n"), 400) << "the trailer section never ended";
  EXPECT_EQ(eof_error(kChunked, "0\r\n\r\n"), 0);
  EXPECT_EQ(eof_error({Kind::until_close, 0}, "anything"), 0);
  EXPECT_EQ(eof_error({Kind::none, 0}, ""), 0);
}

TEST(BodyDecoder, UntilCloseTakesEverything) {
  BodyDecoder dec({Kind::until_close, 0});
  std::string out;
  EXPECT_EQ(dec.decode("abc", out), 3u);
  EXPECT_EQ(dec.decode("def", out), 3u);
  EXPECT_FALSE(dec.done());
  dec.finish_at_eof();
  EXPECT_TRUE(dec.done());
  EXPECT_EQ(out, "abcdef");
  EXPECT_EQ(dec.body_bytes(), 6u);
}

TEST(BodyDecoder, ByteAtATimeGivesWhatTheWholeGives) {
  Limits l;
  l.max_body = 10;
  l.max_chunk_line = 8;
  std::vector<std::pair<BodyFraming, std::string>> cases = {
      {kChunked, "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\nNEXT"},
      {kChunked, "5\r\nhello\r\n6\r\n worldX"},
      {kChunked, "1;abcdefgh\r\nx\r\n0\r\n\r\n"},
      {kChunked, "b\r\n"},
      {kChunked, "1 0\r\n"},
      {{Kind::length, 5}, "helloNEXT"},
      {{Kind::until_close, 0}, "0123456789abc"},
  };
  for (const auto& [framing, in] : cases) {
    Decoded whole = decode_whole(framing, in, l);
    Decoded bytes = decode_bytewise(framing, in, l);
    EXPECT_EQ(whole.error, bytes.error) << in;
    if (whole.error != 0) continue;  // the bytes before the error were decoded, or not
    EXPECT_EQ(whole.body, bytes.body) << in;
    EXPECT_EQ(whole.used, bytes.used) << in;
    EXPECT_EQ(whole.done, bytes.done) << in;
    EXPECT_TRUE(same_fields(whole.trailers, bytes.trailers)) << in;
  }
}

}  // namespace
}  // namespace corio_http_test
