/// \file
/// corio::http::HTTPException: the error a server handler (or middleware)
/// throws to answer with a status instead of a Response (aiohttp's
/// web.HTTPException, FastAPI's HTTPException): a status, a body of any type,
/// and headers.
///
/// <!-- doc: body (int what) -->
///     using corio::http::HTTPException;
///     if (what == 1) throw HTTPException(404, "no such user");                 // text/plain
///     if (what == 2) throw HTTPException::json(422, {{"detail", "bad name"}}); // application/json
///     throw HTTPException(401, "log in", corio::http::Headers{{"WWW-Authenticate", "Bearer"}});
///
/// The server turns it into the answer (through the error hook,
/// Server::on_error, when one is set) and keeps the connection. what() is
/// the body, so logs show what the peer was told.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include <corio/http/headers.hpp>

namespace corio::http {

/// An answer thrown: a status, a body with its Content-Type, and headers.
class HTTPException : public std::runtime_error {
 public:
  /// message is the body, as text/plain.
  HTTPException(int status, const std::string& message, Headers headers = {});

  /// A JSON body (application/json).
  static HTTPException json(int status, const nlohmann::json& body, Headers headers = {});
  /// Any body, with its Content-Type.
  static HTTPException with_body(int status, std::string body, std::string_view content_type,
                                 Headers headers = {});

  int status() const noexcept { return status_; }  ///< the answer's status
  const std::string& body() const noexcept { return body_; }  ///< the answer's body (also what())
  const std::string& content_type() const noexcept { return content_type_; }  ///< the body's type

  /// Sent with the answer (Allow for a 405, WWW-Authenticate, ...), whatever
  /// the error hook makes of the body.
  const Headers& headers() const noexcept { return headers_; }

 private:
  int status_;
  std::string body_;
  std::string content_type_ = "text/plain; charset=utf-8";
  Headers headers_;
};

}  // namespace corio::http
