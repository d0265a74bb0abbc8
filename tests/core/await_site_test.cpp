// AwaitSite: the one-pointer await site that code built by g++ and by clang 14
// share (detail/await_site.hpp). Under g++ it points at the builtin's record,
// whose layout it assumes; under clang 14 at an interned record.
#include <bit>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include <corio/detail/await_site.hpp>

namespace corio_test {
namespace {

using corio::SourceLocation;
using corio::detail::AwaitSite;
using corio::detail::intern_await_site;

TEST(AwaitSite, AnEmptySiteNamesNothing) {
  const AwaitSite none;
  EXPECT_STREQ(none.file_name(), "");
  EXPECT_STREQ(none.function_name(), "");
  EXPECT_EQ(none.line(), 0u);
}

#if defined(__cpp_lib_source_location)
// The record __builtin_source_location() makes is libstdc++'s private
// std::source_location::__impl: AwaitSite must read it as std::source_location does.
TEST(AwaitSite, ReadsTheBuiltinsRecordAsStdSourceLocation) {
  const std::source_location here = std::source_location::current();
  const AwaitSite site(std::bit_cast<const void*>(here));
  EXPECT_STREQ(site.file_name(), here.file_name());
  EXPECT_STREQ(site.function_name(), here.function_name());
  EXPECT_EQ(site.line(), here.line());
  EXPECT_EQ(site.column(), here.column());
}
#endif

SourceLocation location_at(unsigned line) {
  return SourceLocation::current(__FILE__, line, "corio_test::f()");
}

TEST(AwaitSite, AnInternedSiteKeepsTheLocation) {
  const SourceLocation where = SourceLocation::current();
  const AwaitSite site = intern_await_site(where);
  EXPECT_EQ(site.file_name(), where.file_name());
  EXPECT_EQ(site.function_name(), where.function_name());
  EXPECT_EQ(site.line(), where.line());
}

TEST(AwaitSite, OneRecordPerSiteOnEveryThread) {
  const SourceLocation a = location_at(10), b = location_at(11);
  const AwaitSite a1 = intern_await_site(a), a2 = intern_await_site(a);
  const AwaitSite b1 = intern_await_site(b);
  EXPECT_EQ(std::bit_cast<const void*>(a1), std::bit_cast<const void*>(a2));
  EXPECT_NE(std::bit_cast<const void*>(a1), std::bit_cast<const void*>(b1));
  EXPECT_EQ(b1.line(), 11u);
  AwaitSite elsewhere;
  std::thread([&] { elsewhere = intern_await_site(a); }).join();
  EXPECT_EQ(std::bit_cast<const void*>(elsewhere), std::bit_cast<const void*>(a1))
      << "another thread's cache finds the same record";
}

}  // namespace
}  // namespace corio_test
