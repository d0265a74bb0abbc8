// Url::parse and its refusals, the derived strings (target, host header,
// origin), resolve() against RFC 3986 section 5.4's examples, and the
// percent-encoding and query-string helpers.
#include <gtest/gtest.h>

#include <corio/errors.hpp>
#include <corio/http/url.hpp>

namespace corio_http_test {
namespace {

using corio::ValueError;
using namespace corio::http;

TEST(Url, ParsesTheParts) {
  Url u = Url::parse("HTTPS://Example.ORG:8443/news/a%20b?day=today&x#frag");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "example.org");
  EXPECT_EQ(u.port, 8443);
  EXPECT_EQ(u.path, "/news/a%20b");
  EXPECT_EQ(u.query, "day=today&x");
  EXPECT_TRUE(u.is_https());
  EXPECT_FALSE(u.default_port());
  EXPECT_EQ(u.target(), "/news/a%20b?day=today&x");
  EXPECT_EQ(u.host_header(), "example.org:8443");
  EXPECT_EQ(u.origin(), "https://example.org:8443");
  EXPECT_EQ(u.to_string(), "https://example.org:8443/news/a%20b?day=today&x");
}

TEST(Url, DefaultsAndEmptyParts) {
  Url u = Url::parse("http://h");
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.path, "/");
  EXPECT_EQ(u.target(), "/");
  EXPECT_EQ(u.host_header(), "h");
  EXPECT_EQ(Url::parse("https://h?q=1").target(), "/?q=1");
  EXPECT_EQ(Url::parse("https://h:443/").to_string(), "https://h/");
  EXPECT_EQ(Url::parse("http://h:/x").port, 80) << "an empty port is the default (RFC 3986)";
  EXPECT_EQ(Url::parse("http://127.0.0.1:8080/").host_header(), "127.0.0.1:8080");
}

TEST(Url, Ipv6LiteralsInBrackets) {
  Url u = Url::parse("http://[::1]:8080/p");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.host_header(), "[::1]:8080");
  EXPECT_EQ(Url::parse("https://[FE80::1]/").to_string(), "https://[fe80::1]/");
}

TEST(Url, EncodesNonAsciiInPathAndQuery) {
  Url u = Url::parse("http://h/caf\xc3\xa9?q=\xe2\x82\xac");
  EXPECT_EQ(u.path, "/caf%C3%A9");
  EXPECT_EQ(u.query, "q=%E2%82%AC");
}

TEST(Url, RefusesWhatItCannotUse) {
  const char* bad[] = {
      "example.org/x",   "/relative",         "ftp://h/",        "http:/h",
      "http:h",          "http://",           "http:///p",       "http://user@h/",
      "http://u:p@h/",   "http://h:0/",       "http://h:65536/", "http://h:8x/",
      "http://h:-1/",    "http://h /",        "http://h/a b",    "http://h/\x01",
      "http://h/\t",     "http://[::1/",      "http://[zz]/",    "http://[::1]x/",
      "http://h_%41/",   "http://h\xc3\xa9/", "http://h!/",      "",
  };
  for (const char* text : bad) EXPECT_THROW(Url::parse(text), ValueError) << text;
  EXPECT_THROW(Url::parse("http://h/" + std::string(kMaxUrlLength, 'a')), ValueError);
  EXPECT_NO_THROW(Url::parse("http://h/" + std::string(kMaxUrlLength - 9, 'a')));
}

TEST(Url, ErrorsSayWhatIsWrong) {
  try {
    Url::parse("http://user:secret@h/");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("credentials"), std::string::npos) << e.what();
  }
}

