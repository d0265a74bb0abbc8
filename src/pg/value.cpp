// The text formats of PostgreSQL's scalar types (value.hpp's table).
#include <corio/pg/value.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace corio::pg {

namespace {

[[noreturn]] void bad(std::string_view what, std::string_view text) {
  throw DecodeError("not " + std::string(what) + ": '" + std::string(text.substr(0, 64)) + "'");
}

// Reads exactly `digits` decimal digits at s[pos].
int digits_at(std::string_view s, std::size_t pos, std::size_t digits, std::string_view what) {
  int v = 0;
  if (pos + digits > s.size()) bad(what, s);
  for (std::size_t i = pos; i < pos + digits; ++i) {
    if (s[i] < '0' || s[i] > '9') bad(what, s);
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

namespace detail {

std::int64_t parse_int(std::string_view s, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) bad("an integer", s);
  if (v < min || v > max) bad("an integer in range", s);
  return v;
}

std::uint64_t parse_uint(std::string_view s, std::uint64_t max) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) bad("an unsigned integer", s);
  if (v > max) bad("an unsigned integer in range", s);
  return v;
}

std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
  return std::string(buf, end);
}

double parse_double(std::string_view s) {
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) bad("a number", s);
  return v;
}

std::string format_date(Date d) {
  const std::chrono::year_month_day ymd(d);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

Date parse_date(std::string_view s) {
  // ISO output (DateStyle's default): YYYY-MM-DD, AD years only.
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') bad("a date (YYYY-MM-DD)", s);
  const std::chrono::year_month_day ymd{
      std::chrono::year(digits_at(s, 0, 4, "a date")),
      std::chrono::month(static_cast<unsigned>(digits_at(s, 5, 2, "a date"))),
      std::chrono::day(static_cast<unsigned>(digits_at(s, 8, 2, "a date")))};
  if (!ymd.ok()) bad("a valid date", s);
  return std::chrono::sys_days(ymd);
}

std::string format_timestamp(Timestamp t) {
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::hh_mm_ss<std::chrono::microseconds> tod(t - day);
  return fmt::format("{} {:02}:{:02}:{:02}.{:06}+00", format_date(day), tod.hours().count(),
                     tod.minutes().count(), tod.seconds().count(), tod.subseconds().count());
}

Timestamp parse_timestamp(std::string_view s) {
  // "YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]"; no zone means UTC.
  constexpr std::string_view what = "a timestamp";
  if (s.size() < 19 || s[10] != ' ' || s[13] != ':' || s[16] != ':') bad(what, s);
  using namespace std::chrono;
  microseconds t = parse_date(s.substr(0, 10)).time_since_epoch() +
                   hours(digits_at(s, 11, 2, what)) + minutes(digits_at(s, 14, 2, what)) +
                   seconds(digits_at(s, 17, 2, what));
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    int scale = 100000;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, scale /= 10) {
      t += microseconds((s[pos] - '0') * scale);
    }
  }
  if (pos < s.size()) {
    if (s[pos] != '+' && s[pos] != '-') bad(what, s);
    const int sign = s[pos] == '+' ? 1 : -1;
    minutes offset = hours(digits_at(s, pos + 1, 2, what));
    pos += 3;
    if (pos < s.size() && s[pos] == ':') {
      offset += minutes(digits_at(s, pos + 1, 2, what));
      pos += 3;
    }
    if (pos != s.size()) bad(what, s);
    t -= sign * offset;
  }
  return Timestamp(t);
}

std::string decode_bytea_hex(std::string_view s) {
  // bytea_output = hex (the default since 9.0): "\x" then two digits a byte.
  if (s.size() < 2 || s[0] != '\\' || s[1] != 'x' || s.size() % 2 != 0) bad("hex bytea", s);
  auto nibble = [s](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    bad("hex bytea", s);
  };
  std::string out;
  out.reserve(s.size() / 2 - 1);
  for (std::size_t i = 2; i < s.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(s[i]) << 4 | nibble(s[i + 1])));
  }
  return out;
}

}  // namespace detail

bool Decode<bool>::from_text(std::string_view s) {
  if (s == "t") return true;
  if (s == "f") return false;
  bad("a bool", s);
}

Param Encode<nlohmann::json>::to_param(const nlohmann::json& v) { return {v.dump()}; }

nlohmann::json Decode<nlohmann::json>::from_text(std::string_view s) {
  try {
    return nlohmann::json::parse(s);
  } catch (const nlohmann::json::parse_error& e) {
    throw DecodeError(std::string("not JSON: ") + e.what());
  }
}

}  // namespace corio::pg
