/// \file
/// The HTTP/1.1 message parser (RFC 9112), one for both sides: the server
/// parses requests with it, the client responses. No socket in sight: it
/// works on bytes the caller buffered (StreamReader::buffered()), so it is
/// fuzzed and tested on strings.
///
/// <!-- doc: body in corio::http (StreamReader reader, Limits limits) -->
///     RequestParser p(limits);
///     RequestHead head;
///     std::size_t n;
///     while ((n = p.parse(reader.buffered(), head)) == 0) {
///       if (co_await reader.fill_buffer() == 0) co_return;  // EOF mid-head
///     }
///     reader.consume(n);
///     BodyDecoder body(request_framing(head), limits);
///
/// Strict where leniency lets a request be read two ways (request
/// smuggling): CRLF line ends only (a bare CR or a bare LF is an error),
/// no obs-fold, no whitespace between a field name and its colon, no
/// Content-Length together with Transfer-Encoding, no repeated differing
/// Content-Length, chunked last in Transfer-Encoding, chunk sizes in hex
/// digits only (no sign, no 0x, no overflow), chunk extensions per their
/// grammar, a Host that is a host[:port] authority, and a request target in
/// the form its method allows (RFC 9112 section 3.2). Up to 16 empty lines
/// (CRLF or a bare LF) before a start line are skipped, as RFC 9112 section
/// 2.2 asks of servers and browsers do for responses. Every error is a ParseError
/// carrying the status a server answers with; a client throws it.
///
/// Limits are checked on the bytes seen so far, so an endless or slow head
/// is refused at the limit, not when (if ever) it completes; each call scans
/// only the bytes new since the last one (a client sending one byte at a
/// time costs O(n), not O(n^2)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <corio/http/headers.hpp>

namespace corio::http {

/// The bounds the parsers hold a peer's message to.
struct Limits {
  std::size_t max_start_line = 8 * 1024;     ///< request or status line; over it: 414 / 400
  std::size_t max_head_bytes = 64 * 1024;    ///< start line + fields + blank line; over it: 431
  std::size_t max_headers = 100;             ///< field lines (trailers too); over it: 431
  std::uint64_t max_body = 16 * 1024 * 1024;  ///< decoded body bytes; over it: 413
  std::size_t max_chunk_line = 4 * 1024;     ///< chunk size + extensions; over it: 400
};

/// A message that cannot be parsed, or is over a limit. status() is the
/// response a server sends before it closes the connection: 400 (malformed),
/// 413 (body), 414 (request line), 431 (header fields), 501 (a
/// Transfer-Encoding other than chunked), 505 (not HTTP/1.x).
class ParseError : public std::runtime_error {
 public:
  /// An error answered with status, what as what().
  ParseError(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const noexcept { return status_; }  ///< the status a server answers with

 private:
  int status_;
};

/// A request's start line and header fields.
struct RequestHead {
  std::string method;  ///< a token, case kept ("GET")
  std::string target;  ///< origin-form "/p?q", absolute-form, authority-form or "*", as sent
  int version_minor = 1;  ///< 1 for HTTP/1.1, 0 for HTTP/1.0
  Headers headers;        ///< values without leading/trailing whitespace
};

/// A response's status line and header fields.
struct ResponseHead {
  int status = 0;  ///< 100..999
  std::string reason;     ///< the reason phrase, as sent (may be empty)
  int version_minor = 1;  ///< 1 for HTTP/1.1, 0 for HTTP/1.0
  Headers headers;        ///< values without leading/trailing whitespace
};

namespace detail {
// How far a head parser got in the bytes it was given: each line is
// checked once, when its LF arrives, and the bytes before `scanned` are
// never searched again (the O(n) promise).
struct HeadScan {
  std::size_t scanned = 0;     // bytes of buf searched for line ends
  std::size_t line_start = 0;  // where the line being received starts
  std::size_t head_start = 0;  // where the start line starts (after ignored empty lines)
  std::size_t fields = 0;      // field lines so far
  std::size_t empty_lines = 0;  // skipped before the start line
  bool in_start_line = true;
};
}  // namespace detail

/// The request head parser (see ResponseParser for the response's).
///
/// Finds and parses one message head at the front of a buffer that grows
/// between calls (the same bytes, plus more). Returns the head's length,
/// through the blank line, once it is complete, and fills `out`; 0 while
/// more bytes are needed. Throws ParseError as soon as the bytes seen are
/// wrong or over a limit. After a complete head (or to drop a partial one)
/// reset() readies it for the next message on the connection.
class RequestParser {
 public:
  explicit RequestParser(const Limits& limits = {}) : limits_(limits) {}  ///< within limits
  /// The head's length once complete (out filled), else 0; ParseError.
  std::size_t parse(std::string_view buf, RequestHead& out);
  void reset() noexcept { scan_ = {}; }  ///< ready for the next message

