// Request targets and authorities (see target.hpp).
#include "http/wire/target.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>

#include <corio/http/headers.hpp>

namespace corio::http::target {

namespace {

constexpr bool is_alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

constexpr bool is_hex(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// unreserved / sub-delims, without ',' (see target.hpp). A table: every
// request's Host goes through it.
constexpr std::array<bool, 256> kRegNameChar = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = is_alnum(static_cast<char>(c));
  for (char c : std::string_view("-._~!$&'()*+;=")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

bool is_reg_name_char(char c) noexcept { return kRegNameChar[static_cast<unsigned char>(c)]; }

bool is_reg_name(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) return false;
      i += 2;
    } else if (!is_reg_name_char(s[i])) {
      return false;
    }
  }
  return true;
}

bool is_port(std::string_view s) noexcept {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_ipv6(std::string_view s) noexcept {
  char text[INET6_ADDRSTRLEN] = {};
  if (s.empty() || s.size() >= sizeof text) return false;
  s.copy(text, s.size());
  in6_addr addr{};
  return ::inet_pton(AF_INET6, text, &addr) == 1;
}

// Splits "host[:port]" at the port's colon (after an IPv6 literal's ']').
// False when the host part is malformed.
bool split_host(std::string_view v, std::string_view& host,
                std::optional<std::string_view>& port) noexcept {
  std::size_t colon = std::string_view::npos;
  if (!v.empty() && v.front() == '[') {
    const std::size_t close = v.find(']');
    if (close == std::string_view::npos || !is_ipv6(v.substr(1, close - 1))) return false;
    if (close + 1 < v.size() && v[close + 1] != ':') return false;
    colon = close + 1 < v.size() ? close + 1 : std::string_view::npos;
    host = v.substr(0, close + 1);
  } else {
    colon = v.find(':');
    host = v.substr(0, colon);
    if (!is_reg_name(host)) return false;
  }
  port = colon == std::string_view::npos ? std::nullopt
                                         : std::optional<std::string_view>(v.substr(colon + 1));
  return !port || is_port(*port);
}

// The usual Host, a reg-name without '%' and an optional port
// ("127.0.0.1:8080", "example.com"), in one pass of a table look-up a
// character; false for anything else, which split_host then decides.
// Callgrind, GET /hello: 160 instructions a request went to the general
// way's calls (find, is_reg_name, is_port) for these 15 bytes.
bool is_plain_host(std::string_view v) noexcept {
  std::size_t i = 0;
  while (i < v.size() && is_reg_name_char(v[i])) ++i;
  if (i == v.size()) return true;
  if (v[i] != ':') return false;
  for (++i; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') return false;
  }
  return true;
}

}  // namespace

bool is_valid_host(std::string_view v) noexcept {
  if (is_plain_host(v)) return true;
  std::string_view host;
  std::optional<std::string_view> port;
  return split_host(v, host, port);
}

bool is_authority_form(std::string_view t) noexcept {
  std::string_view host;
  std::optional<std::string_view> port;
  return split_host(t, host, port) && !host.empty() && port && !port->empty();
}

std::optional<AbsoluteForm> split_absolute_form(std::string_view t) noexcept {
  const std::size_t sep = t.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view scheme = t.substr(0, sep);
  if (!iequals(scheme, "http") && !iequals(scheme, "https")) return std::nullopt;
  const std::string_view rest = t.substr(sep + 3);
  const std::size_t end = rest.find_first_of("/?#");
  AbsoluteForm form{rest.substr(0, end), {}};
  if (end != std::string_view::npos) form.path_and_query = rest.substr(end);
  if (form.authority.empty() || !is_valid_host(form.authority)) return std::nullopt;
  if (form.path_and_query.find('#') != std::string_view::npos) return std::nullopt;
  return form;
}

}  // namespace corio::http::target
