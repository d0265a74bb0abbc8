/// \file
/// The client's exceptions, with aiohttp's names and family tree:
///
/// <!-- doc: text -->
///     ClientError
///     ├── ClientConnectionError      connect refused, reset, server disconnected
///     │   └── ClientSSLError         TLS handshake or certificate refused
///     ├── ClientPayloadError         the body is cut short or malformed, or its gzip corrupt
///     │   └── UnicodeDecodeError     text() cannot decode the body's charset
///     ├── ClientResponseError        raise_for_status() on a 4xx/5xx
///     └── TooManyRedirects           more than max_redirects redirects
///
/// Besides these: corio::TimeoutError for any of the session's timeouts,
/// ParseError (parser.hpp) for a response that is not HTTP or over a limit,
/// ValueError for a bad URL. Each failure closes only its own connection.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace corio::http {

/// The base of the client's errors.
class ClientError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// code() keeps the OS error (ECONNREFUSED, ECONNRESET, ...) or the
/// SslError's code; an empty code when the server just closed.
class ClientConnectionError : public ClientError {
 public:
  /// what as what(), with the error's code.
  ClientConnectionError(const std::string& what, std::error_code code = {})
      : ClientError(what), code_(code) {}
  std::error_code code() const noexcept { return code_; }  ///< the OS's or TLS's error

 private:
  std::error_code code_;
};

/// The TLS handshake failed or the server's certificate was refused.
class ClientSSLError : public ClientConnectionError {
 public:
  using ClientConnectionError::ClientConnectionError;
};

/// The response body is cut short or malformed, or its compression corrupt.
class ClientPayloadError : public ClientError {
 public:
  using ClientError::ClientError;
};

/// text() could not make UTF-8 of the body: its charset (the Content-Type's,
/// or text()'s `encoding`) is unknown to iconv, or the body has bytes
/// invalid in it. aiohttp's text() raises Python's UnicodeDecodeError (or
/// LookupError for an unknown charset); here both are one error, and a
/// ClientPayloadError, as corrupt gzip is: the body is not what its headers
/// say.
class UnicodeDecodeError : public ClientPayloadError {
 public:
  /// what as what(); the charset tried and where decoding stopped.
  UnicodeDecodeError(const std::string& what, std::string encoding,
                     std::optional<std::size_t> offset)
      : ClientPayloadError(what), encoding_(std::move(encoding)), offset_(offset) {}
  const std::string& encoding() const noexcept { return encoding_; }  ///< the charset tried

  /// Where in the body the bad bytes start; nullopt for an unknown charset.
  std::optional<std::size_t> offset() const noexcept { return offset_; }

 private:
  std::string encoding_;
  std::optional<std::size_t> offset_;
};

/// An answer with an error status (raise_for_status()).
class ClientResponseError : public ClientError {
 public:
  /// An error for status, what as what().
  ClientResponseError(int status, const std::string& what) : ClientError(what), status_(status) {}
  int status() const noexcept { return status_; }  ///< the answer's status

 private:
  int status_;
};

/// More redirects than ClientOptions::max_redirects.
class TooManyRedirects : public ClientError {
 public:
  using ClientError::ClientError;
};

}  // namespace corio::http
