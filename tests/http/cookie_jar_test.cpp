// CookieJar: RFC 6265's storage and matching rules, on strings.
#include <gtest/gtest.h>

#include <corio/http/cookie_jar.hpp>

namespace {

using corio::http::CookieJar;
using corio::http::Url;
using Clock = std::chrono::system_clock;
using namespace std::chrono_literals;

const Clock::time_point kNow = Clock::time_point(std::chrono::sys_days(std::chrono::year(2024) / 5 / 1));

TEST(CookieJar, DatesInTheFormsServersSend) {
  auto d = corio::http::parse_cookie_date("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_TRUE(d);
  EXPECT_EQ(Clock::to_time_t(*d), 784111777);
  EXPECT_EQ(corio::http::parse_cookie_date("Sunday, 06-Nov-94 08:49:37 GMT"), d);
  EXPECT_EQ(corio::http::parse_cookie_date("Sun Nov  6 08:49:37 1994"), d);
  EXPECT_FALSE(corio::http::parse_cookie_date("Sun, 31 Feb 1994 08:49:37 GMT"));
  EXPECT_FALSE(corio::http::parse_cookie_date("yesterday"));
  EXPECT_FALSE(corio::http::parse_cookie_date("06 Nov 1994 25:00:00"));
}

TEST(CookieJar, HostOnlyAndDomainCookies) {
  CookieJar jar;
  const Url url = Url::parse("http://www.example.org/a/b");
  jar.update_cookies({"host=1", "dom=2; Domain=.example.org", "other=3; Domain=example.com",
                      "tld=4; Domain=org"},
                     url, kNow);
  EXPECT_EQ(jar.size(), 2u);
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://www.example.org/a/x"), kNow), "host=1; dom=2");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://api.example.org/a/"), kNow), "dom=2");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://example.net/a/"), kNow), "");
}

TEST(CookieJar, PathsMatchOnSegmentsLongestFirst) {
  CookieJar jar;
  jar.update_cookies({"root=1; Path=/", "docs=2; Path=/docs", "dflt=3"},
                     Url::parse("http://h.test/docs/page"), kNow);
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://h.test/docs/x"), kNow), "docs=2; dflt=3; root=1");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://h.test/docsx"), kNow), "root=1");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://h.test/"), kNow), "root=1");
}

TEST(CookieJar, ExpiryMaxAgeAndDeletion) {
  CookieJar jar;
  const Url url = Url::parse("http://h.test/");
  jar.update_cookies({"a=1; Max-Age=60", "b=2; Expires=Wed, 01 May 2024 00:10:00 GMT",
                      "c=3; Max-Age=60; Expires=Thu, 01 Jan 1970 00:00:00 GMT"},
                     url, kNow);
  EXPECT_EQ(jar.filter_cookies(url, kNow), "a=1; b=2; c=3");
  EXPECT_EQ(jar.filter_cookies(url, kNow + 2min), "b=2");
  EXPECT_EQ(jar.filter_cookies(url, kNow + 20min), "");
  jar.update_cookies({"b=gone; Max-Age=0"}, url, kNow);
  EXPECT_EQ(jar.filter_cookies(url, kNow), "a=1; c=3");
  jar.update_cookies({"a=new"}, url, kNow);  // replaces, as a session cookie
  EXPECT_EQ(jar.filter_cookies(url, kNow + 1h), "a=new");
}

TEST(CookieJar, SecureCookiesOnlyOverHttps) {
  CookieJar jar;
  jar.update_cookies({"s=1; Secure; HttpOnly", "p=2"}, Url::parse("https://h.test/"), kNow);
  EXPECT_EQ(jar.filter_cookies(Url::parse("https://h.test/"), kNow), "s=1; p=2");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://h.test/"), kNow), "p=2");
}

TEST(CookieJar, IpHostsAndGarbage) {
  CookieJar jar;
  const Url ip = Url::parse("http://127.0.0.1:8080/");
  jar.update_cookies({"a=1", "b=2; Domain=0.0.1", "no-equals-sign", "=novalue", ""}, ip, kNow);
  EXPECT_EQ(jar.size(), 1u);
  EXPECT_EQ(jar.filter_cookies(ip, kNow), "a=1");
  EXPECT_EQ(jar.filter_cookies(Url::parse("http://10.127.0.0.1/"), kNow), "");
}

}  // namespace
