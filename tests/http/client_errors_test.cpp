// What goes wrong: timeouts, truncated bodies, refused connections, a
// server closing, malformed responses; each costs only its connection.
#include <nlohmann/json.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::RequestOptions;

Coro<void> read_timeout(const ScriptedPeer* peer) {
  ClientSession s;
  RequestOptions opts;
  opts.timeout = corio::http::ClientTimeout{};
  opts.timeout->sock_read = 300ms;
  const double t0 = corio::get_running_loop().time();
  bool timed_out = false;
  try {
    co_await s.get(peer->url("/silent"), std::move(opts));
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
  EXPECT_GE(corio::get_running_loop().time() - t0, 0.29);
  EXPECT_EQ(s.open_connections(), 0u);

  RequestOptions total;
  total.timeout = corio::http::ClientTimeout{};
  total.timeout->total = 300ms;
  timed_out = false;
  try {
    co_await s.get(peer->url("/silent"), std::move(total));
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
}

TEST(ClientErrors, ReadAndTotalTimeouts) {
  ScriptedPeer peer;
  run_bounded(read_timeout(&peer), 20s);
}

Coro<void> connect_timeout(bool* skipped) {
  std::optional<StalledListener> st = co_await stalled_listener();
  *skipped = !st;
  if (!st) co_return;
  ClientOptions o;
  o.timeout.connect = 300ms;
  ClientSession s(o);
  bool timed_out = false;
  try {
    co_await s.get("http://127.0.0.1:" + std::to_string(st->address().port()) + "/");
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
}

TEST(ClientErrors, ConnectTimeout) {
  bool skipped = false;
  run_bounded(connect_timeout(&skipped), 20s);
  if (skipped) GTEST_SKIP() << "this kernel completes connections to a full backlog";
}

Coro<void> refused() {
  const std::uint16_t port = free_port();
  ClientSession s;
  int code = 0;
  try {
    co_await s.get("http://127.0.0.1:" + std::to_string(port) + "/");
  } catch (const corio::http::ClientConnectionError& e) {
    code = e.code().value();
  }
  EXPECT_EQ(code, ECONNREFUSED);
}

TEST(ClientErrors, ConnectionRefused) { run_bounded(refused(), 20s); }

Coro<void> truncated(const ScriptedPeer* peer) {
  ClientSession s;
  ClientResponse r = co_await s.get(peer->url("/truncated"));
  EXPECT_EQ(r.status(), 200);
  bool thrown = false;
  try {
    co_await r.read();
  } catch (const corio::http::ClientPayloadError&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(s.open_connections(), 0u);  // not pooled
  ClientResponse again = co_await s.get(peer->url("/echo"));
  EXPECT_EQ(again.status(), 200);
}

TEST(ClientErrors, TruncatedBodyRaisesAndIsNotPooled) {
  ScriptedPeer peer;
  run_bounded(truncated(&peer), 20s);
}

Coro<void> server_closes(const ScriptedPeer* peer) {
  ClientSession s;
  ClientResponse r = co_await s.get(peer->url("/close"));
  EXPECT_EQ(co_await r.text(), "bye");
  EXPECT_EQ(s.open_connections(), 0u);  // "Connection: close" is respected
  ClientResponse a = co_await s.get(peer->url("/echo"));
  co_await a.read();
  ClientResponse partial = co_await s.get(peer->url("/echo"));
  EXPECT_FALSE((co_await partial.read_chunk(5)).empty());
  partial.release();  // body left unread: the connection is closed
  EXPECT_EQ(s.open_connections(), 0u);
}

TEST(ClientErrors, UnreadOrClosedConnectionsAreNotPooled) {
  ScriptedPeer peer;
  run_bounded(server_closes(&peer), 20s);
}

Coro<void> over_max(const ScriptedPeer* peer) {
  ClientSession s;
  ClientResponse r = co_await s.get(peer->url("/gzip?n=100000"));
  bool thrown = false;
  try {
    co_await r.read(1000);
  } catch (const corio::http::ClientPayloadError&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
}

TEST(ClientErrors, ReadRefusesABodyOverItsBound) {
  ScriptedPeer peer;
  run_bounded(over_max(&peer), 20s);
}

// A raw peer: answers each connection's first request with `reply`.
Coro<void> answer_once(Socket* listener, std::string reply) {
  corio::EventLoop& loop = corio::get_running_loop();
  auto [conn, addr] = co_await loop.sock_accept(*listener);
  std::string got;
  while (got.find("\r\n\r\n") == std::string::npos) {
    std::string piece = co_await loop.sock_recv(conn, 4096);
    if (piece.empty()) co_return;
    got += piece;
  }
  co_await loop.sock_sendall(conn, reply);
  co_await corio::sleep(100ms);
}

Coro<void> malformed() {
  Socket lst = raw_listener();
  const std::string url = "http://127.0.0.1:" + std::to_string(lst.local_address().port()) + "/";
  Task<void> peer = corio::create_task(answer_once(&lst, "HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n"));
  ClientSession s;
  bool parse_error = false;
  try {
    co_await s.get(url);
  } catch (const corio::http::ParseError&) {
    parse_error = true;
  }
  EXPECT_TRUE(parse_error);
  EXPECT_EQ(s.open_connections(), 0u);
  co_await peer;

  Task<void> cont = corio::create_task(
      answer_once(&lst, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
  ClientResponse r = co_await s.get(url);
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(co_await r.text(), "ok");
  co_await cont;
}

TEST(ClientErrors, MalformedResponseAndInterimResponses) { run_bounded(malformed(), 20s); }

TEST(ClientErrors, HeaderInjectionIsRefused) {
  auto body = []() -> Coro<void> {
    ClientSession s;
    RequestOptions opts;
    opts.headers.add("X-Evil", "a\r\nInjected: yes");
    bool refused = false;
    try {
      co_await s.get("http://127.0.0.1:9/", std::move(opts));
    } catch (const corio::ValueError&) {
      refused = true;
    }
    EXPECT_TRUE(refused);
  };
  run_bounded(body(), 10s);
}

// A request that cannot go out (a bad URL, two bodies, a closed session)
// throws where it is awaited, not where it is made: calling a coroutine
// runs nothing, and gather() or a task may await it later.
Coro<void> lazy_errors() {
  ClientSession s;
  Coro<ClientResponse> bad_url = s.get("no scheme here");
  RequestOptions two;
  two.data = "bytes";
  two.form.emplace().emplace_back("and", "a form");
  Coro<ClientResponse> two_bodies = s.post("http://127.0.0.1:9/", std::move(two));
  co_await s.close();
  Coro<ClientResponse> after_close = s.get("http://127.0.0.1:9/");
  int value_errors = 0;
  for (Coro<ClientResponse>* c : {&bad_url, &two_bodies}) {
    try {
      co_await std::move(*c);
    } catch (const corio::ValueError&) {
      ++value_errors;
    }
  }
  EXPECT_EQ(value_errors, 2);
  bool closed = false;
  try {
    co_await std::move(after_close);
  } catch (const corio::http::ClientConnectionError&) {
    closed = true;
  }
  EXPECT_TRUE(closed) << "a request made after close() fails when awaited";
}

TEST(ClientErrors, RequestsThatCannotGoOutThrowWhenAwaited) { run_bounded(lazy_errors(), 10s); }

}  // namespace
}  // namespace corio_http_test
