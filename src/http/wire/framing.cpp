// Message framing and persistence (RFC 9112 sections 6.3 and 9.3): which
// of none / Content-Length / chunked / until-close delimits a body, and
// whether the connection outlives the message.
//
// Strict on every shape two parsers could read two ways: Content-Length
// together with Transfer-Encoding, Content-Length repeated (even with the
// same value, as nginx does; "5, 5" likewise), Content-Length that is not
// plain digits or overflows, and Transfer-Encoding other than one
// "chunked" (400 when chunked is not last; 501 for a coding before it:
// corio decodes no other transfer coding).
#include <optional>

#include <corio/http/parser.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http {

namespace {

std::optional<std::uint64_t> content_length(const Headers& headers) {
  std::optional<std::string_view> value;
  for (const Header& h : headers) {
    if (!iequals(h.name, "content-length")) continue;
    if (value) throw ParseError(400, "more than one Content-Length field");
    value = h.value;
  }
  if (!value) return std::nullopt;
  if (value->empty()) throw ParseError(400, "an empty Content-Length");
  std::uint64_t n = 0;
  for (char c : *value) {
    if (c < '0' || c > '9') throw ParseError(400, "Content-Length is not a decimal number");
    std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (n > (UINT64_MAX - digit) / 10) throw ParseError(400, "Content-Length overflows");
    n = n * 10 + digit;
  }
  return n;
}

// Whether Transfer-Encoding is there; throws unless it says exactly
// "chunked". RFC 9112 section 6.3: chunked not last (or missing) leaves the
// length unknowable, 400; chunked last after another coding is a coding we
// do not decode, 501.
bool transfer_encoding_chunked(const Headers& headers) {
  bool present = false, last_chunked = false;
  std::size_t chunked = 0;
  std::string_view other;  // the first coding that is not chunked
  for (const Header& h : headers) {
    if (!iequals(h.name, "transfer-encoding")) continue;
    bool any = false;
    syntax::for_each_element(h.value, [&](std::string_view coding) {
      any = true;
      last_chunked = iequals(coding, "chunked");
      if (last_chunked) {
        ++chunked;
      } else if (other.empty()) {
        other = coding;
      }
    });
    if (!any) throw ParseError(400, "an empty Transfer-Encoding");
    present = true;
  }
  if (!present) return false;
  if (!last_chunked) throw ParseError(400, "chunked is not the final transfer coding");
  if (chunked > 1) throw ParseError(400, "chunked applied more than once");
  if (!other.empty()) {
    throw ParseError(501, "Transfer-Encoding " + std::string(other) + " is not supported");
  }
  return true;
}

// The framing both kinds of message share once the special cases are out.
BodyFraming framing_from_fields(const Headers& headers, BodyFraming::Kind otherwise) {
  bool chunked = transfer_encoding_chunked(headers);
  std::optional<std::uint64_t> length = content_length(headers);
  if (chunked && length) throw ParseError(400, "both Content-Length and Transfer-Encoding");
  if (chunked) return {BodyFraming::Kind::chunked, 0};
  if (length) return {BodyFraming::Kind::length, *length};
  return {otherwise, 0};
}

}  // namespace

BodyFraming request_framing(const RequestHead& head) {
  // RFC 9110 section 9.3.6: a CONNECT request's content has no meaning; what
  // follows its head is the tunnel, however its fields look.
  if (head.method == "CONNECT") return {BodyFraming::Kind::none, 0};
  // RFC 9112 section 6.1: in HTTP/1.0, Transfer-Encoding means faulty framing.
  if (head.version_minor == 0 && head.headers.contains("transfer-encoding")) {
    throw ParseError(400, "Transfer-Encoding in an HTTP/1.0 request");
  }
  return framing_from_fields(head.headers, BodyFraming::Kind::none);
}

BodyFraming response_framing(const ResponseHead& head, std::string_view request_method) {
  bool no_body = request_method == "HEAD" || head.status < 200 || head.status == 204 ||
                 head.status == 304 || (request_method == "CONNECT" && head.status / 100 == 2);
  if (no_body) return {BodyFraming::Kind::none, 0};
  return framing_from_fields(head.headers, BodyFraming::Kind::until_close);
}

bool is_upgrade(const RequestHead& head) noexcept {
  return head.method == "CONNECT" ||
         (head.headers.has_token("connection", "upgrade") && head.headers.contains("upgrade"));
}

bool is_upgrade(const ResponseHead& head, std::string_view request_method) noexcept {
  return head.status == 101 || (request_method == "CONNECT" && head.status / 100 == 2);
}

bool keep_alive(int version_minor, const Headers& headers) noexcept {
  if (headers.has_token("connection", "close")) return false;
  return version_minor >= 1 || headers.has_token("connection", "keep-alive");
}

}  // namespace corio::http
