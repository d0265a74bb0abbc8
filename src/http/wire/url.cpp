// Url (see url.hpp): RFC 3986's generic split of a reference into scheme,
// authority, path, query and fragment, then the http-specific checks of
// the authority. resolve() is section 5.2.2's algorithm, strict form.
//
// Bytes above 0x7f in a path or query are percent-encoded, as browsers do:
// servers do send raw UTF-8 in a Location, and no request target may hold it.
#include <corio/http/url.hpp>

#include <arpa/inet.h>

#include <optional>

#include <corio/errors.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

[[noreturn]] void invalid(std::string_view text, const std::string& why) {
  constexpr std::size_t kShown = 100;  // of a URL that may be 8 KiB long
  std::string shown(text.substr(0, kShown));
  if (text.size() > kShown) shown += "...";
  throw ValueError("invalid URL '" + shown + "': " + why);
}

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_unreserved(char c) noexcept {
  return is_alpha(c) || syntax::is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
constexpr char lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? char(c + 32) : c; }

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

void check_text(std::string_view text) {
  if (text.size() > kMaxUrlLength) invalid(text, "longer than 8 KiB");
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) invalid(text, "spaces and control characters are not allowed");
  }
}

std::string encode_non_ascii(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

// A URI reference split as RFC 3986 appendix B does; the fragment dropped.
struct Reference {
  std::optional<std::string_view> scheme, authority, query;
  std::string_view path;
};

Reference split_reference(std::string_view text) {
  Reference r;
  text = text.substr(0, text.find('#'));
  std::size_t colon = text.find_first_of(":/?");
  if (colon != std::string_view::npos && colon > 0 && text[colon] == ':' && is_alpha(text[0])) {
    r.scheme = text.substr(0, colon);
    text.remove_prefix(colon + 1);
  }
  if (text.substr(0, 2) == "//") {
    std::size_t end = text.find_first_of("/?", 2);
    r.authority = text.substr(2, end == std::string_view::npos ? end : end - 2);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end);
  }
  std::size_t q = text.find('?');
  r.path = text.substr(0, q);
  if (q != std::string_view::npos) r.query = text.substr(q + 1);
  return r;
}

std::uint16_t default_port_of(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

std::uint16_t parse_port(std::string_view text, std::string_view port, std::string_view scheme) {
  if (port.empty()) return default_port_of(scheme);
  unsigned value = 0;
  for (char c : port) {
    if (!syntax::is_digit(c) || value > 65535) invalid(text, "the port is not a number in 1..65535");
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) invalid(text, "the port is not a number in 1..65535");
  return static_cast<std::uint16_t>(value);
}

// host [":" port], host a DNS name, an IPv4 address or "[" IPv6 "]".
void set_authority(Url& u, std::string_view text, std::string_view authority) {
  if (authority.find('@') != std::string_view::npos) {
    invalid(text, "credentials (user@host) in URLs are not supported");
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) invalid(text, "an IPv6 literal without its ']'");
    std::string host(authority.substr(1, close - 1));
    in6_addr addr;
    if (inet_pton(AF_INET6, host.c_str(), &addr) != 1) invalid(text, "a malformed IPv6 literal");
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') invalid(text, "junk after the IPv6 literal");
    port = rest.empty() ? rest : rest.substr(1);
    u.host = to_lower(host);
  } else {
    std::size_t colon = authority.find(':');
    std::string_view host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    for (char c : host) {
      if (!is_unreserved(c)) invalid(text, "a character the host may not hold");
    }
    u.host = to_lower(host);
  }
  if (u.host.empty()) invalid(text, "no host");
  u.port = parse_port(text, port, u.scheme);
}

// RFC 3986 section 5.2.4.
std::string remove_dot_segments(std::string_view in) {
  std::string out;
  auto pop_segment = [&] {
    std::size_t slash = out.rfind('/');
    out.erase(slash == std::string::npos ? 0 : slash);
  };
  while (!in.empty()) {
    if (in.substr(0, 3) == "../") {
      in.remove_prefix(3);
    } else if (in.substr(0, 2) == "./") {
      in.remove_prefix(2);
    } else if (in.substr(0, 3) == "/./") {
      in.remove_prefix(2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.substr(0, 4) == "/../") {
      in.remove_prefix(3);
      pop_segment();
    } else if (in == "/..") {
      in = "/";
      pop_segment();
    } else if (in == "." || in == "..") {
      in = {};
    } else {
      std::size_t end = in.find('/', 1);
      out += in.substr(0, end);
      in = end == std::string_view::npos ? std::string_view() : in.substr(end);
    }
  }
  return out;
}

}  // namespace

