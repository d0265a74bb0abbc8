// DateCache (see date_cache.hpp).
#include "http/server/date_cache.hpp"

#include <corio/detail/entropy.hpp>
#include <corio/event_loop.hpp>

#include "http/wire/http_date.hpp"

namespace corio::http::detail {

DateCache::DateCache(std::string_view server_name) {
  if (!server_name.empty()) {
    fields_ = "Server: ";
    fields_ += server_name;
    fields_ += "\r\n";
  }
  fields_ += "Date: ";
  date_at_ = fields_.size();
  fields_.append(kHttpDateSize, ' ');
  fields_ += "\r\n";
}

void DateCache::refresh() noexcept {
  const double pass = get_running_loop().pass_time();
  if (pass == pass_) return;
  pass_ = pass;
  const auto t = static_cast<std::time_t>(corio::detail::wall_time());
  if (t == second_) return;
  second_ = t;
  format_http_date(t, fields_.data() + date_at_);
}

std::string_view DateCache::now() noexcept {
  refresh();
  return std::string_view(fields_).substr(date_at_, kHttpDateSize);
}

std::string_view DateCache::fields() noexcept {
  refresh();
  return fields_;
}

}  // namespace corio::http::detail
