// DateCache (see date_cache.hpp). Formatted by hand, not with strftime:
// the day and month names must be English whatever the process locale.
#include "http/date_cache.hpp"

#include <cstdio>

namespace corio::http::detail {

std::string_view DateCache::now() noexcept {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t t = std::time(nullptr);
  if (t != second_) {
    second_ = t;
    std::tm g{};
    gmtime_r(&t, &g);
    std::snprintf(text_, sizeof text_, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[g.tm_wday],
                  g.tm_mday, kMonths[g.tm_mon], g.tm_year + 1900, g.tm_hour, g.tm_min, g.tm_sec);
  }
  return std::string_view(text_, 29);
}

}  // namespace corio::http::detail
