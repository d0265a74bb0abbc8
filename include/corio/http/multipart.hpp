/// \file
/// corio::http::MultipartReader: a multipart/form-data request body
/// (RFC 7578), streamed to the handler part by part (aiohttp's
/// request.multipart()).
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> upload(Request& req) {
///       Sink sink;                                        // a file, say
///       std::map<std::string, std::string> fields;
///       MultipartReader form(req);                        // 415 unless multipart/form-data
///       while (std::optional<BodyPart> part = co_await form.next()) {
///         if (part->filename()) {
///           for (std::string piece; !(piece = co_await part->read_chunk()).empty();)
///             sink.write(piece);                          // never the whole file in memory
///         } else {
///           fields[std::string(part->name())] = co_await part->text();
///         }
///       }
///       co_return Response::text("ok");
///     }
///
/// Memory: the reader holds one piece of the request body (as the
/// connection reads it) plus a part head (MultipartLimits::max_part_head);
/// a part's body goes to the handler piece by piece. next() skips what is
/// left of the previous part unread. Errors are MultipartError (400 for a
/// malformed body, 413 past a limit), which a handler may let through.
///
/// Suspends: next() and the part reads, until the peer sent the bytes.
/// Resumed by: the loop. A part must not outlive its reader, nor the
/// reader the Request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/multipart_parser.hpp>
#include <corio/http/request.hpp>

namespace corio::http {

class MultipartReader;

/// One part: its headers, the name and filename of its Content-Disposition,
/// and its body as a stream. A copyable handle to the reader's state; once
/// next() moved past it, it reads as empty.
class BodyPart {
 public:
  const Headers& headers() const noexcept { return headers_; }  ///< the part's header block
  const std::string& name() const noexcept { return name_; }  ///< the Content-Disposition name; "" if none

  /// The Content-Disposition filename; nullopt for a field that is not a file.
  const std::optional<std::string>& filename() const noexcept { return filename_; }
  /// The part's Content-Type; "text/plain" when it has none (RFC 7578 section 4.4).
  std::string_view content_type() const noexcept;

  /// The next piece of the body; "" at its end.
  Coro<std::string> read_chunk();
  /// The whole body; MultipartError(413) past max bytes.
  Coro<std::string> read(std::size_t max = 1024 * 1024);
  /// read(), under the name aiohttp gives a text field's read.
  Coro<std::string> text(std::size_t max = 1024 * 1024) { return read(max); }

 private:
  friend class MultipartReader;
  BodyPart(MultipartReader& reader, std::size_t index, const Headers& headers);

  MultipartReader* reader_;
  std::size_t index_;  ///< which part of the reader's this is
  Headers headers_;
  std::string name_;
  std::optional<std::string> filename_;
};

/// A multipart/form-data request body, read part by part as it arrives.
class MultipartReader {
 public:
  /// HTTPException(415) unless the request is multipart/form-data, 400
  /// without a valid boundary.
  explicit MultipartReader(Request& req, MultipartLimits limits = {});
  MultipartReader(const MultipartReader&) = delete;
  MultipartReader& operator=(const MultipartReader&) = delete;

  /// The next part; nullopt after the last.
  Coro<std::optional<BodyPart>> next();

  /// The boundary parameter of a multipart Content-Type, if it has one.
  static std::optional<std::string> boundary(std::string_view content_type);

 private:
  friend class BodyPart;
  Coro<std::string> read_chunk(std::size_t index);
  Coro<void> fill();
  MultipartParser::Step step();

  Request& req_;
  MultipartParser parser_;
  std::string buf_;
  std::size_t pos_ = 0;  ///< buf_ before it is consumed
  std::size_t parts_ = 0;
  bool in_part_ = false;  ///< between part (the last one given out) and part_end
};

}  // namespace corio::http