 private:
  Limits limits_;
  detail::HeadScan scan_;
};

/// The response head parser, as RequestParser is the request's.
class ResponseParser {
 public:
  explicit ResponseParser(const Limits& limits = {}) : limits_(limits) {}  ///< within limits
  /// The head's length once complete (out filled), else 0; ParseError.
  std::size_t parse(std::string_view buf, ResponseHead& out);
  void reset() noexcept { scan_ = {}; }  ///< ready for the next message

 private:
  Limits limits_;
  detail::HeadScan scan_;
};

/// How a message's body is delimited (RFC 9112 section 6.3).
/// (A scoped enum: an unscoped one's `length` would clash with the member.)
struct BodyFraming {
  /// No body, Content-Length, chunked, or until the connection closes.
  enum class Kind { none, length, chunked, until_close };
  Kind kind = Kind::none;  ///< how the body ends
  std::uint64_t length = 0;  ///< for Kind::length
};

/// A request's framing: chunked, Content-Length, or none (never until_close;
/// always none for CONNECT, whose bytes after the head are the tunnel's).
/// Throws ParseError for the smuggling shapes and for Transfer-Encoding other
/// than chunked (501).
BodyFraming request_framing(const RequestHead& head);
/// A response's framing, which depends on the request: none for HEAD, for
/// 1xx, 204 and 304, and for a 2xx answer to CONNECT; until_close when
/// neither Content-Length nor chunked says otherwise.
BodyFraming response_framing(const ResponseHead& head, std::string_view request_method);
/// Whether the connection leaves HTTP after this message (what llhttp calls
/// an upgrade): a request with "Connection: upgrade" and an Upgrade field
/// (after its body, if it has one; the server may still decline and answer
/// normally), or any CONNECT (at once: its bytes after the head are the
/// tunnel's, it has no body); a response 101, or a 2xx to CONNECT. The bytes
/// after such a head are not HTTP and are not for these parsers.
bool is_upgrade(const RequestHead& head) noexcept;
/// The same for a response, which depends on the request's method.
bool is_upgrade(const ResponseHead& head, std::string_view request_method) noexcept;
/// Whether the connection stays open after this message: HTTP/1.1 unless
/// "Connection: close"; HTTP/1.0 only with "Connection: keep-alive".
bool keep_alive(int version_minor, const Headers& headers) noexcept;

/// Decodes a body incrementally, in whatever pieces it arrives.
///
/// <!-- doc: body in corio::http (StreamReader reader, BodyDecoder& dec, std::string& out) -->
///     while (true) {
///       std::size_t used = dec.decode(reader.buffered(), out);  // appends to out
///       reader.consume(used);
///       if (dec.done()) break;
///       if (used == 0 && co_await reader.fill_buffer() == 0) break;  // EOF: cut short
///     }
///
/// For chunked bodies the chunk framing and the trailer section are
/// removed (trailers() has the fields). The decoded size is checked against
/// Limits::max_body as it grows (413).
class BodyDecoder {
 public:
  /// A decoder of a body framed as framing, within limits.max_body.
  explicit BodyDecoder(BodyFraming framing, const Limits& limits = {});
  /// Uses bytes from the front of `in`, appends the body bytes among them to
  /// `out`, returns how many bytes of `in` it used. Stops at the end of the
  /// body: the rest of `in` belongs to the next message.
  std::size_t decode(std::string_view in, std::string& out);
  /// The connection ended: the end of an until_close body; for any other
  /// unfinished body a ParseError ("truncated body").
  void finish_at_eof();
  bool done() const noexcept;  ///< whether the body's end was reached
  std::uint64_t body_bytes() const noexcept { return decoded_; }  ///< decoded so far
  const Headers& trailers() const noexcept { return trailers_; }  ///< a chunked body's, once done

 private:
  enum class State { data, size_line, data_end, trailers, done };
  /// Each takes what it can from the front of `in` and says how much it took.
  std::size_t take_data(std::string_view in, std::string& out);
  std::size_t take_chunk_end(std::string_view in);
  std::size_t take_line(std::string_view in);  ///< a chunk-size or trailer line
  void take_chunk_size(std::uint64_t size);
  void take_trailer(std::string_view line);

  BodyFraming framing_;
  Limits limits_;
  State state_;
  std::uint64_t remaining_ = 0;  ///< of the Content-Length body, or of this chunk
  std::uint64_t decoded_ = 0;
  std::size_t trailer_bytes_ = 0;
  std::size_t line_scanned_ = 0;  ///< of a chunk-size or trailer line not yet complete
  Headers trailers_;
};

}  // namespace corio::http
