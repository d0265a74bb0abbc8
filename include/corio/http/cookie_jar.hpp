/// \file
/// corio::http::CookieJar: the cookies a ClientSession keeps (aiohttp's
/// CookieJar), RFC 6265 as a user agent applies it.
///
/// <!-- doc: body (corio::http::CookieJar& jar, corio::http::ClientResponse& response, const corio::http::Url& url, const corio::http::Url& next_url) -->
///     jar.update_cookies(response.headers().get_all("Set-Cookie"), url);
///     std::string header = jar.filter_cookies(next_url);  // "a=1; b=2", or ""
///
/// Understood attributes: Domain (must domain-match the host that set it;
/// without it the cookie is host-only), Path (default: the request path's
/// directory), Expires (the RFC 6265 section 5.1.1 date algorithm) and
/// Max-Age (wins over Expires; <= 0 deletes), Secure (sent over https only).
/// An IP address host takes host-only cookies. No public-suffix list: a
/// Domain attribute naming a whole top-level domain is refused only when it
/// has no dot. A Set-Cookie that cannot be parsed is ignored, as browsers do.
///
/// Time is the wall clock (cookie dates are calendar dates); each call takes
/// `now` so tests can move it.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/http/url.hpp>

namespace corio::http {

/// One stored cookie, as RFC 6265 section 5.3 keeps it.
struct Cookie {
  std::string name;   ///< the cookie's name
  std::string value;  ///< its value
  std::string domain;  ///< lower case, no leading dot
  std::string path;        ///< sent to this path and those below it
  bool host_only = true;   ///< no Domain attribute: sent to the exact host only
  bool secure = false;     ///< Secure: sent over https only
  bool http_only = false;  ///< HttpOnly was given (kept, not acted on)
  std::optional<std::chrono::system_clock::time_point> expires;  ///< none: a session cookie
};

/// One Set-Cookie value parsed (nullopt if it has no name=value pair), its
/// attributes not yet checked against any URL.
struct SetCookie {
  Cookie cookie;            ///< the cookie, domain and path as the attributes gave them
  bool has_domain = false;  ///< whether a Domain attribute was given
};
/// header (one Set-Cookie value) parsed, Max-Age counted from now.
std::optional<SetCookie> parse_set_cookie(std::string_view header,
                                          std::chrono::system_clock::time_point now);

/// An RFC 6265 cookie-date ("Sun, 06 Nov 1994 08:49:37 GMT" and the looser
/// forms servers send), or nullopt.
std::optional<std::chrono::system_clock::time_point> parse_cookie_date(std::string_view text);

/// The cookies of a session, stored from responses and sent with requests.
class CookieJar {
 public:
  /// Cookie dates are wall-clock dates.
  using Clock = std::chrono::system_clock;

  /// Stores (or replaces, or deletes) the cookies of Set-Cookie values a
  /// response from `url` carried.
  void update_cookies(const std::vector<std::string_view>& set_cookie_values, const Url& url,
                      Clock::time_point now = Clock::now());
  /// The Cookie header for a request to url: matching, unexpired cookies,
  /// longer paths first; "" when none match.
  std::string filter_cookies(const Url& url, Clock::time_point now = Clock::now()) const;

  std::size_t size() const noexcept { return cookies_.size(); }  ///< how many are stored
  const std::vector<Cookie>& cookies() const noexcept { return cookies_; }  ///< all stored
  void clear() noexcept { cookies_.clear(); }  ///< forgets every cookie

 private:
  void store(Cookie c, Clock::time_point now);
  std::vector<Cookie> cookies_;
};

}  // namespace corio::http
