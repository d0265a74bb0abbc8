// "Hello" HTTP/1.1 server on Boost.Beast 1.81 with C++20 coroutines: the idiomatic shape.
//
// The http suite's Beast peer (bench/http/README.md). One coroutine per connection,
// co_spawn'd by the accept loop, as Beast's own example/http/server/awaitable does: a
// flat_buffer that lives as long as the connection (so bytes of a pipelined next request
// stay in it), http::async_read into a fresh request, http::async_write of the response,
// loop while the request keeps the connection alive. GET /hello answers "Hello, World!"
// as text/plain with the headers Beast's examples set (Server, Content-Type,
// Content-Length; no Date, unlike nginx and aiohttp); anything else gets a 404. One
// io_context with concurrency hint 1, run on the main thread: no strands, no locks. The
// connection is a plain tcp::socket, not a beast::tcp_stream: the suite has no idle
// timeouts to enforce, and a timer armed per operation would only slow the peer down.
// TCP_NODELAY on every connection, as nginx (tcp_nodelay on) and asyncio do.
//
// Usage: beast_hello [--port P]   (127.0.0.1; P = 0 picks a free port)
// Prints "listening on 127.0.0.1:PORT" as its first line, then serves until killed.

#include <cstdio>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>

#include "../echo/echo_args.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

http::response<http::string_body> respond(const http::request<http::string_body>& req) {
  const bool hello = req.method() == http::verb::get && req.target() == "/hello";
  http::response<http::string_body> res{hello ? http::status::ok : http::status::not_found,
                                        req.version()};
  res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
  res.set(http::field::content_type, "text/plain");
  res.keep_alive(req.keep_alive());
  res.body() = hello ? "Hello, World!" : "Not Found";
  res.prepare_payload();
  return res;
}

awaitable<void> session(tcp::socket socket) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    auto [rerr, nread] = co_await http::async_read(socket, buffer, req, use_nothrow);
    if (rerr) break;  // EOF, reset or a malformed request: this connection only
    auto res = respond(req);
    auto [werr, nwritten] = co_await http::async_write(socket, res, use_nothrow);
    if (werr || !res.keep_alive()) break;
  }
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
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
  const auto port = static_cast<unsigned short>(echo_port_arg(argc, argv, "beast_hello"));
  asio::io_context io(1);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), port));
  std::printf("listening on 127.0.0.1:%u\n",
              static_cast<unsigned>(acceptor.local_endpoint().port()));
  std::fflush(stdout);
  asio::co_spawn(io, listen(acceptor), asio::detached);
  io.run();
}
