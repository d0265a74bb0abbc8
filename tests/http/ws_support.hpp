// Helpers shared by the WebSocket tests: a server with WebSocket routes, a
// raw client that does the handshake by hand and then speaks frames made
// with the library's own codec (so a test can break any rule it likes).
//
// State goes into coroutines as parameters, never as lambda captures.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "http/server_support.hpp"
#include "http/ws/ws_frame.hpp"
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/http/client.hpp>
#include <corio/http/websocket.hpp>

namespace corio_ws_test {

using corio::Coro;
using corio::http::ClientSession;
using corio::http::WebSocket;
using corio::http::WebSocketResponse;
using corio::http::WsMessage;
using corio::http::WsMsgType;
using corio::http::WsOptions;
using corio::http::detail::Opcode;
using corio::http::detail::WsEvent;
using corio_http_test::quiet;
using corio_http_test::RawClient;
using corio_http_test::Reply;
using corio_http_test::Request;
using corio_http_test::Response;
using corio_http_test::Server;
using corio_http_test::ServerOptions;
using namespace std::chrono_literals;

// What a server-side handler saw, for the test to check afterwards.
struct Seen {
  std::optional<int> close_code;
  std::string close_reason;
  std::vector<WsMessage> messages;
  corio::Event done;
};

// Echoes every message; records how the connection ended.
inline Coro<Response> echo(Request& req, WsOptions opts, Seen& seen) {
  WebSocket ws = co_await WebSocketResponse::prepare(req, std::move(opts));
  while (std::optional<WsMessage> msg = co_await ws.receive()) {
    seen.messages.push_back(*msg);
    co_await ws.send(*msg);
  }
  seen.close_code = ws.close_code();
  seen.close_reason = ws.close_reason();
  seen.done.set();
  co_return Response{};
}

// An HTTP server with echo() at /ws (start it on a free port with
// es.server.start("127.0.0.1", 0)).
struct EchoServer {
  explicit EchoServer(WsOptions o, ServerOptions so = quiet()) : opts(std::move(o)), server(std::move(so)) {
    server.get("/ws", [this](Request& r) { return echo(r, opts, seen); });
  }
  WsOptions opts;
  Seen seen;
  Server server;
};

// Bytes no compressor can shrink (xorshift), the same for a given n.
inline std::string noise(std::size_t n) {
  std::string s(n, '\0');
  std::uint64_t x = 88172645463325252ull;
  for (char& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return s;
}

// Sends UTF-8 text, binary with NULs, an empty message, 1 MiB of text and
// 300 kB of noise, checking each one's echo; returns how many were sent.
inline Coro<std::size_t> expect_echoes(WebSocket& ws) {
  const std::vector<WsMessage> messages{{WsMsgType::text, "h\xc3\xa9llo"},
                                        {WsMsgType::binary, std::string("\0\1\2", 3)},
                                        {WsMsgType::text, ""},
                                        {WsMsgType::text, std::string(1 << 20, 'a')},
                                        {WsMsgType::binary, noise(300000)}};
  for (const WsMessage& m : messages) {
    co_await ws.send(m);
    const std::optional<WsMessage> back = co_await ws.receive();
    if (!back) {
      ADD_FAILURE() << "closed instead of an echo: " << ws.close_code().value_or(0) << " " << ws.close_reason();
      break;
    }
    EXPECT_EQ(back->type, m.type);
    EXPECT_EQ(back->data, m.data) << m.data.size() << " bytes";
  }
  co_return messages.size();
}

// n messages alike enough for a carried-over context to matter, each
// checked as it comes back; the odd ones carry 1000+ bytes of noise (past
// a small max_fragment). Compressed when deflate is agreed (min_size 64).
inline Coro<void> expect_alike_echoes(WebSocket& ws, int n) {
  for (int i = 0; i < n; ++i) {
    std::string text = "{\"seq\":" + std::to_string(i) +
                       ",\"body\":\"the same words again and again, and then the same words once more\"}";
    if (i % 2) text += noise(1000 + static_cast<std::size_t>(i));
    co_await ws.send_bytes(text);
    const std::optional<WsMessage> back = co_await ws.receive();
    if (!back) {
      ADD_FAILURE() << "closed instead of echo " << i << ": " << ws.close_code().value_or(0);
      co_return;
    }
    EXPECT_EQ(back->data, text) << i;
  }
}

inline std::string ws_url(std::uint16_t port, std::string_view path = "/ws") {
  return "ws://127.0.0.1:" + std::to_string(port) + std::string(path);
}

inline constexpr std::string_view kKey = "dGhlIHNhbXBsZSBub25jZQ==";

inline std::string handshake_request(std::string_view path = "/ws", std::string_view extra = {}) {
  std::string r = "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  r += "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n";
  r += "Sec-WebSocket-Key: " + std::string(kKey) + "\r\n";
  r += extra;
  r += "\r\n";
  return r;
}

// A raw client past the handshake (the 101 read, nothing more).
inline Coro<RawClient> raw_ws(std::uint16_t port) {
  RawClient c = co_await corio_http_test::connect(port);
  c.writer.write(handshake_request());
  const Reply reply = co_await corio_http_test::read_reply(c.reader);
  EXPECT_EQ(reply.status, 101);
  co_return c;
}

// A client's frame: masked.
inline std::string client_frame(Opcode op, std::string_view payload, bool fin = true) {
  std::string out;
  corio::http::detail::append_frame(out, op, fin, false, payload, 0x12345678u);
  return out;
}

// The next frame the server sent (unmasked), or a Kind::none event at EOF.
inline Coro<WsEvent> read_server_frame(corio::StreamReader& r) {
  corio::http::detail::WsReaderConfig config;
  config.expect_masked = false;
  corio::http::detail::WsReader reader(std::move(config));
  WsEvent ev;
  for (;;) {
    const std::size_t n = reader.parse(r.buffered(), ev);
    if (n > 0) {
      r.consume(n);
      co_return ev;
    }
    if (co_await r.fill_buffer() == 0) co_return WsEvent{};
  }
}

// The WebSocket client's h2 tests: an h2c session (prior knowledge, as
// their servers speak h2c on a plain port), and ws_connect over h2.
inline corio::http::ClientOptions h2c(std::size_t limit = 100) {
  corio::http::ClientOptions o;
  o.http2_prior_knowledge = true;
  o.limit = limit;
  return o;
}

inline WsOptions over_h2() {
  WsOptions o;
  o.http2 = true;
  return o;
}

// On virtual time, which jumps to the next timer whenever nothing is
// ready: while a Ticker runs, it moves in steps of `step` at most, so bytes
// in flight between two ends on this loop are read within a step of being
// sent, not after a jump to a distant timer. stop() before the loop ends.
class Ticker {
 public:
  explicit Ticker(std::chrono::milliseconds step = 100ms) : task_(corio::create_task(tick(step))) {}
  Coro<void> stop() {
    task_.cancel();
    try {
      co_await task_;
    } catch (const corio::CancelledError&) {
    }
  }

 private:
  static Coro<void> tick(std::chrono::milliseconds step) {
    for (;;) co_await corio::sleep(step);
  }
  corio::Task<void> task_;
};

}  // namespace corio_ws_test
