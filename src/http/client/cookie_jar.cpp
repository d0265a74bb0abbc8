// The cookie jar (see cookie_jar.hpp): RFC 6265 sections 5.1 to 5.4, the
// user agent's side.
#include <corio/http/cookie_jar.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

#include <corio/http/headers.hpp>

namespace corio::http {

namespace {

using Clock = std::chrono::system_clock;

// Browsers keep about this many; a server setting more only evicts its oldest.
constexpr std::size_t kMaxCookies = 3000;
// RFC 6265 section 6.1's minimum a user agent must support, per cookie.
constexpr std::size_t kMaxCookieBytes = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

bool is_ip_address(std::string_view host) {
  return host.find(':') != std::string_view::npos ||
         std::all_of(host.begin(), host.end(), [](char ch) { return ch == '.' || (ch >= '0' && ch <= '9'); });
}

// Section 5.1.3.
bool domain_match(std::string_view host, std::string_view domain) {
  if (host == domain) return true;
  return host.size() > domain.size() && host.ends_with(domain) &&
         host[host.size() - domain.size() - 1] == '.' && !is_ip_address(host);
}

// Section 5.1.4.
std::string default_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return "/";
  const std::size_t last = path.rfind('/');
  return last == 0 ? "/" : std::string(path.substr(0, last));
}

bool path_match(std::string_view request_path, std::string_view cookie_path) {
  if (!request_path.starts_with(cookie_path)) return false;
  return request_path.size() == cookie_path.size() || cookie_path.ends_with('/') ||
         request_path[cookie_path.size()] == '/';
}

// Section 5.1.1's date tokens: a time, a day of month, a month, a year.
struct DateParts {
  int hour = -1, minute = -1, second = -1, day = -1, month = -1, year = -1;
};

bool is_date_delimiter(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return c == 0x09 || (c >= 0x20 && c <= 0x2F) || (c >= 0x3B && c <= 0x40) ||
         (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
}

// 1*max DIGIT taken from the front of s, not followed by another digit.
std::optional<int> take_number(std::string_view& s, std::size_t min, std::size_t max) {
  std::size_t n = 0;
  while (n < s.size() && n <= max && s[n] >= '0' && s[n] <= '9') ++n;
  if (n < min || n > max) return std::nullopt;
  int v = 0;
  std::from_chars(s.data(), s.data() + n, v);
  s.remove_prefix(n);
  return v;
}

// hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT, then anything but a digit.
bool parse_time_token(std::string_view token, DateParts& d) {
  int parts[3];
  for (int i = 0; i < 3; ++i) {
    auto v = take_number(token, 1, 2);
    if (!v) return false;
    parts[i] = *v;
    if (i == 2) break;
    if (token.empty() || token.front() != ':') return false;
    token.remove_prefix(1);
  }
  d.hour = parts[0];
  d.minute = parts[1];
  d.second = parts[2];
  return true;
}

void classify_date_token(std::string_view token, DateParts& d) {
  static constexpr std::string_view kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
  if (d.hour < 0 && parse_time_token(token, d)) return;
  if (d.day < 0) {
    std::string_view t = token;
    if (auto v = take_number(t, 1, 2)) {
      d.day = *v;
      return;
    }
  }
  if (d.month < 0 && token.size() >= 3) {
    const std::string m = lower(token.substr(0, 3));
    for (int i = 0; i < 12; ++i) {
      if (m == kMonths[i]) {
        d.month = i + 1;
        return;
      }
    }
  }
  if (d.year < 0) {
    std::string_view t = token;
    if (auto v = take_number(t, 2, 4)) d.year = *v;
  }
}

}  // namespace

std::optional<Clock::time_point> parse_cookie_date(std::string_view text) {
  DateParts d;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_date_delimiter(text[i])) ++i;
    std::size_t j = i;
    while (j < text.size() && !is_date_delimiter(text[j])) ++j;
    if (j > i) classify_date_token(text.substr(i, j - i), d);
    i = j;
  }
  if (d.year >= 70 && d.year <= 99) d.year += 1900;
  if (d.year >= 0 && d.year <= 69) d.year += 2000;
  if (d.hour < 0 || d.day < 1 || d.day > 31 || d.month < 0 || d.year < 1601 || d.hour > 23 ||
      d.minute > 59 || d.second > 59) {
    return std::nullopt;
  }
  const std::chrono::year_month_day ymd{std::chrono::year(d.year),
                                        std::chrono::month(static_cast<unsigned>(d.month)),
                                        std::chrono::day(static_cast<unsigned>(d.day))};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd) + std::chrono::hours(d.hour) +
         std::chrono::minutes(d.minute) + std::chrono::seconds(d.second);
}

