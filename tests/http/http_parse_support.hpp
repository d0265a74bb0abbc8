// Helpers for the parser tests: parse a whole buffer, or feed it a byte
// at a time, and report the head or the ParseError status.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include <corio/http/parser.hpp>

namespace corio_http_test {

using namespace corio::http;

// What parsing a buffer came to: the head's length (0: incomplete) and
// the head, or the status of the ParseError thrown.
template <class Head>
struct Outcome {
  std::size_t length = 0;
  Head head;
  int error = 0;
};

template <class Parser, class Head>
Outcome<Head> parse_whole(std::string_view text, const Limits& limits = {}) {
  Outcome<Head> o;
  Parser p(limits);
  try {
    o.length = p.parse(text, o.head);
  } catch (const ParseError& e) {
    o.error = e.status();
  }
  return o;
}

// Grows the buffer a byte at a time, as a slow peer would.
template <class Parser, class Head>
Outcome<Head> parse_bytewise(std::string_view text, const Limits& limits = {}) {
  Outcome<Head> o;
  Parser p(limits);
  try {
    for (std::size_t n = 1; n <= text.size() && o.length == 0; ++n) {
      o.length = p.parse(text.substr(0, n), o.head);
    }
  } catch (const ParseError& e) {
    o.error = e.status();
  }
  return o;
}

inline Outcome<RequestHead> request(std::string_view text, const Limits& limits = {}) {
  return parse_whole<RequestParser, RequestHead>(text, limits);
}
inline Outcome<ResponseHead> response(std::string_view text, const Limits& limits = {}) {
  return parse_whole<ResponseParser, ResponseHead>(text, limits);
}

// The status a request head is refused with (0: accepted or incomplete).
inline int request_error(std::string_view text, const Limits& limits = {}) {
  return request(text, limits).error;
}
inline int response_error(std::string_view text, const Limits& limits = {}) {
  return response(text, limits).error;
}

inline bool same_fields(const Headers& a, const Headers& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

}  // namespace corio_http_test
