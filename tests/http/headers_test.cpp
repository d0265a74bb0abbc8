// Headers: case-insensitive lookup, order and repeats kept, set/remove,
// and the comma-separated list helpers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <corio/http/headers.hpp>

namespace corio_http_test {
namespace {

using namespace corio::http;

TEST(Headers, LooksUpWithoutRegardToCase) {
  Headers h{{"Content-Type", "text/plain"}, {"X-Num", "1"}};
  EXPECT_EQ(h.get("content-type"), "text/plain");
  EXPECT_EQ(h.get("CONTENT-TYPE"), "text/plain");
  EXPECT_EQ(h.get("content-length"), std::nullopt);
  EXPECT_EQ(h.get_or("content-length", "none"), "none");
  EXPECT_TRUE(h.contains("x-num"));
  EXPECT_FALSE(h.contains("x-nu"));
  EXPECT_EQ(h.size(), 2u);
}

TEST(Headers, KeepsOrderAndRepeats) {
  Headers h;
  h.add("Set-Cookie", "a=1");
  h.add("Date", "today");
  h.add("set-cookie", "b=2");
  EXPECT_EQ(h.get("set-cookie"), "a=1") << "the first";
  EXPECT_EQ(h.get_all("Set-Cookie"), (std::vector<std::string_view>{"a=1", "b=2"}));
  EXPECT_EQ(h.count("SET-COOKIE"), 2u);
  std::vector<std::string> names;
  for (const Header& f : h) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Set-Cookie", "Date", "set-cookie"}));
  EXPECT_EQ(h[2].value, "b=2");
}

TEST(Headers, SetReplacesEveryFieldOfTheName) {
  Headers h{{"A", "1"}, {"b", "2"}, {"a", "3"}};
  h.set("a", "9");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].name, "a") << "in the first one's place, spelled as given";
  EXPECT_EQ(h[0].value, "9");
  EXPECT_EQ(h[1].name, "b");
  h.set("C", "new");
  EXPECT_EQ(h[2].name, "C");
  EXPECT_EQ(h.size(), 3u);
}

TEST(Headers, RemoveSaysHowMany) {
  Headers h{{"A", "1"}, {"b", "2"}, {"a", "3"}};
  EXPECT_EQ(h.remove("A"), 2u);
  EXPECT_EQ(h.remove("A"), 0u);
  EXPECT_EQ(h.size(), 1u);
  h.clear();
  EXPECT_TRUE(h.empty());
}

TEST(Headers, IEquals) {
  EXPECT_TRUE(iequals("Keep-Alive", "keep-ALIVE"));
  EXPECT_FALSE(iequals("keep-alive", "keep-aliv"));
  EXPECT_FALSE(iequals("a", "b"));
  EXPECT_TRUE(iequals("", ""));
  EXPECT_FALSE(iequals("\xc3\xa9", "\xc3\x89")) << "ASCII only";
  EXPECT_FALSE(iequals("@", "`")) << "not a blind bit flip";
}

TEST(Headers, ListTokens) {
  EXPECT_TRUE(list_contains("keep-alive, Upgrade", "upgrade"));
  EXPECT_TRUE(list_contains(" close ", "close"));
  EXPECT_TRUE(list_contains(",,close,", "close"));
  EXPECT_FALSE(list_contains("closed", "close"));
  EXPECT_FALSE(list_contains("", "close"));
  Headers h{{"Connection", "Upgrade"}, {"connection", "Close"}, {"Expect", "100-continue"}};
  EXPECT_TRUE(h.has_token("connection", "close"));
  EXPECT_TRUE(h.has_token("Expect", "100-Continue"));
  EXPECT_FALSE(h.has_token("connection", "keep-alive"));
  EXPECT_FALSE(h.has_token("upgrade", "close"));
}

namespace spares {

std::uintptr_t address_of(const std::string& s) { return reinterpret_cast<std::uintptr_t>(s.data()); }

TEST(HeadersSpares, AddCopyCarriesTheFieldsAsAddDoes) {
  Headers h;
  h.add_copy("Content-Type", "text/plain; charset=utf-8");
  h.add_copy("X-Short", "1");
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].name, "Content-Type");
  EXPECT_EQ(h.get("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(h.get("x-short"), "1");
}

// A dropped block's storage goes to the next block of the thread: the same
// vector and the same value buffer, and none of the dropped fields.
TEST(HeadersSpares, ADroppedBlocksStorageIsReusedWithoutItsFields) {
  // Earlier tests on this thread may have filled its spares (16 vectors and
  // 32 strings), and a full store keeps nothing: all taken out first (a
  // value of 16 bytes, just past std::string's inline room, fits any spare
  // string), held until the end.
  std::vector<Headers> held(40);
  for (Headers& h : held) h.add_copy("X-Held", "sixteen bytes!!!");
  std::uintptr_t fields = 0;
  std::uintptr_t value = 0;
  {
    Headers first;
    first.add_copy("Content-Type", "text/plain; charset=utf-8");
    first.add("X-Old", "a value that is long enough to be on the heap");
    fields = reinterpret_cast<std::uintptr_t>(&first[0]);
    value = address_of(first[1].value);
  }
  Headers next;
  next.add_copy("Content-Type", "application/problem+json");
  ASSERT_EQ(next.size(), 1u) << "no field of the dropped block";
  EXPECT_EQ(next.get("Content-Type"), "application/problem+json");
  EXPECT_FALSE(next.contains("X-Old"));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&next[0]), fields) << "the spare vector";
  EXPECT_EQ(address_of(next[0].value), value) << "the latest spare string";
}

// Moved-from, copied and cleared blocks keep their meaning.
TEST(HeadersSpares, CopiesAndMovesAreUnchanged) {
  Headers a;
  a.add_copy("Content-Type", "text/plain; charset=utf-8");
  Headers b = a;
  Headers c = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from block is empty
  EXPECT_EQ(b.get("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(c.get("content-type"), "text/plain; charset=utf-8");
  c.clear();
  c.add("A", "1");
  EXPECT_EQ(c.size(), 1u);
}

}  // namespace spares

}  // namespace
}  // namespace corio_http_test
