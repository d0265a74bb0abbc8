// detail::ResponseBody: a response's body as the client reads it, straight
// from the connection's buffer (StreamReader::buffered/fill_buffer/consume):
// the parser's BodyDecoder removes the framing, an Inflater the gzip or
// deflate Content-Encoding, and nothing is held beyond the piece asked for,
// so a body of any size streams through bounded memory.
//
// The connection goes back to the pool when the body's end is read (and the
// response allowed keep-alive); it is closed when the body is released
// unread, fails, or times out. The deadlines are the request's: total (an
// absolute loop time) and sock_read (per read from the socket).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include <corio/coro.hpp>
#include <corio/detail/frame_alloc.hpp>
#include <corio/http/parser.hpp>

#include "http/client/connection_pool.hpp"
#include "http/wire/decompress.hpp"

namespace corio::http {
struct ClientTimeout;
}

namespace corio::http::detail {

// A request's timeouts (ClientTimeout) once it has started.
struct Deadline {
  std::optional<double> total_at;   // loop time
  std::optional<double> sock_read;  // seconds per read
  std::optional<double> connect;    // seconds to get a connection
  std::optional<std::chrono::milliseconds> sock_connect;
  // The deadline of a read, or of getting a connection, starting at `now`:
  // the earlier of its own and the total.
  std::optional<double> for_read(double now) const noexcept;
  std::optional<double> for_connect(double now) const noexcept;
};

// A request's deadlines under t, starting now.
Deadline start_deadline(const ClientTimeout& t);

// What a TLS peer's EOF without close_notify means to a read: while a
// head is awaited it reads as EOF (the caller reports the disconnect), as
// browsers and aiohttp accept it; inside a body it is a truncation the
// body's framing may not reveal (one read until close), so it is kept.
enum class TlsEof { is_eof, is_truncation };

// reader.fill_buffer() within the deadline (TimeoutError past it). A
// connection error is ClientConnectionError; a TLS EOF without close_notify
// reads as EOF (0), or throws SslEofError with TlsEof::is_truncation.
Coro<std::size_t> fill_buffer(StreamReader& reader, std::optional<double> deadline,
                              TlsEof tls_eof = TlsEof::is_eof);

// A response's body as ClientResponse reads it: over HTTP/1.1 (Http1Body)
// or an HTTP/2 stream (H2Body, h2_client_stream.cpp). Pooled as coroutine
// frames are: one is made per response.
class ResponseBody : public corio::detail::Pooled {
 public:
  ResponseBody() = default;
  ResponseBody(const ResponseBody&) = delete;
  ResponseBody& operator=(const ResponseBody&) = delete;
  virtual ~ResponseBody() = default;

  // Appends between 1 and max body bytes to out; false (nothing appended)
  // at the end of the body.
  virtual Coro<bool> pump(std::string& out, std::size_t max) = 0;
  // Done with the body: a fully read one leaves its connection to the
  // pool, any other closes it (an HTTP/2 stream is reset, its connection
  // stays). Later reads throw ClientConnectionError.
  virtual void release() noexcept = 0;
  // Whether it came on an HTTP/2 stream (ClientResponse::version()).
  virtual bool http2() const noexcept { return false; }
};

class Http1Body final : public ResponseBody {
 public:
  // limits: the trailers' (the body's size is the reader's to bound).
  Http1Body(Lease lease, BodyFraming framing, const Limits& limits, bool keep_alive,
            std::optional<Inflater> inflater, Deadline deadline);

  Coro<bool> pump(std::string& out, std::size_t max) override;
  void release() noexcept override;

 private:
  enum class State { reading, finished, released, failed };
  Coro<bool> pump_once(std::string& out, std::size_t max);
  std::size_t decode_buffered(std::string& out, std::size_t start, std::size_t max);
  Coro<void> fill_or_end();
  void complete();

  Lease lease_;
  BodyDecoder decoder_;
  bool keep_alive_;
  std::optional<Inflater> inflater_;
  Deadline deadline_;
  State state_ = State::reading;
  std::string scratch_;  // compressed bytes on their way to the inflater
  std::string spill_;    // decoded bytes beyond what the last read asked for
};

}  // namespace corio::http::detail