Url Url::parse(std::string_view text) {
  check_text(text);
  Reference r = split_reference(text);
  if (!r.scheme) invalid(text, "not an absolute URL (no scheme://)");
  Url u;
  u.scheme = to_lower(*r.scheme);
  if (u.scheme != "http" && u.scheme != "https") invalid(text, "the scheme is not http or https");
  if (!r.authority) invalid(text, "no host (expected " + u.scheme + "://host)");
  set_authority(u, text, *r.authority);
  u.path = r.path.empty() ? "/" : encode_non_ascii(r.path);
  if (r.query) u.query = encode_non_ascii(*r.query);
  return u;
}

bool Url::default_port() const noexcept { return port == default_port_of(scheme); }

std::string Url::target() const { return query.empty() ? path : path + "?" + query; }

std::string Url::host_header() const {
  std::string h = host.find(':') == std::string::npos ? host : "[" + host + "]";
  if (!default_port()) h += ":" + std::to_string(port);
  return h;
}

std::string Url::origin() const { return scheme + "://" + host_header(); }

std::string Url::to_string() const { return origin() + target(); }

Url Url::resolve(std::string_view reference) const {
  check_text(reference);
  Reference r = split_reference(reference);
  Url t;
  if (r.scheme) {
    t = parse(reference);
    t.path = remove_dot_segments(t.path);
    return t;
  }
  t.scheme = scheme;
  std::string path;
  if (r.authority) {
    set_authority(t, reference, *r.authority);
    path = remove_dot_segments(r.path);
  } else {
    t.host = host;
    t.port = port;
    if (r.path.empty()) {
      path = this->path;
      if (!r.query) t.query = query;
    } else if (r.path.front() == '/') {
      path = remove_dot_segments(r.path);
    } else {
      // Section 5.2.3: the base path up to its last '/', then the reference.
      std::string merged = this->path.substr(0, this->path.rfind('/') + 1);
      merged += r.path;
      path = remove_dot_segments(merged);
    }
  }
  t.path = path.empty() ? "/" : encode_non_ascii(path);
  if (r.query) t.query = encode_non_ascii(*r.query);
  return t;
}

std::string percent_encode(std::string_view text, bool form) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (is_unreserved(c)) {
      out += c;
    } else if (c == ' ' && form) {
      out += '+';
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string percent_decode(std::string_view text, bool form) {
  auto hex = [&](char c) -> int {
    if (syntax::is_digit(c)) return c - '0';
    c = lower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw ValueError("bad percent-escape in '" + std::string(text.substr(0, 100)) + "'");
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%') {
      if (i + 2 >= text.size()) hex('%');  // too short: always a bad escape
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else if (text[i] == '+' && form) {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

std::optional<std::string_view> QueryParams::get(std::string_view name) const noexcept {
  for (const auto& [key, value] : *this) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

std::string_view QueryParams::get(std::string_view name, std::string_view fallback) const noexcept {
  return get(name).value_or(fallback);
}

std::vector<std::string_view> QueryParams::get_all(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const auto& [key, value] : *this) {
    if (key == name) values.emplace_back(value);
  }
  return values;
}

bool QueryParams::contains(std::string_view name) const noexcept { return get(name).has_value(); }

QueryParams parse_query(std::string_view query) {
  QueryParams params;
  for (;;) {
    std::size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      std::size_t eq = pair.find('=');
      std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
      params.emplace_back(percent_decode(pair.substr(0, eq)), percent_decode(value));
    }
    if (amp == std::string_view::npos) return params;
    query.remove_prefix(amp + 1);
  }
}

std::string encode_query(const QueryParams& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += percent_encode(name);
    out += '=';
    out += percent_encode(value);
  }
  return out;
}

}  // namespace corio::http
