/// \file
/// corio::http::Url: absolute http/https URLs (RFC 3986) as the client needs
/// them, and the query-string helpers both sides use.
///
/// <!-- doc: body -->
///     corio::http::Url u = corio::http::Url::parse("https://example.org/news?day=today");
///     std::string host = u.host;       // "example.org"
///     int port = u.port;               // 443
///     std::string target = u.target(); // "/news?day=today"
///     corio::http::Url next = u.resolve("../x");    // a redirect's Location, resolved against u
///
/// A parser with limits like every other: at most 8 KiB, no control
/// characters or spaces, no user:password@ (credentials in URLs leak into
/// logs), a port in 1..65535, an IPv6 literal in brackets. Errors are
/// ValueError (corio/errors.hpp) naming what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corio::http {

/// The longest URL Url::parse() takes, in bytes.
inline constexpr std::size_t kMaxUrlLength = 8 * 1024;

/// An absolute http or https URL, in parts.
struct Url {
  std::string scheme;  ///< "http" or "https", lower case
  std::string host;    ///< lower case; an IPv6 literal without its brackets
  std::uint16_t port = 0;  ///< as given, else the scheme's (80, 443)
  std::string path;    ///< percent-encoded as given (spaces and controls refused); "/" when empty
  std::string query;   ///< without the "?"; the fragment is dropped

  /// text parsed; ValueError naming what is wrong.
  static Url parse(std::string_view text);

  bool is_https() const noexcept { return scheme == "https"; }  ///< whether the scheme is https
  bool default_port() const noexcept;  ///< whether port is the scheme's (80, 443)
  std::string target() const;       ///< path, then "?query" if there is one
  std::string host_header() const;  ///< host, ":port" unless default; IPv6 in brackets
  std::string origin() const;       ///< scheme://host_header()
  std::string to_string() const;    ///< origin() + target()

  /// reference (absolute, scheme-relative "//h/p", absolute path or
  /// relative path, with dot segments) resolved against this URL (RFC 3986
  /// section 5.2), e.g. a redirect's Location.
  Url resolve(std::string_view reference) const;
};

/// A query string's (or a form's) fields, in order, repeats kept: a vector
/// of (name, value) pairs with lookups. get() answers the first value, as
/// aiohttp's request.query.get() and FastAPI's single-valued parameters do;
/// get_all() every value, for repeated names ("?tag=a&tag=b"). Names match
/// exactly (case kept): query names are not case-insensitive like headers.
///
/// <!-- doc: body (corio::http::Request& req) -->
///     const corio::http::QueryParams& q = req.query();
///     std::optional<std::string_view> page = q.get("page");   // nullopt if absent
///     std::string_view sort = q.get("sort", "name");         // fallback if absent
///     for (std::string_view tag : q.get_all("tag")) std::printf("%.*s\n", int(tag.size()), tag.data());
///
/// The views point into the QueryParams (or at the fallback given).
class QueryParams : public std::vector<std::pair<std::string, std::string>> {
 public:
  using vector::vector;
  QueryParams() = default;
  /// From the plain vector QueryParams was before it had lookups, so code
  /// written against that keeps compiling.
  QueryParams(std::vector<std::pair<std::string, std::string>> fields)  // NOLINT(google-explicit-constructor)
      : vector(std::move(fields)) {}

  /// The first value of name, or nullopt.
  std::optional<std::string_view> get(std::string_view name) const noexcept;
  /// The first value of name, or fallback.
  std::string_view get(std::string_view name, std::string_view fallback) const noexcept;
  std::vector<std::string_view> get_all(std::string_view name) const;  ///< every value of name, in order
  bool contains(std::string_view name) const noexcept;  ///< whether name is there
};

/// Percent-encoding of a query component (application/x-www-form-urlencoded
/// when form is true: space becomes '+'). Unreserved characters stay.
std::string percent_encode(std::string_view text, bool form = true);
/// The inverse; '+' is a space when form is true. A bad escape ("%zz", "%4")
/// is ValueError.
std::string percent_decode(std::string_view text, bool form = true);
/// "a=1&b=x%20y" <-> {{"a","1"},{"b","x y"}}; order and repeats kept.
QueryParams parse_query(std::string_view query);
/// The inverse of parse_query(), form-encoded.
std::string encode_query(const QueryParams& params);

}  // namespace corio::http
