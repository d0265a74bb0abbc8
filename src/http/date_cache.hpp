// The Date header's value (RFC 9110 section 5.6.7), formatted once per
// second: a server answering 100k requests a second formats it once, not
// 100k times. One per loop (no shared mutable state between workers).
#pragma once

#include <ctime>
#include <string_view>

namespace corio::http::detail {

class DateCache {
 public:
  // "Sun, 06 Nov 1994 08:49:37 GMT" for the current second.
  std::string_view now() noexcept;

 private:
  std::time_t second_ = -1;
  char text_[64] = {};
};

}  // namespace corio::http::detail
