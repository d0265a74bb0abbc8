// DateCache (see date_cache.hpp). Formatted by hand, not with strftime:
// the day and month names must be English whatever the process locale.
#include "http/server/date_cache.hpp"

#include <cstdio>

namespace corio::http::detail {

DateCache::DateCache(std::string_view server_name) {
  if (!server_name.empty()) {
    fields_ = "Server: ";
    fields_ += server_name;
    fields_ += "\r\n";
  }
  fields_ += "Date: ";
  date_at_ = fields_.size();
  fields_.append(kDateSize, ' ');
  fields_ += "\r\n";
}

void DateCache::refresh() noexcept {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t t = std::time(nullptr);
  if (t == second_) return;
  second_ = t;
  std::tm g{};
  gmtime_r(&t, &g);
  char text[64];
  std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[g.tm_wday],
                g.tm_mday, kMonths[g.tm_mon], g.tm_year + 1900, g.tm_hour, g.tm_min, g.tm_sec);
  fields_.replace(date_at_, kDateSize, text, kDateSize);
}

std::string_view DateCache::now() noexcept {
  refresh();
  return std::string_view(fields_).substr(date_at_, kDateSize);
}

std::string_view DateCache::fields() noexcept {
  refresh();
  return fields_;
}

}  // namespace corio::http::detail
