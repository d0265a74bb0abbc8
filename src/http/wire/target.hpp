// Request targets and authorities (RFC 9112 section 3.2, RFC 3986 section
// 3.2): what a Host field may hold, and the two target forms that carry an
// authority. Internal to the http layer; the request parser checks with
// them, the server rewrites an absolute-form target with them.
//
// Strict on purpose: a Host that two parsers could split differently (a
// comma, as if it were a list; userinfo; a second colon) is where virtual
// host confusion and cache poisoning start.
#pragma once

#include <optional>
#include <string_view>

namespace corio::http::target {

// uri-host [ ":" port ]: a reg-name (unreserved, pct-encoded and the
// sub-delims but ','; an IPv4 address is one), or an IPv6 literal in
// brackets; the port digits only. Empty is valid (RFC 9110 section 7.2).
bool is_valid_host(std::string_view host) noexcept;

// CONNECT's authority-form: a non-empty uri-host, ":" and a port.
bool is_authority_form(std::string_view target) noexcept;

// An absolute-form target "http://authority/path?query" (http or https, no
// fragment), split; nullopt for anything else.
struct AbsoluteForm {
  std::string_view authority;
  std::string_view path_and_query;  // "" or from the first '/' or '?'
};
std::optional<AbsoluteForm> split_absolute_form(std::string_view target) noexcept;

}  // namespace corio::http::target
