// The seam between a handler's Request and a protocol other than HTTP/1.1
// (an HTTP/2 stream, src/http/h2/): what a Request asks of the stream it
// came on. An HTTP/1.1 Request calls its HttpConnection's same-named
// functions directly instead: no virtual call on that hot path, and no
// vtable pointer in an idle HttpConnection (its 88-byte budget).
#pragma once

#include <string>

#include <corio/coro.hpp>
#include <corio/http/headers.hpp>

namespace corio::http::detail {

class RequestSource {
 public:
  // The body, as Request::read_chunk() and read(); their limits and errors.
  virtual Coro<std::string> read_chunk() = 0;
  virtual Coro<std::string> read_all() = 0;
  virtual const Headers& trailers() const noexcept = 0;
  virtual std::string peername() const = 0;

 protected:
  ~RequestSource() = default;
};

}  // namespace corio::http::detail
