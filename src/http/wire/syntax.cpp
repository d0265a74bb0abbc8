// Field-line checks shared by the head parser and the chunked decoder
// (see syntax.hpp).
#include "http/wire/syntax.hpp"

#include <cstdio>
#include <string>

namespace corio::http::syntax {

bool is_token(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    if (!kTokenChar[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

void bad_char(std::string_view what, unsigned char c) {
  std::string name;
  if (c == '\r') {
    name = "a bare CR";
  } else if (c == '\n') {
    name = "a bare LF";
  } else if (c > 0x20 && c < 0x7f) {
    name = std::string("'") + static_cast<char>(c) + "'";
  } else {
    char hex[16];
    std::snprintf(hex, sizeof hex, "byte 0x%02x", c);
    name = hex;
  }
  throw ParseError(400, name + " is not allowed in " + std::string(what));
}

void check_field_line(std::string_view line) {
  if (is_ows(line.front())) {
    throw ParseError(400, "obs-fold (a field line starting with whitespace) is not allowed");
  }
  std::size_t i = 0;
  while (i < line.size() && kTokenChar[static_cast<unsigned char>(line[i])]) ++i;
  if (i == line.size()) throw ParseError(400, "a field line without a colon");
  if (line[i] != ':') {
    if (is_ows(line[i])) throw ParseError(400, "whitespace between a field name and its colon");
    bad_char("a field name", static_cast<unsigned char>(line[i]));
  }
  if (i == 0) throw ParseError(400, "a field line with an empty name");
  for (++i; i < line.size(); ++i) {
    auto c = static_cast<unsigned char>(line[i]);
    if (!is_field_char(c)) bad_char("a field value", c);
  }
}

namespace {

std::size_t skip_bws(std::string_view s, std::size_t i) noexcept {
  while (i < s.size() && is_ows(s[i])) ++i;
  return i;
}

std::size_t skip_token(std::string_view s, std::size_t i) noexcept {
  while (i < s.size() && kTokenChar[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

// The end of the quoted-string starting at s[i] (a DQUOTE): qdtext is
// HTAB, SP and visible characters but DQUOTE and '\'; quoted-pair escapes
// any of those and DQUOTE and '\'.
std::size_t skip_quoted_string(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') return i + 1;
    if (c == '\\' && ++i < s.size()) c = static_cast<unsigned char>(s[i]);
    if (!is_field_char(c)) bad_char("a chunk extension", c);
  }
  throw ParseError(400, "an unterminated quoted string in a chunk extension");
}

}  // namespace

void check_chunk_extensions(std::string_view ext) {
  for (std::size_t i = 0; i < ext.size();) {
    i = skip_bws(ext, i);
    if (i == ext.size()) throw ParseError(400, "whitespace at the end of a chunk-size line");
    if (ext[i] != ';') throw ParseError(400, "a chunk size that is not a hex number");
    const std::size_t name = skip_bws(ext, i + 1);
    i = skip_token(ext, name);
    if (i == name) throw ParseError(400, "a chunk extension without a name");
    const std::size_t eq = skip_bws(ext, i);
    if (eq == ext.size() || ext[eq] != '=') continue;
    const std::size_t value = skip_bws(ext, eq + 1);
    i = value < ext.size() && ext[value] == '"' ? skip_quoted_string(ext, value)
                                                : skip_token(ext, value);
    if (i == value) throw ParseError(400, "a chunk extension with an empty value");
  }
}

std::pair<std::string_view, std::string_view> split_field_line(std::string_view line) {
  std::size_t colon = line.find(':');
  return {line.substr(0, colon), trim_ows(line.substr(colon + 1))};
}

}  // namespace corio::http::syntax
