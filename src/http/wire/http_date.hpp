// HTTP dates (RFC 9110 section 5.6.7): written as IMF-fixdate, read in
// all three forms a recipient must accept. By hand rather than with
// strftime/strptime: the day and month names must be English whatever the
// process locale, and parsing must not depend on it either.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace corio::http::detail {

inline constexpr std::size_t kHttpDateSize = 29;  // "Sun, 06 Nov 1994 08:49:37 GMT"

// Writes t as IMF-fixdate into out (kHttpDateSize characters, no NUL).
void format_http_date(std::time_t t, char* out) noexcept;
std::string http_date(std::time_t t);

// IMF-fixdate, RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") or asctime
// ("Sun Nov  6 08:49:37 1994"); nullopt for anything else. The weekday is
// not checked against the date (nginx does not either).
std::optional<std::time_t> parse_http_date(std::string_view text) noexcept;

}  // namespace corio::http::detail
