// Echo server on Boost.Asio 1.81 with C++20 coroutines: the idiomatic shape.
//
// Pure byte echo (bench/echo/README.md). One coroutine per connection, co_spawn'd by the
// accept loop: co_await async_read_some into a 64 KiB buffer in the coroutine frame,
// co_await async_write of what came. One io_context, concurrency hint 1 (the documented
// single-thread hint), run on the main thread. TCP_NODELAY on every connection, as
// asyncio does. Errors (EOF, reset) end the connection's coroutine; as_tuple keeps
// exceptions off that path.
//
// Usage: asio_echo [--port P]   (127.0.0.1; P = 0 picks a free port)
// Prints "listening on 127.0.0.1:PORT" as its first line (as `corio echo-server`
// does), then serves until killed.

#include <cstdio>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "echo_args.h"

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

awaitable<void> echo(tcp::socket socket) {
  char data[65536];
  for (;;) {
    auto [rerr, n] = co_await socket.async_read_some(asio::buffer(data), use_nothrow);
    if (rerr) co_return;
    auto [werr, written] = co_await asio::async_write(socket, asio::buffer(data, n), use_nothrow);
    if (werr) co_return;
  }
}

awaitable<void> listen(tcp::acceptor& acceptor) {
  for (;;) {
    auto [err, socket] = co_await acceptor.async_accept(use_nothrow);
    if (err) continue;
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), echo(std::move(socket)), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto port = static_cast<unsigned short>(echo_port_arg(argc, argv, "asio_echo"));
  asio::io_context io(1);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), port));
  std::printf("listening on 127.0.0.1:%u\n", static_cast<unsigned>(acceptor.local_endpoint().port()));
  std::fflush(stdout);
  asio::co_spawn(io, listen(acceptor), asio::detached);
  io.run();
}
