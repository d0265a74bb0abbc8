// Conditional requests and byte ranges for files (see file_ranges.hpp).
#include "http/server/file_ranges.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/core.h>

#include "http/wire/http_date.hpp"
#include "http/wire/syntax.hpp"
#include <corio/detail/entropy.hpp>
#include <corio/http/headers.hpp>

namespace corio::http::detail {

namespace {

// Whether a field value ("*" or a list of entity-tags) matches etag.
// Scanned tag by tag, not split on commas: an opaque-tag may hold one.
// Strong comparison (If-Match, If-Range) refuses a weak tag; weak
// comparison (If-None-Match) ignores the W/.
bool etag_list_matches(std::string_view list, std::string_view etag, bool strong) noexcept {
  if (syntax::trim_ows(list) == "*") return true;
  for (;;) {
    while (!list.empty() && (list.front() == ',' || syntax::is_ows(list.front()))) {
      list.remove_prefix(1);
    }
    const bool weak = list.substr(0, 2) == "W/";
    if (weak) list.remove_prefix(2);
    const std::size_t close =
        list.empty() || list.front() != '"' ? std::string_view::npos : list.find('"', 1);
    if (close == std::string_view::npos) return false;  // the end, or not a tag: no match
    if (list.substr(0, close + 1) == etag && !(strong && weak)) return true;
    list.remove_prefix(close + 1);
  }
}

bool any_field_matches(const Headers& h, std::string_view name, std::string_view etag,
                       bool strong) {
  const std::vector<std::string_view> values = h.get_all(name);
  return std::any_of(values.begin(), values.end(),
                     [&](std::string_view v) { return etag_list_matches(v, etag, strong); });
}

// A date field; RFC 9110 has an invalid one, or several, ignored.
std::optional<std::time_t> date_field(const Headers& h, std::string_view name) {
  if (h.count(name) != 1) return std::nullopt;
  return parse_http_date(*h.get(name));
}

// Section 13.2.2's order, steps 1 to 4: 200 when the preconditions hold.
int precondition_status(const Headers& h, const FileValidators& file, bool get_or_head) {
  if (h.contains("If-Match")) {
    if (!any_field_matches(h, "If-Match", file.etag, true)) return 412;
  } else if (const auto since = date_field(h, "If-Unmodified-Since");
             since && file.mtime > *since) {
    return 412;
  }
  if (h.contains("If-None-Match")) {
    if (any_field_matches(h, "If-None-Match", file.etag, false)) return get_or_head ? 304 : 412;
  } else if (const auto since = date_field(h, "If-Modified-Since");
             get_or_head && since && file.mtime <= *since) {
    return 304;
  }
  return 200;
}

// Section 13.1.5: the Range applies only if the representation is still
// the one If-Range names, by a strong ETag or by its exact Last-Modified.
bool if_range_holds(const Headers& h, const FileValidators& file) {
  const std::optional<std::string_view> value = h.get("If-Range");
  if (!value) return true;
  if (value->substr(0, 1) == "\"" || value->substr(0, 2) == "W/") return *value == file.etag;
  const std::optional<std::time_t> date = parse_http_date(*value);
  return date && *date == file.mtime;
}

bool read_number(std::string_view text, std::uint64_t& out) noexcept {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// One range-spec: a range within the file, nullopt if it is unsatisfiable;
// `bad` set if it is malformed (the whole header is then ignored).
std::optional<ByteRange> read_spec(std::string_view spec, std::uint64_t size, bool& bad) {
  const std::size_t dash = spec.find('-');
  std::uint64_t first = 0, last = size - 1;
  if (dash == 0) {  // suffix: the last n bytes
    bad = !read_number(spec.substr(1), first);
    if (bad || first == 0) return std::nullopt;
    return ByteRange{size - std::min(first, size), size - 1};
  }
  bad = dash == std::string_view::npos || !read_number(spec.substr(0, dash), first);
  if (!bad && dash + 1 < spec.size())
    bad = !read_number(spec.substr(dash + 1), last) || last < first;
  if (bad || first >= size) return std::nullopt;
  return ByteRange{first, std::min(last, size - 1)};
}

// Sorted and merged when any two overlap or touch; in the request's order
// otherwise, as section 15.3.7.2 asks of the parts.
std::vector<ByteRange> coalesce(std::vector<ByteRange> ranges) {
  std::vector<ByteRange> sorted = ranges;
  std::sort(sorted.begin(), sorted.end(),
            [](ByteRange a, ByteRange b) { return a.first < b.first; });
  std::vector<ByteRange> merged;
  for (const ByteRange& r : sorted) {
    if (!merged.empty() && r.first <= merged.back().last + 1) {
      merged.back().last = std::max(merged.back().last, r.last);
    } else {
      merged.push_back(r);
    }
  }
  return merged.size() == ranges.size() ? ranges : merged;
}

std::string random_boundary() { return fmt::format("corio-{:016x}", corio::detail::random_u64()); }

}  // namespace

FileValidators validators_for(std::uint64_t size, std::time_t mtime) {
  return FileValidators{size, mtime,
                        fmt::format("\"{:x}-{:x}\"", static_cast<std::uint64_t>(mtime), size),
                        http_date(mtime)};
}

std::string content_range(ByteRange r, std::uint64_t size) {
  return fmt::format("bytes {}-{}/{}", r.first, r.last, size);
}

RangeSet parse_range(std::string_view value, std::uint64_t size) {
  const std::size_t eq = value.find('=');
  if (size == 0 || value.size() > kMaxRangeHeader || eq == std::string_view::npos ||
      !iequals(value.substr(0, eq), "bytes")) {
    return {};
  }
  std::vector<ByteRange> ranges;
  std::size_t specs = 0;
  bool bad = false;
  syntax::for_each_element(value.substr(eq + 1), [&](std::string_view spec) {
    if (bad || ++specs > kMaxRanges) return void(bad = true);
    if (const std::optional<ByteRange> r = read_spec(spec, size, bad)) ranges.push_back(*r);
  });
  if (bad || specs == 0) return {};
  if (ranges.empty()) return {RangeSet::Kind::unsatisfiable, {}};
  return {RangeSet::Kind::ranges, coalesce(std::move(ranges))};
}

FileAnswer answer_for(const RequestHead& request, const FileValidators& file) {
  const Headers& h = request.headers;
  const bool get = request.method == "GET";
  const int status = precondition_status(h, file, get || request.method == "HEAD");
  // Only GET has range semantics (section 14.2): HEAD answers 200's head.
  const std::optional<std::string_view> range = h.get("Range");
  if (status != 200 || !get || !range || h.count("Range") != 1 || !if_range_holds(h, file)) {
    return {status, {}};
  }
  RangeSet set = parse_range(*range, file.size);
  switch (set.kind) {
    case RangeSet::Kind::ranges:
      return {206, std::move(set.ranges)};
    case RangeSet::Kind::unsatisfiable:
      return {416, {}};
    case RangeSet::Kind::ignore:
      break;
  }
  return {200, {}};
}

ByterangesBody byteranges_body(const std::vector<ByteRange>& ranges, std::string_view type,
                               std::uint64_t size) {
  ByterangesBody body{random_boundary(), {}, {}, 0};
  for (const ByteRange& r : ranges) {
    body.heads.push_back(fmt::format("\r\n--{}\r\nContent-Type: {}\r\nContent-Range: {}\r\n\r\n",
                                     body.boundary, type, content_range(r, size)));
    body.length += body.heads.back().size() + r.length();
  }
  body.tail = "\r\n--" + body.boundary + "--\r\n";
  body.length += body.tail.size();
  return body;
}

}  // namespace corio::http::detail
