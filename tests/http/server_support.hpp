// Helpers shared by the HTTP server tests: a quiet server, raw loopback
// clients that send exact bytes, and a response reader built on the
// library's own ResponseParser.
//
// State goes into coroutines as parameters, never as lambda captures
// (DESIGN.md "Known toolchain traps").
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "net/net_support.hpp"  // run_bounded, CO_ASSERT
#include <corio/corio.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/server.hpp>

namespace corio_http_test {

using corio::Coro;
using corio::StreamReader;
using corio::StreamWriter;
using corio::http::Headers;
using corio::http::Request;
using corio::http::Response;
using corio::http::Server;
using corio::http::ServerOptions;
using corio_net_test::run_bounded;
using namespace std::chrono_literals;

// Options for tests: no access log on stderr.
inline ServerOptions quiet(ServerOptions opts = {}) {
  opts.access_log = {};
  return opts;
}

struct RawClient {
  StreamReader reader;
  StreamWriter writer;
};

inline Coro<RawClient> connect(std::uint16_t port) {
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  co_return RawClient{reader, writer};
}

struct Reply {
  int status = 0;
  Headers headers;
  std::string body;
};

// One response from r (an interim 1xx too), framed as for `method`.
inline Coro<Reply> read_reply(StreamReader& r, std::string method = "GET") {
  corio::http::ResponseParser parser;
  corio::http::ResponseHead head;
  std::size_t n = 0;
  while ((n = parser.parse(r.buffered(), head)) == 0) {
    if (co_await r.fill_buffer() == 0) throw std::runtime_error("EOF before a response");
  }
  r.consume(n);
  corio::http::BodyDecoder body(corio::http::response_framing(head, method));
  Reply reply{head.status, head.headers, {}};
  while (!body.done()) {
    const std::size_t used = body.decode(r.buffered(), reply.body);
    r.consume(used);
    if (body.done() || used > 0) continue;
    if (co_await r.fill_buffer() == 0) {
      body.finish_at_eof();
      break;
    }
  }
  co_return reply;
}

// Sends raw bytes on a new connection and reads one response.
inline Coro<Reply> exchange(std::uint16_t port, std::string bytes, std::string method = "GET") {
  RawClient c = co_await connect(port);
  c.writer.write(bytes);
  Reply reply = co_await read_reply(c.reader, std::move(method));
  c.writer.close();
  co_return reply;
}

// Whether the server closed the connection: EOF (or a reset) with nothing
// more to read.
inline Coro<bool> closed_by_server(StreamReader& r) {
  try {
    const std::string rest = co_await corio::wait_for(r.read(), 5s);
    co_return rest.empty();
  } catch (const std::system_error&) {
    co_return true;  // ECONNRESET: closed too
  }
}

// Seconds until the server closed the connection; -1 if it sent more.
inline Coro<double> seconds_until_closed(StreamReader& r) {
  const double t0 = corio::get_running_loop().time();
  const bool closed = co_await closed_by_server(r);
  co_return closed ? corio::get_running_loop().time() - t0 : -1.0;
}

inline Coro<Response> hello(Request&) { co_return Response::text("Hello, World!"); }

inline const std::string kGetHello = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";

// n clients of a server that answers GET /hello, each answered once: n
// idle keep-alive connections.
inline Coro<std::vector<RawClient>> kept_alive_clients(std::uint16_t port, int n) {
  std::vector<RawClient> clients;
  for (int i = 0; i < n; ++i) {
    clients.push_back(co_await connect(port));
    clients.back().writer.write(kGetHello);
    EXPECT_EQ((co_await read_reply(clients.back().reader)).body, "Hello, World!") << "client " << i;
  }
  co_return clients;
}

// A test's end: its clients leave, then the server shuts down.
inline Coro<void> close_then_shutdown(Server& server, std::vector<RawClient> clients) {
  for (RawClient& c : clients) c.writer.close();
  co_await server.shutdown(1s);
}

// (Not `{c}` at the call: g++ 12 cannot take an initializer list in a coroutine's call.)
inline Coro<void> close_then_shutdown(Server& server, RawClient client) {
  co_await close_then_shutdown(server, std::vector<RawClient>(1, std::move(client)));
}

// `corio serve`'s first line, "listening on http://127.0.0.1:40123 (1 worker)" -> 40123.
inline std::uint16_t port_of(const std::string& line) {
  const std::size_t colon = line.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("no port in: " + line);
  return static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
}

}  // namespace corio_http_test
