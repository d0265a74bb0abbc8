/// \file
/// corio::http::Response: what a server handler returns (aiohttp's
/// web.Response). HTTPException (http_exception.hpp, included here) is the
/// error a handler throws to answer with a status instead.
///
/// <!-- doc: fragment in corio::http -->
///     Coro<Response> answer(int what, Response::Producer produce) {
///       if (what == 0) co_return Response::text("Hello, World!");
///       if (what == 1) co_return Response::json(nlohmann::json{{"id", 7}}, 201);
///       if (what == 2) co_return Response::file("/srv/www/index.html");   // sendfile(2) on plain TCP
///       if (what == 3) co_return Response::stream(produce);                // chunked, piece by piece
///       throw HTTPException(404, "no such user");
///     }
///
/// The server frames the body itself: Content-Length for a body or a file,
/// chunked for a stream (until-close for an HTTP/1.0 peer). Date, Server and
/// Connection are the server's too; a handler sets everything else.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/http_exception.hpp>

namespace corio::http {

/// The standard reason phrase of a status ("Not Found"), "Unknown" if none.
std::string_view reason_phrase(int status) noexcept;

/// Where a streaming response's producer writes its pieces.
///
/// Suspends: write(), while the connection's write buffer is above its
/// high-water mark. Resumed by: the connection's flusher as the peer reads.
/// A peer that went away makes write() throw std::system_error.
class StreamResponseWriter {
 public:
  virtual ~StreamResponseWriter() = default;
  /// Sends piece as the body's next bytes (one chunk when chunked).
  virtual Coro<void> write(std::string_view piece) = 0;
};

/// A handler's answer: status, headers, and a body, a file or a stream.
class Response {
 public:
  /// Writes a streaming body's pieces, then returns.
  using Producer = std::function<Coro<void>(StreamResponseWriter&)>;

  explicit Response(int status = 200) : status(status) {}  ///< no headers, no body

  /// body with content_type.
  static Response text(std::string body, int status = 200,
                       std::string_view content_type = "text/plain; charset=utf-8");
  /// value serialized, as application/json.
  static Response json(const nlohmann::json& value, int status = 200);
  /// The file at path, its type from its extension. Opened when the response
  /// is sent: a missing file is a 404 then, an unreadable one a 403. With
  /// status 200 it carries ETag and Last-Modified and answers conditional
  /// requests (304, 412) and Range (206, 416): docs/http-server.md.
  static Response file(std::string path);
  /// A body of unknown length, written by producer as the server sends it.
  /// The producer (and what it captures) lives until it is done.
  static Response stream(Producer producer, int status = 200,
                         std::string_view content_type = "application/octet-stream");
  /// The answer an HTTPException stands for: its status, body and headers.
  static Response from(const HTTPException& error);

  int status;        ///< the status code
  Headers headers;   ///< sent as they are, with the server's framing fields added
  std::string body;  ///< the body, unless file_path or producer is set
  std::string file_path;  ///< set by file(): the body comes from this file
  Producer producer;      ///< set by stream(): the body comes from this coroutine
};

}  // namespace corio::http
