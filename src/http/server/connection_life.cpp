// An HttpConnection's life (lifetime rule 3 in server_connection.hpp): made
// at the accept, served by a task while it has a request to read or answer,
// parked between requests with no task (an IoWatch in its socket's slot),
// served by a new task when the next request's first byte comes, ended by
// its peer, its task or its LoopServer.
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

#include "http/server/server_connection.hpp"

namespace corio::http::detail {

// An idle connection's budget (with its streams and the loop's watch): one
// 96-byte malloc chunk.
static_assert(sizeof(HttpConnection) <= 88);

HttpConnection::HttpConnection(LoopServer& server, StreamReader reader, StreamWriter writer,
                               corio::detail::ServerSlot slot)
    : IoWatch(&HttpConnection::on_edge),
      slot_(std::move(slot)),
      server_(server),
      reader_(std::move(reader)),
      writer_(std::move(writer)),
      tls_(server.shared().options.ssl.has_value()) {
  server_.add(this);
}

HttpConnection::~HttpConnection() {
  if (st_) server_.give_back(st_.take());
  server_.remove(this);
}

void HttpConnection::start(const std::shared_ptr<LoopServer>& server, StreamReader reader,
                           StreamWriter writer, corio::detail::ServerSlot slot) {
  if (!server || server->stopping()) {
    writer.close();
    return;
  }
  auto c = std::make_unique<HttpConnection>(*server, std::move(reader), std::move(writer),
                                            std::move(slot));
  // h2 chosen by ALPN (Server::start offered it): HTTP/2 from the first byte.
  if (c->tls_ && server->shared().options.http2 &&
      c->writer_.get_extra_info("alpn_protocol") == "h2") {
    c->to_h2();
    return;
  }
  // Until its first byte, it waits parked: a connection that sends nothing
  // (a preconnect, a scanner) never costs a task.
  if (c->rest()) {
    std::optional<std::size_t> got;
    try {
      got = c->reader_.try_fill();
    } catch (const std::system_error&) {
      got = 0;  // its task meets the end
    }
    if (!got && c->try_park()) {
      c.release();  // the LoopServer's now
      return;
    }
    if (got) {  // bytes (or the end) came with the accept: as in serve()'s wait
      c->idle = false;
      c->stop_wait_clock();
    }
  }
  get_running_loop().create_task(serve(server, std::move(c)));
}

// Between requests the connection waits here (the request's own frames
// exist only once its first byte came): with nothing received it holds no
// read buffer, no write buffer, no request state, and no frame below this
// one but the reader's wait, which lives in it (try_fill, readable). It
// parks instead (lifetime rule 3), and this task ends, at once until its
// second request began, and at the sweeper's nudge later: the wait
// before a connection's second request is the one most likely to be long (a
// client keeping its connection for later), and a connection that came back
// is likely busy, and would pay a task per request if it parked each time.
Coro<void> HttpConnection::serve(std::shared_ptr<LoopServer> server,
                                 std::unique_ptr<HttpConnection> given) {
  // A local, gone before the parameters (in whatever order a compiler ends
  // those): the connection unregisters itself from a server still alive.
  std::unique_ptr<HttpConnection> conn = std::move(given);
  HttpConnection& c = *conn;
  if (server->stopping()) {
    c.writer_.close();
    co_return;
  }
  if (std::optional<TaskRef> t = current_task()) c.task = std::move(*t);
  try {
    for (;;) {
      if (c.reader_.buffered().empty()) {
        c.flush();  // the peer may be waiting for these before it sends more
        if (c.writer_.get_write_buffer_size() > 0) co_await c.drain();
        if (!c.rest()) break;
        while (c.reader_.buffered().empty() && !c.reader_.at_eof()) {
          if (c.reader_.try_fill()) break;
          if ((c.park_wanted_ || !c.hot_) && c.try_park()) {
            conn.release();  // the LoopServer's now
            co_return;
          }
          co_await c.reader_.readable();
        }
        if (c.reader_.buffered().empty()) break;  // EOF, or closed by a timeout or shutdown
        c.idle = false;
        c.stop_wait_clock();  // a head began: its own, shorter clock starts in read_head
        if (c.served_one_) c.hot_ = true;
      }
      if (!c.st_) c.st_ = c.server_.take_request_state();
      if (!co_await c.read_head()) break;
      co_await c.handle_request();
      if (!c.keep_alive_) break;
    }
    if (c.linger_) {
      co_await c.linger();
    } else {
      c.flush();
    }
  } catch (const std::system_error&) {
    // The peer reset or went away: this connection ends, quietly.
  }
  if (!c.taken_) c.writer_.close();  // a taken one is closed by its new owner
}

// The request state goes back to the server, and the idle clock starts
// (before the first request, the header clock, from the accept).
bool HttpConnection::rest() {
  if (server_.stopping()) return false;
  if (st_) server_.give_back(st_.take());
  idle = true;
  if (!wait_clock_runs()) start_wait_clock(served_one_ ? Wait::idle : Wait::header);
  return true;
}

// Parked, an idle connection is its HttpConnection, its streams and the
// loop's watch of its socket: no task, no frame. False (it waits in its
// task) when its transport cannot be watched so.
bool HttpConnection::try_park() {
  park_wanted_ = false;
  if (server_.stopping() || !corio::detail::watch_readable(reader_, *this)) return false;
  parked_ = true;
  task = TaskRef();
  return true;
}

// Woken, its task finds nothing to read and parks. One that is not hot
// waits in its task only when it could not park: it is not woken again.
void HttpConnection::nudge() noexcept {
  if (!idle || parked_ || !hot_) return;
  park_wanted_ = true;
  corio::detail::interrupt_wait(reader_);
}

void HttpConnection::unpark() noexcept {
  corio::detail::unwatch(reader_, *this);
  parked_ = false;
}

// The loop's call, from its poll: the next request's first byte (or the
// peer's end) came, and a task serves the connection again. `closed`: the
// loop is closing (its socket is never closed under the watch otherwise),
// and the connection ends here, with no task. If no task can be made, it
// ends too (the unique_ptr has it).
void HttpConnection::on_edge(corio::detail::IoWatch* self, bool closed) noexcept {
  std::unique_ptr<HttpConnection> c(static_cast<HttpConnection*>(self));
  c->parked_ = false;
  if (closed) {
    c->abort();  // at once: a goodbye (TLS) would need a task
    return;
  }
  try {
    std::shared_ptr<LoopServer> server = c->server_.shared_from_this();
    get_running_loop().create_task(serve(std::move(server), std::move(c)));
  } catch (...) {
    // Out of memory: the connection ends with the unique_ptr.
  }
}

}  // namespace corio::http::detail
