// WebSocket echo server on Boost.Beast 1.81 with C++20 coroutines: the ws suite's Beast
// peer (bench/ws/ws_suite.py), in the shape of Beast's own awaitable examples. One
// coroutine per connection, co_spawn'd by the accept loop: websocket::stream over a plain
// tcp::socket (no timers: the suite has none to enforce), async_accept, then
// async_read into a flat_buffer and async_write of it with the same text/binary flag,
// until the peer closes. permessage-deflate is off (Beast's default), as in the suite's
// other peers. One io_context with concurrency hint 1 on the main thread. TCP_NODELAY.
//
// Usage: beast_ws_echo [--port P]   (127.0.0.1; P = 0 picks a free port)
// Prints "listening on 127.0.0.1:PORT" as its first line, then serves until killed.
#include <cstdio>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include "../echo/echo_args.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

awaitable<void> session(tcp::socket socket) {
  websocket::stream<tcp::socket> ws(std::move(socket));
  ws.read_message_max(64 * 1024 * 1024);
  auto [aerr] = co_await ws.async_accept(use_nothrow);
  if (aerr) co_return;
  beast::flat_buffer buffer;
  for (;;) {
    auto [rerr, n] = co_await ws.async_read(buffer, use_nothrow);
    if (rerr) break;  // closed, reset or a protocol error: this connection only
    ws.text(ws.got_text());
    auto [werr, m] = co_await ws.async_write(buffer.data(), use_nothrow);
    if (werr) break;
    buffer.consume(buffer.size());
  }
}

awaitable<void> listen(tcp::acceptor& acceptor) {
  for (;;) {
    auto [err, socket] = co_await acceptor.async_accept(use_nothrow);
    if (err) continue;
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), session(std::move(socket)), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto port = static_cast<unsigned short>(echo_port_arg(argc, argv, "beast_ws_echo"));
  asio::io_context io(1);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), port));
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
  std::fflush(stdout);
  asio::co_spawn(io, listen(acceptor), asio::detached);
  io.run();
}
