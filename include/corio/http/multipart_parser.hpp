/// \file
/// corio::http::MultipartParser: an incremental multipart body parser
/// (RFC 2046 section 5.1, as RFC 7578 multipart/form-data uses it), the
/// push-style core under MultipartReader (multipart.hpp) and its fuzz
/// target. Pure: bytes in, events out, no I/O.
///
/// <!-- doc: body in corio::http (std::string_view boundary, std::string_view buffered) -->
///     MultipartParser p(boundary);
///     MultipartParser::Step s = p.parse(buffered);   // consume s.used bytes
///     // s.event: part (p.headers() hold its header block), data (s.data,
///     // a view into the input: copy it before consuming), part_end, done,
///     // or need_more (give it the same unconsumed bytes plus more).
///
/// A part's body is handed out as it arrives, never gathered: only the
/// bytes that might begin a boundary (its length) are held back. The
/// preamble and the epilogue are skipped. Errors are MultipartError: 400
/// for a body that is not multipart (no boundary line, a part head without
/// its blank line, a bad header line, cut short), 413 past a limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <corio/http/headers.hpp>
#include <corio/http/http_exception.hpp>

namespace corio::http {

/// Bounds on a multipart body; past one, MultipartError(413).
struct MultipartLimits {
  std::size_t max_parts = 1000;  ///< parts in the body
  std::size_t max_part_head = 8 * 1024;  ///< one part's header block, its blank line included
  std::optional<std::uint64_t> max_part_size;  ///< one part's body; none: only the total's

  /// The whole multipart body; none: only the server's Limits::max_body.
  std::optional<std::uint64_t> max_total;
};

/// An HTTPException, so that a handler that lets it through answers 400/413.
class MultipartError : public HTTPException {
 public:
  using HTTPException::HTTPException;
};

/// A multipart body parsed incrementally: bytes in, one event per parse().
class MultipartParser {
 public:
  /// What parse() found: more input needed, a part's head (headers()), body
  /// bytes (Step::data), a part's end, the close delimiter.
  enum class Event { need_more, part, data, part_end, done };
  /// One parse() result: the event and how much of the input it used.
  struct Step {
    Event event = Event::need_more;  ///< what was found
    std::size_t used = 0;   ///< bytes of the input consumed (need_more may consume some)
    std::string_view data;  ///< Event::data: a part's body bytes, inside the input
  };

  /// ValueError unless boundary is 1 to 70 characters of RFC 2046's bchars.
  explicit MultipartParser(std::string_view boundary, MultipartLimits limits = {});

  /// The next event from in (the unconsumed input); MultipartError if the
  /// body is malformed or over a limit.
  Step parse(std::string_view in);
  /// At the end of the input: MultipartError unless the close delimiter came.
  void finish() const;

  const Headers& headers() const noexcept { return headers_; }  ///< the current part's header block
  bool done() const noexcept { return state_ == State::epilogue; }  ///< the close delimiter came
  std::size_t parts() const noexcept { return parts_; }  ///< parts begun so far

  /// Whether text is a valid boundary (RFC 2046 section 5.1.1).
  static bool valid_boundary(std::string_view text) noexcept;

 private:
  enum class State { preamble, delimiter_line, head, body, epilogue };
  Step preamble(std::string_view in);
  Step delimiter_line(std::string_view in);
  Step head(std::string_view in);
  Step body(std::string_view in);
  void parse_head(std::string_view block);
  void count(std::size_t used);

  std::string delimiter_;  ///< "\r\n--" + boundary
  MultipartLimits limits_;
  State state_ = State::preamble;
  bool at_start_ = true;  ///< nothing consumed: the first boundary may lack its CRLF
  Headers headers_;
  std::size_t parts_ = 0;
  std::uint64_t part_bytes_ = 0;
  std::uint64_t total_ = 0;
};

}  // namespace corio::http
