// HTTP dates (see http_date.hpp). The parser is a cursor over the text:
// each form is a fixed sequence of fields, so a small reader per field
// type keeps it linear and bounded (no field is longer than 9 characters).
#include "http/wire/http_date.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace corio::http::detail {

namespace {

constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil): timegm without the C library's locale and TZ state.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Cursor {
  std::string_view s;
  bool ok = true;

  bool literal(std::string_view want) noexcept {
    ok = ok && s.substr(0, want.size()) == want;
    if (ok) s.remove_prefix(want.size());
    return ok;
  }
  // n digits (a space first counts as 0 when pad: asctime's " 6").
  unsigned digits(std::size_t n, bool pad = false) noexcept {
    unsigned v = 0;
    for (std::size_t i = 0; ok && i < n; ++i) {
      const char c = i < s.size() ? s[i] : '\0';
      if (c >= '0' && c <= '9') {
        v = v * 10 + static_cast<unsigned>(c - '0');
      } else {
        ok = pad && i == 0 && c == ' ';
      }
    }
    if (ok) s.remove_prefix(n);
    return v;
  }
  unsigned month() noexcept {
    for (unsigned m = 0; ok && m < 12; ++m) {
      if (s.substr(0, 3) == kMonths[m]) {
        s.remove_prefix(3);
        return m + 1;
      }
    }
    ok = false;
    return 0;
  }
  // A day name: 3 letters, or up to 9 in RFC 850 ("Wednesday").
  void weekday() noexcept {
    std::size_t n = 0;
    while (n < s.size() && n < 9 && is_letter(s[n])) ++n;
    ok = ok && n >= 3;
    s.remove_prefix(n);
  }
  static bool is_letter(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  }
};

struct Parts {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

void read_time(Cursor& c, Parts& p) noexcept {
  p.hour = c.digits(2);
  c.literal(":");
  p.minute = c.digits(2);
  c.literal(":");
  p.second = c.digits(2);
}

std::optional<std::time_t> to_time(const Cursor& c, const Parts& p) noexcept {
  if (!c.ok || !c.s.empty() || p.day < 1 || p.day > 31 || p.hour > 23 || p.minute > 59 ||
      p.second > 60) {
    return std::nullopt;
  }
  const std::int64_t days = days_from_civil(p.year, p.month, p.day);
  return static_cast<std::time_t>(days * 86400 + p.hour * 3600 + p.minute * 60 + p.second);
}

}  // namespace

void format_http_date(std::time_t t, char* out) noexcept {
  std::tm g{};
  gmtime_r(&t, &g);
  char text[64];
  std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[g.tm_wday],
                g.tm_mday, kMonths[g.tm_mon].data(), g.tm_year + 1900, g.tm_hour, g.tm_min,
                g.tm_sec);
  std::copy(text, text + kHttpDateSize, out);
}

std::string http_date(std::time_t t) {
  std::string out(kHttpDateSize, ' ');
  format_http_date(t, out.data());
  return out;
}

std::optional<std::time_t> parse_http_date(std::string_view text) noexcept {
  if (text.size() > 64) return std::nullopt;
  Cursor c{text};
  Parts p;
  c.weekday();
  if (c.ok && c.s.substr(0, 2) == ", " && c.s.size() > 4 && c.s[4] == ' ') {  // IMF-fixdate
    c.literal(", ");
    p.day = c.digits(2);
    c.literal(" ");
    p.month = c.month();
    c.literal(" ");
    p.year = c.digits(4);
  } else if (c.ok && c.s.substr(0, 2) == ", ") {  // RFC 850, two-digit year
    c.literal(", ");
    p.day = c.digits(2);
    c.literal("-");
    p.month = c.month();
    c.literal("-");
    const unsigned yy = c.digits(2);
    p.year = yy < 70 ? 2000 + yy : 1900 + yy;  // the pivot nginx uses
  } else {                                     // asctime: the time before the year
    c.literal(" ");
    p.month = c.month();
    c.literal(" ");
    p.day = c.digits(2, true);
    c.literal(" ");
    read_time(c, p);
    c.literal(" ");
    p.year = c.digits(4);
    return to_time(c, p);
  }
  c.literal(" ");
  read_time(c, p);
  c.literal(" GMT");
  return to_time(c, p);
}

}  // namespace corio::http::detail
