// Content-Type charsets and their conversion to UTF-8 (see charset.hpp).
#include "http/wire/charset.hpp"

#include <iconv.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <type_traits>

#include <corio/http/client_errors.hpp>
#include <corio/http/headers.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http::detail {

namespace {

// A parameter's value after its "=": a quoted-string unescaped (RFC 9110
// section 5.6.4), else everything up to the next ";" trimmed. `i` ends past
// the value; whatever follows a closing quote, up to ";", is ignored.
std::string parameter_value(std::string_view v, std::size_t& i) {
  while (i < v.size() && syntax::is_ows(v[i])) ++i;
  if (i == v.size() || v[i] != '"') {
    const std::size_t end = std::min(v.find(';', i), v.size());
    std::string value(syntax::trim_ows(v.substr(i, end - i)));
    i = end;
    return value;
  }
  std::string value;
  for (++i; i < v.size() && v[i] != '"'; ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    value += v[i];
  }
  return value;
}

using Iconv = std::unique_ptr<std::remove_pointer_t<iconv_t>, int (*)(iconv_t)>;

Iconv open_to_utf8(std::string_view charset) {
  const std::string name(charset);
  iconv_t cd = syntax::is_token(charset) ? ::iconv_open("UTF-8", name.c_str())
                                         : reinterpret_cast<iconv_t>(-1);
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    throw UnicodeDecodeError("unknown charset \"" + name + "\" for the response body", name,
                             std::nullopt);
  }
  return Iconv(cd, &::iconv_close);
}

[[noreturn]] void throw_invalid(std::string_view charset, std::size_t offset, int error) {
  const std::string name(charset);
  const char* what = error == EINVAL ? "a sequence cut short" : "an invalid byte sequence";
  throw UnicodeDecodeError("cannot decode the response body as " + name + ": " + what +
                               " at offset " + std::to_string(offset),
                           name, offset);
}

}  // namespace

std::optional<std::string> content_type_charset(std::string_view content_type) {
  const std::string_view v = content_type;
  // The media type holds no quotes, so its end is the first ";".
  std::size_t i = v.find(';');
  while (i < v.size()) {
    const std::size_t name_start = ++i;
    while (i < v.size() && v[i] != '=' && v[i] != ';') ++i;
    if (i == v.size() || v[i] == ';') continue;
    const std::string_view name = syntax::trim_ows(v.substr(name_start, i - name_start));
    std::string value = parameter_value(v, ++i);
    if (iequals(name, "charset")) {
      if (value.empty()) return std::nullopt;
      return value;
    }
    i = v.find(';', i);
  }
  return std::nullopt;
}

bool is_utf8_compatible(std::string_view charset) noexcept {
  for (std::string_view name : {"utf-8", "utf8", "us-ascii", "ascii"}) {
    if (iequals(charset, name)) return true;
  }
  return false;
}

std::string to_utf8(std::string body, std::string_view charset) {
  if (is_utf8_compatible(charset)) return body;
  Iconv cd = open_to_utf8(charset);
  // Latin-1 grows to at most twice its size; other charsets may need more,
  // which E2BIG asks for.
  std::string out(body.size() * 2 + 16, '\0');
  char* in = body.data();
  std::size_t in_left = body.size();
  std::size_t used = 0;
  for (;;) {
    char* to = out.data() + used;
    std::size_t to_left = out.size() - used;
    // Once the input is used up, a call without input ends any shift state.
    const bool flushing = in_left == 0;
    const std::size_t rc = flushing ? ::iconv(cd.get(), nullptr, nullptr, &to, &to_left)
                                    : ::iconv(cd.get(), &in, &in_left, &to, &to_left);
    used = out.size() - to_left;
    if (rc != static_cast<std::size_t>(-1)) {
      if (flushing) break;
    } else if (errno == E2BIG) {
      out.resize(out.size() * 2);
    } else {
      throw_invalid(charset, static_cast<std::size_t>(in - body.data()), errno);
    }
  }
  out.resize(used);
  return out;
}

}  // namespace corio::http::detail
