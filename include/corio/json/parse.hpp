/// \file
/// corio::http::parse_json: JSON from a peer, parsed within limits.
///
/// <!-- doc: body (std::string_view body) -->
///     nlohmann::json v = corio::http::parse_json(body);          // JsonError if not
///     nlohmann::json w = corio::http::parse_json(body, {.max_depth = 64});
///
/// Every JSON the library takes from outside (request bodies,
/// ClientResponse::json(), JSON-RPC messages) goes through here. The
/// nesting depth is bounded because nlohmann::json copies, compares and
/// serializes values recursively: a value nested 100,000 deep parses (the
/// parser keeps its own stack) and then overflows the C++ stack at the first
/// copy. The depth is counted by a flat scan before nlohmann's parser runs,
/// so nothing here recurses over the input either.
///
/// Stricter than nlohmann::json::parse() in one way: a NUL byte anywhere is
/// an error (nlohmann stops at it and accepts "{}\0garbage"); raw NUL is
/// never valid JSON, inside a string or out.
///
/// JsonError's what() is corio's own text ("nested deeper than 256 levels",
/// "syntax error at byte 17"), fit to send back to the peer: no message of
/// the JSON library, whose wording and internals are not the peer's business.
///
/// The json layer's names stay in corio::http, where they were first: users
/// specialize corio::http::Fields<T>, and a specialization cannot be declared
/// through a using-declaration, so a new namespace would break their code.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace corio::http {

/// The bounds parse_json() holds a peer's JSON to.
struct JsonLimits {
  std::size_t max_depth = 256;               ///< arrays and objects, one inside another
  std::size_t max_size = 64 * 1024 * 1024;   ///< bytes of text
};

/// The JSON was not accepted; what() is corio's text, fit to send to the peer.
class JsonError : public std::runtime_error {
 public:
  /// Why: not JSON, nested deeper than max_depth, longer than max_size.
  enum class Kind { syntax, too_deep, too_large };
  /// An error of kind with message as its what(), found at byte offset `at`.
  JsonError(Kind kind, const std::string& message, std::size_t at = 0)
      : std::runtime_error(message), kind_(kind), offset_(at) {}
  /// Why the JSON was not accepted.
  Kind kind() const noexcept { return kind_; }
  /// A syntax error's byte offset in the text, where the parser stopped (0
  /// for the text's size): Python's JSONDecodeError.pos for most errors
  /// (FastAPI's 422 json_invalid loc), where Python points at the start of
  /// a broken string or literal instead.
  std::size_t offset() const noexcept { return offset_; }

 private:
  Kind kind_;
  std::size_t offset_;
};

/// text parsed as JSON within limits; JsonError if it is not JSON or is
/// over a limit.
nlohmann::json parse_json(std::string_view text, const JsonLimits& limits = {});

}  // namespace corio::http
