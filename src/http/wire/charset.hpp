// The charset of a text body (ClientResponse::text): the Content-Type's
// charset parameter, and the body's conversion to UTF-8. Internal to the
// http layer.
//
// The conversion is glibc's iconv: it already knows every charset a server
// is likely to name (ISO-8859-*, windows-125x, UTF-16/32 with their BOMs,
// Shift_JIS, GB18030, ...), so no ICU or table of our own is needed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace corio::http::detail {

// The charset parameter of a Content-Type value (RFC 9110 sections 5.6.6
// and 8.3: `type/subtype *( OWS ";" OWS name "=" value )`): the name
// matched case-insensitively, the value a token or a quoted-string
// (unescaped), whitespace around either ignored. A parameter without "=" is
// skipped; nullopt when there is no charset or it is empty.
std::optional<std::string> content_type_charset(std::string_view content_type);

// UTF-8 and US-ASCII (their usual names, any case): a body in them is
// returned as it came. It is not validated, as before text() decoded at
// all: checking would cost a pass over every body for the rare broken one.
bool is_utf8_compatible(std::string_view charset) noexcept;

// `body`, in `charset`, as UTF-8. Throws UnicodeDecodeError
// (client_errors.hpp) for a charset iconv does not know (or that is not
// a token: iconv would read "//IGNORE" in a name as an instruction), and
// for bytes invalid in it or cut short at the end, with their offset.
std::string to_utf8(std::string body, std::string_view charset);

}  // namespace corio::http::detail
