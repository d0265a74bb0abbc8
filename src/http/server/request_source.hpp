// The seam between a handler's Request and a protocol other than HTTP/1.1
// (an HTTP/2 stream, src/http/h2/): what a Request asks of the stream it
// came on. An HTTP/1.1 Request calls its HttpConnection's same-named
// functions directly instead: no virtual call on that hot path, and no
// vtable pointer in an idle HttpConnection (its 88-byte budget).
#pragma once

#include <string>
#include <utility>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>
#include <corio/server.hpp>
#include <corio/http/response.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http::detail {

class LoopServer;

class RequestSource {
 public:
  // The body, as Request::read_chunk() and read(); their limits and errors.
  virtual Coro<std::string> read_chunk() = 0;
  virtual Coro<std::string> read_all() = 0;
  virtual const Headers& trailers() const noexcept = 0;
  virtual std::string peername() const = 0;
  // Request::is_upgrade() and take_connection(): an HTTP/2 stream opened by
  // an extended CONNECT (RFC 8441) is handed over as a tunnel.
  virtual bool can_take() const noexcept = 0;
  virtual Coro<std::pair<StreamReader, StreamWriter>> take_connection(Response answer) = 0;
  // A taken stream's place among its server's connections (taken_place()).
  virtual LoopServer& loop_server() const noexcept = 0;
  virtual corio::detail::ServerSlot new_slot() const noexcept = 0;

 protected:
  ~RequestSource() = default;
};

}  // namespace corio::http::detail
