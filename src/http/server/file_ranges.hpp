// What a request for a file gets, from its conditional fields (RFC 9110
// section 13) and its Range (section 14): a 200, a 304 or 412, a 206 with
// one range or several, or a 416. Kept apart from the code that sends the
// answer, so that the decisions, which are all about header syntax and
// RFC precedence, read in one place, and the sender stays about bytes.
//
// The validators are nginx's: a strong ETag "<mtime hex>-<size hex>" and
// Last-Modified from the mtime. The Range header is bounded against the
// CVE-2011-3192 class ("Apache Killer": many overlapping ranges, each a
// copy of the file): at most kMaxRanges range-specs in kMaxRangeHeader
// bytes, else the header is ignored (200, the file once, as nginx answers
// past max_ranges); overlapping or touching ranges are coalesced, so the
// parts of a 206 never add up to more than the file.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include <corio/http/parser.hpp>

namespace corio::http::detail {

inline constexpr std::size_t kMaxRanges = 16;
inline constexpr std::size_t kMaxRangeHeader = 1024;  // 16 specs of two 20-digit numbers fit

struct FileValidators {
  std::uint64_t size = 0;
  std::time_t mtime = 0;
  std::string etag;           // "\"<mtime hex>-<size hex>\"", or the handler's own
  std::string last_modified;  // IMF-fixdate
};

FileValidators validators_for(std::uint64_t size, std::time_t mtime);

struct ByteRange {
  std::uint64_t first = 0, last = 0;  // inclusive, both within the file
  std::uint64_t length() const noexcept { return last - first + 1; }
};

// "bytes a-b/size"
std::string content_range(ByteRange r, std::uint64_t size);

// A Range header read against a file of `size` bytes.
struct RangeSet {
  enum class Kind { ignore, ranges, unsatisfiable };
  Kind kind = Kind::ignore;       // ignore: malformed, over the limits, or an empty file
  std::vector<ByteRange> ranges;  // for ranges: the request's order unless some overlapped
};

RangeSet parse_range(std::string_view value, std::uint64_t size);

struct FileAnswer {
  int status = 200;               // 200, 206, 304, 412 or 416
  std::vector<ByteRange> ranges;  // 206: one, or several for multipart/byteranges
};

FileAnswer answer_for(const RequestHead& request, const FileValidators& file);

// A multipart/byteranges body around the ranges' bytes: heads[i] goes
// before range i, tail after the last; length counts the whole body.
struct ByterangesBody {
  std::string boundary;
  std::vector<std::string> heads;
  std::string tail;
  std::uint64_t length = 0;
};

ByterangesBody byteranges_body(const std::vector<ByteRange>& ranges, std::string_view type,
                               std::uint64_t size);

}  // namespace corio::http::detail