// RFC 3986 section 5.4.1, "normal examples", fragments dropped as Url
// does; "g:h" (another scheme) is a ValueError for an http Url.
TEST(Url, ResolvesTheRfcNormalExamples) {
  Url base = Url::parse("http://a/b/c/d;p?q");
  const std::pair<const char*, const char*> cases[] = {
      {"g", "http://a/b/c/g"},          {"./g", "http://a/b/c/g"},
      {"g/", "http://a/b/c/g/"},        {"/g", "http://a/g"},
      {"//g", "http://g/"},             {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"},      {"#s", "http://a/b/c/d;p?q"},
      {"g#s", "http://a/b/c/g"},        {"g?y#s", "http://a/b/c/g?y"},
      {";x", "http://a/b/c/;x"},        {"g;x", "http://a/b/c/g;x"},
      {"g;x?y#s", "http://a/b/c/g;x?y"}, {"", "http://a/b/c/d;p?q"},
      {".", "http://a/b/c/"},           {"./", "http://a/b/c/"},
      {"..", "http://a/b/"},            {"../", "http://a/b/"},
      {"../g", "http://a/b/g"},         {"../..", "http://a/"},
      {"../../", "http://a/"},          {"../../g", "http://a/g"},
  };
  for (const auto& [ref, want] : cases) EXPECT_EQ(base.resolve(ref).to_string(), want) << ref;
  EXPECT_THROW(base.resolve("g:h"), ValueError);
}

// Section 5.4.2, "abnormal examples" (the strict parser's answers).
TEST(Url, ResolvesTheRfcAbnormalExamples) {
  Url base = Url::parse("http://a/b/c/d;p?q");
  const std::pair<const char*, const char*> cases[] = {
      {"../../../g", "http://a/g"},      {"../../../../g", "http://a/g"},
      {"/./g", "http://a/g"},            {"/../g", "http://a/g"},
      {"g.", "http://a/b/c/g."},         {".g", "http://a/b/c/.g"},
      {"g..", "http://a/b/c/g.."},       {"..g", "http://a/b/c/..g"},
      {"./../g", "http://a/b/g"},        {"./g/.", "http://a/b/c/g/"},
      {"g/./h", "http://a/b/c/g/h"},     {"g/../h", "http://a/b/c/h"},
      {"g;x=1/./y", "http://a/b/c/g;x=1/y"}, {"g;x=1/../y", "http://a/b/c/y"},
      {"g?y/./x", "http://a/b/c/g?y/./x"}, {"g?y/../x", "http://a/b/c/g?y/../x"},
      {"g#s/./x", "http://a/b/c/g"},     {"g#s/../x", "http://a/b/c/g"},
  };
  for (const auto& [ref, want] : cases) EXPECT_EQ(base.resolve(ref).to_string(), want) << ref;
  EXPECT_THROW(base.resolve("http:g"), ValueError) << "strict: a scheme means an absolute URL";
}

TEST(Url, ResolvesRedirectLocations) {
  Url base = Url::parse("https://example.org:8443/a/b?x=1");
  EXPECT_EQ(base.resolve("http://other.org/z").to_string(), "http://other.org/z");
  EXPECT_EQ(base.resolve("//cdn.example.org/lib.js").to_string(), "https://cdn.example.org/lib.js");
  EXPECT_EQ(base.resolve("//cdn.example.org:9000").to_string(), "https://cdn.example.org:9000/");
  EXPECT_EQ(base.resolve("/login?next=%2Fa").to_string(), "https://example.org:8443/login?next=%2Fa");
  EXPECT_EQ(base.resolve("http://h/a/../b").path, "/b");
  EXPECT_THROW(base.resolve("//user@h/"), ValueError);
  EXPECT_THROW(base.resolve("/a b"), ValueError);
}

TEST(PercentEncoding, EncodesAllButUnreserved) {
  EXPECT_EQ(percent_encode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(percent_encode("a b&c=d/e?"), "a+b%26c%3Dd%2Fe%3F");
  EXPECT_EQ(percent_encode("a b", false), "a%20b");
  EXPECT_EQ(percent_encode("+"), "%2B");
  EXPECT_EQ(percent_encode("\xc3\xa9\x00"), "%C3%A9");
  EXPECT_EQ(percent_encode(std::string_view("\0", 1)), "%00");
}

TEST(PercentEncoding, DecodesAndRefusesBadEscapes) {
  EXPECT_EQ(percent_decode("a+b%26c%3d"), "a b&c=");
  EXPECT_EQ(percent_decode("a+b", false), "a+b");
  EXPECT_EQ(percent_decode("%C3%a9"), "\xc3\xa9");
  EXPECT_EQ(percent_decode("%00"), std::string_view("\0", 1));
  for (const char* bad : {"%", "%4", "%zz", "%g0", "a%2", "%%41"}) {
    EXPECT_THROW(percent_decode(bad), ValueError) << bad;
  }
}

TEST(Query, ParsesInOrderWithRepeats) {
  QueryParams p = parse_query("a=1&b=x%20y&a=2&flag&=v&c=&&d=e=f");
  QueryParams want = {{"a", "1"}, {"b", "x y"}, {"a", "2"}, {"flag", ""},
                      {"", "v"},  {"c", ""},    {"d", "e=f"}};
  EXPECT_EQ(p, want);
  EXPECT_TRUE(parse_query("").empty());
  EXPECT_THROW(parse_query("a=%zz"), ValueError);
}

TEST(Query, EncodesAndRoundTrips) {
  QueryParams p = {{"q", "caf\xc3\xa9 au lait"}, {"a&b", "c=d"}, {"empty", ""}};
  std::string text = encode_query(p);
  EXPECT_EQ(text, "q=caf%C3%A9+au+lait&a%26b=c%3Dd&empty=");
  EXPECT_EQ(parse_query(text), p);
  EXPECT_EQ(encode_query({}), "");
}

}  // namespace
}  // namespace corio_http_test
