/// \file
/// corio::http::ClientResponse: what ClientSession's requests return
/// (aiohttp's ClientResponse): the status line and headers at once, the body
/// when asked for.
///
/// <!-- doc: body (corio::http::ClientSession& session, Sink& out) -->
///     corio::http::ClientResponse r = co_await session.get("http://example.org/");
///     int status = r.status();                // 200
///     std::string page = co_await r.text();
///
///     // a large download, a piece at a time, never whole in memory:
///     for (std::string piece; !(piece = co_await r.read_chunk()).empty();) out.write(piece);
///
/// The body is read from the connection only as asked; gzip and deflate
/// bodies come decoded (ClientOptions::auto_decompress). The connection goes
/// back to the session's pool once the body's end has been read; release(),
/// or destroying the response, with body left unread closes it instead.
///
/// Suspends: read(), text(), json(), read_chunk() until the body's bytes
/// arrive. Resumed by: the loop (socket readiness, the read timeout).
/// Errors: ClientPayloadError for a body cut short (short of its
/// Content-Length, chunked without its last chunk, over TLS ended without
/// close_notify, even one read until close), broken chunked framing or
/// corrupt compression (aiohttp's TransferEncodingError and
/// ContentLengthError are ClientPayloadErrors too); TimeoutError past the
/// request's total or sock_read timeout; after any of them the connection is
/// closed.
/// UnicodeDecodeError (a ClientPayloadError) when text() cannot decode the
/// body's charset; the body was whole, so its connection is pooled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/request.hpp>
#include <corio/http/url.hpp>

namespace corio::http {

namespace detail {
class ResponseBody;
}

/// read(), text() and json() refuse a larger body (ClientPayloadError)
/// unless given another bound: a whole body is held in memory.
inline constexpr std::size_t kDefaultReadLimit = 16 * 1024 * 1024;
/// read_chunk()'s default bound on one piece.
inline constexpr std::size_t kDefaultChunkSize = 64 * 1024;

/// A redirect the request followed (aiohttp keeps the responses; their
/// status and URL are what is asked of them).
struct Redirect {
  int status;  ///< the redirect's status (301, 302, 303, 307, 308)
  Url url;  ///< the URL that answered with the redirect
  std::string location;  ///< its Location field, as sent
};

/// A response to a ClientSession request: its head now, its body on demand.
class ClientResponse {
 public:
  /// Made by the session once the response head is read; body reads the rest.
  ClientResponse(ResponseHead head, std::string method, Url url, std::vector<Redirect> history,
                 std::unique_ptr<detail::ResponseBody> body);
  ClientResponse(ClientResponse&&) noexcept;  ///< the body and its connection move along
  ClientResponse& operator=(ClientResponse&&) noexcept;  ///< releases this one's first
  ~ClientResponse();

  int status() const noexcept { return head_.status; }  ///< the status code
  const std::string& reason() const noexcept { return head_.reason; }  ///< the reason phrase, as sent
  int version_minor() const noexcept { return head_.version_minor; }  ///< 1 for HTTP/1.1, 0 for HTTP/1.0
  /// The version that answered, as aiohttp's response.version: {1, 1}, {1, 0},
  /// or {2, 0} for HTTP/2 (ClientOptions::http2).
  HttpVersion version() const noexcept;
  const Headers& headers() const noexcept { return head_.headers; }  ///< the response's header block
  const std::string& method() const noexcept { return method_; }  ///< the request's method

  /// The URL that gave this response: the last one after redirects.
  const Url& url() const noexcept { return url_; }
  const std::vector<Redirect>& history() const noexcept { return history_; }  ///< redirects followed, in order
  bool ok() const noexcept { return head_.status < 400; }  ///< whether the status is below 400
  /// ClientResponseError for a 4xx or 5xx status.
  void raise_for_status() const;
  /// The Content-Type's media type ("text/html"), without parameters.
  std::string_view content_type() const noexcept;
  /// The Content-Type's charset parameter as sent (aiohttp's charset), for
  /// whoever decodes read_chunk()'s pieces; nullopt when there is none.
  std::optional<std::string> charset() const;
  /// The Content-Length field's value; nullopt when there is none.
  std::optional<std::uint64_t> content_length() const noexcept;

  /// The whole (decoded) body; ClientPayloadError if it is over max_size.
  Coro<std::string> read(std::size_t max_size = kDefaultReadLimit);
  /// The body as UTF-8 text (aiohttp's text(encoding)): decoded from
  /// `encoding` when given, else from the Content-Type's charset, else taken
  /// as UTF-8. Bodies in UTF-8 or US-ASCII come as they are, unvalidated
  /// (a copy and a pass saved on the common case); any other charset glibc's
  /// iconv knows (ISO-8859-*, windows-125x, UTF-16 with a BOM, ...) is
  /// converted; else UnicodeDecodeError.
  Coro<std::string> text(std::optional<std::string> encoding = std::nullopt,
                         std::size_t max_size = kDefaultReadLimit);
  /// The body parsed as JSON, whatever the Content-Type (JsonError, json.hpp,
  /// if it is not JSON or nests deeper than JsonLimits::max_depth); decoded
  /// by its charset first, as text() does (aiohttp's json() too).
  Coro<nlohmann::json> json(std::size_t max_size = kDefaultReadLimit);
  /// The next 1..max bytes of the body; "" at its end. Memory stays bounded
  /// by max (plus the connection's read buffer) whatever the body's size.
  Coro<std::string> read_chunk(std::size_t max = kDefaultChunkSize);
  /// Done with the body (aiohttp's release()): unread body closes the
  /// connection; a fully read one is already back in the pool. Idempotent.
  void release() noexcept;

 private:
  ResponseHead head_;
  std::string method_;
  Url url_;
  std::vector<Redirect> history_;
  std::unique_ptr<detail::ResponseBody> body_;
};

}  // namespace corio::http
