// The character classes and line checks of RFC 9110/9112 that the head
// parser and the chunked body decoder share. Internal to the http layer.
//
// A line here is what comes before its CRLF, the CRLF removed; a CR left
// inside it is a bare CR, refused like every other control character.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include <corio/http/parser.hpp>

namespace corio::http::syntax {

// tchar (RFC 9110 section 5.6.2): the characters of field names, methods
// and transfer codings.
inline constexpr std::array<bool, 256> kTokenChar = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = t[c - 32] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// field-vchar, SP and HTAB: everything but the controls (obs-text allowed).
inline constexpr bool is_field_char(unsigned char c) noexcept {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

inline constexpr bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

inline constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

inline std::string_view trim_ows(std::string_view s) noexcept {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool is_token(std::string_view s) noexcept;

// Calls f with each element of a comma-separated list, trimmed; empty
// elements are skipped, as RFC 9110 section 5.6.1 asks of recipients.
template <class F>
void for_each_element(std::string_view list, F&& f) {
  for (;;) {
    std::size_t comma = list.find(',');
    std::string_view element = trim_ows(list.substr(0, comma));
    if (!element.empty()) f(element);
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

// Throws ParseError(400) naming what is wrong with a character of `s`
// that is not allowed in `what` (a bare CR is called that).
[[noreturn]] void bad_char(std::string_view what, unsigned char c);

// Checks one field line "name: value" (a header or a trailer): a token
// name right before the colon, no obs-fold, no controls in the value.
void check_field_line(std::string_view line);

// Checks what follows a chunk size (RFC 9112 section 7.1.1):
//   *( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )
// and no whitespace at the end. Throws ParseError(400).
void check_chunk_extensions(std::string_view ext);

// Splits a line check_field_line accepted into its name and trimmed value.
std::pair<std::string_view, std::string_view> split_field_line(std::string_view line);

}  // namespace corio::http::syntax
