// parse_json (see json.hpp): a flat pre-scan for depth and NUL bytes, then
// nlohmann's parser, whose errors are rewritten in corio's words.
#include <corio/json/parse.hpp>

#include <cstring>

#include <nlohmann/json.hpp>

namespace corio::http {

namespace {

// The byte at which the text first nests deeper than max_depth, or a NUL
// appears; npos if neither. Brackets inside strings do not count. The
// text need not be valid JSON: the parser judges that afterwards, so a
// bracket the scan miscounts in invalid text only changes which error is
// reported, never whether there is one.
struct ScanResult {
  enum class Stop { none, too_deep, nul } stop = Stop::none;
  std::size_t at = 0;
};

ScanResult scan(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') return {ScanResult::Stop::nul, i};
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped byte cannot end the string (a NUL there is caught by the parser)
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return {ScanResult::Stop::too_deep, i};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_size) {
    throw JsonError(JsonError::Kind::too_large,
                    "JSON text over the size limit of " + std::to_string(limits.max_size) + " bytes");
  }
  const ScanResult s = scan(text, limits.max_depth);
  if (s.stop == ScanResult::Stop::too_deep) {
    throw JsonError(JsonError::Kind::too_deep, "JSON nested deeper than " +
                                                   std::to_string(limits.max_depth) + " levels");
  }
  if (s.stop == ScanResult::Stop::nul) {
    throw JsonError(JsonError::Kind::syntax, "a NUL byte at byte " + std::to_string(s.at), s.at);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1: the byte the parser stopped at.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw JsonError(JsonError::Kind::syntax, "syntax error at byte " + std::to_string(at), at);
  } catch (const nlohmann::json::exception&) {
    // out_of_range: a number too large for a double ("1e9999").
    throw JsonError(JsonError::Kind::syntax, "a number out of range");
  }
}

}  // namespace corio::http