namespace {

void apply_attribute(std::string_view name, std::string_view value, Clock::time_point now,
                     SetCookie& out, bool& have_max_age) {
  Cookie& c = out.cookie;
  if (iequals(name, "expires")) {
    if (have_max_age) return;
    if (auto when = parse_cookie_date(value)) c.expires = *when;
  } else if (iequals(name, "max-age")) {
    const bool negative = value.starts_with('-');
    const std::string_view digits = negative ? value.substr(1) : value;
    if (digits.empty() || !all_digits(digits)) return;
    long long secs = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), secs).ec != std::errc{}) {
      secs = 400LL * 24 * 3600;  // a huge number: keep "far future" without overflow
    }
    have_max_age = true;
    c.expires = negative || secs == 0 ? Clock::time_point::min() : now + std::chrono::seconds(secs);
  } else if (iequals(name, "domain")) {
    std::string_view d = value;
    if (d.starts_with('.')) d.remove_prefix(1);
    if (d.empty()) return;
    c.domain = lower(d);
    out.has_domain = true;
  } else if (iequals(name, "path")) {
    if (value.starts_with('/')) c.path = std::string(value);
  } else if (iequals(name, "secure")) {
    c.secure = true;
  } else if (iequals(name, "httponly")) {
    c.http_only = true;
  }
}

}  // namespace

std::optional<SetCookie> parse_set_cookie(std::string_view header, Clock::time_point now) {
  const std::size_t semi = header.find(';');
  const std::string_view pair = header.substr(0, semi);
  const std::size_t eq = pair.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  SetCookie out;
  out.cookie.name = std::string(trim(pair.substr(0, eq)));
  out.cookie.value = std::string(trim(pair.substr(eq + 1)));
  if (out.cookie.name.empty() || out.cookie.name.size() + out.cookie.value.size() > kMaxCookieBytes) {
    return std::nullopt;
  }
  bool have_max_age = false;
  std::string_view rest = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
  while (!rest.empty()) {
    const std::size_t next = rest.find(';');
    const std::string_view av = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    const std::size_t aeq = av.find('=');
    const std::string_view name = trim(av.substr(0, aeq));
    const std::string_view value = aeq == std::string_view::npos ? "" : trim(av.substr(aeq + 1));
    apply_attribute(name, value, now, out, have_max_age);
  }
  return out;
}

void CookieJar::update_cookies(const std::vector<std::string_view>& set_cookie_values,
                               const Url& url, Clock::time_point now) {
  for (std::string_view header : set_cookie_values) {
    std::optional<SetCookie> parsed = parse_set_cookie(header, now);
    if (!parsed) continue;
    Cookie& c = parsed->cookie;
    if (parsed->has_domain) {
      // Section 5.3 step 6: a Domain the request host is not within is refused,
      // and so is one without a dot (a top-level domain) unless it is the host.
      if (!domain_match(url.host, c.domain)) continue;
      if (c.domain.find('.') == std::string::npos && c.domain != url.host) continue;
      c.host_only = false;
    } else {
      c.domain = url.host;
      c.host_only = true;
    }
    if (c.path.empty()) c.path = default_path(url.path);
    store(std::move(c), now);
  }
}

void CookieJar::store(Cookie c, Clock::time_point now) {
  const auto same = [&c](const Cookie& o) {
    return o.name == c.name && o.domain == c.domain && o.path == c.path;
  };
  std::erase_if(cookies_, same);
  if (c.expires && *c.expires <= now) return;  // an expiry in the past deletes
  if (cookies_.size() >= kMaxCookies) cookies_.erase(cookies_.begin());
  cookies_.push_back(std::move(c));
}

std::string CookieJar::filter_cookies(const Url& url, Clock::time_point now) const {
  std::vector<const Cookie*> matching;
  for (const Cookie& c : cookies_) {
    if (c.expires && *c.expires <= now) continue;
    if (c.secure && !url.is_https()) continue;
    if (c.host_only ? url.host != c.domain : !domain_match(url.host, c.domain)) continue;
    if (!path_match(url.path, c.path)) continue;
    matching.push_back(&c);
  }
  // Section 5.4 step 2: longer paths first; stable, so older cookies lead among equals.
  std::stable_sort(matching.begin(), matching.end(),
                   [](const Cookie* a, const Cookie* b) { return a->path.size() > b->path.size(); });
  std::string header;
  for (const Cookie* c : matching) {
    if (!header.empty()) header += "; ";
    header += c->name;
    header += '=';
    header += c->value;
  }
  return header;
}

}  // namespace corio::http
