// libFuzzer target: what a static file's request headers are parsed with,
// the Range header (parse_range) and HTTP dates (parse_http_date). Input:
// two bytes of file size (0 to 65535, so short inputs reach both ends of
// a file), then the header value.
//
// Checks: every range lies in the file, first <= last; at most kMaxRanges
// of them; they never overlap, so a 206 carries at most the file (the
// CVE-2011-3192 bound); an empty file ignores Range; a parsed date prints
// back as IMF-fixdate that parses to the same time.
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "http/server/file_ranges.hpp"
#include "http/wire/http_date.hpp"

namespace {

using namespace corio::http::detail;

void check_ranges(std::string_view value, std::uint64_t size) {
  const RangeSet set = parse_range(value, size);
  FUZZ_CHECK(set.kind == RangeSet::Kind::ranges || set.ranges.empty());
  FUZZ_CHECK(size > 0 || set.kind == RangeSet::Kind::ignore);
  FUZZ_CHECK(set.ranges.size() <= kMaxRanges);
  std::uint64_t total = 0;
  for (const ByteRange& r : set.ranges) {
    FUZZ_CHECK(r.first <= r.last && r.last < size);
    total += r.length();
  }
  FUZZ_CHECK(total <= size);
}

void check_date(std::string_view value) {
  const std::optional<std::time_t> t = parse_http_date(value);
  if (!t) return;
  FUZZ_CHECK(parse_http_date(http_date(*t)) == t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint64_t file_size = data[0] | (static_cast<std::uint64_t>(data[1]) << 8);
  const std::string_view value(reinterpret_cast<const char*>(data) + 2, size - 2);
  check_ranges(value, file_size);
  check_date(value);
  return 0;
}
