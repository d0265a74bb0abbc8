// ClientSession over HTTP/2 against corio's own server: h2c with prior
// knowledge and h2 by ALPN, many requests on one connection, the peer's
// stream cap, flow control tied to reading, cancellation, GOAWAY.
#include <corio/event.hpp>
#include <corio/http/client.hpp>
#include <corio/gather.hpp>
#include <corio/sleep.hpp>

#include "http/server_support.hpp"
#include "net/tls_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::ClientTimeout;
using corio::http::HttpVersion;
using corio::http::RequestOptions;

Coro<Response> version(Request& req) {
  co_return Response::text(std::to_string(req.version().major) + "." +
                           std::to_string(req.version().minor));
}

Coro<Response> echo(Request& req) { co_return Response::text(co_await req.read()); }

ClientOptions h2c() {
  ClientOptions o;
  o.http2_prior_knowledge = true;
  return o;
}

std::string url(const Server& s, std::string_view path, std::string_view scheme = "http") {
  return std::string(scheme) + "://localhost:" + std::to_string(s.port()) + std::string(path);
}

Coro<std::string> fetch_text(ClientSession& session, std::string u) {
  ClientResponse r = co_await session.get(std::move(u));
  EXPECT_EQ(r.version(), (HttpVersion{2, 0}));
  co_return co_await r.text();
}

Coro<void> multiplexed_body() {
  Server server(quiet());
  server.get("/v", version);
  server.post("/echo", echo);
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  std::vector<Coro<std::string>> all;
  for (int i = 0; i < 10; ++i) all.push_back(fetch_text(session, url(server, "/v")));
  for (const std::string& body : co_await corio::gather(std::move(all))) EXPECT_EQ(body, "2.0");
  EXPECT_EQ(session.open_connections(), 1u);
  // A body larger than both sides' windows, each way.
  RequestOptions post;
  post.data = std::string(600 * 1024, 'x');
  ClientResponse r = co_await session.post(url(server, "/echo"), std::move(post));
  EXPECT_EQ((co_await r.read()).size(), 600u * 1024);
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
  server.close();
}

TEST(ClientH2, PriorKnowledgeMultiplexesOnOneConnection) { run_bounded(multiplexed_body(), 20s); }

// A multipart body streams into an HTTP/1.1 connection's writer: such a
// request goes on HTTP/1.1 beside the origin's h2 connection.
Coro<void> multipart_body() {
  Server server(quiet());
  server.post("/v", version);
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  RequestOptions form;
  form.multipart.emplace();
  form.multipart->add_field("name", "corio");
  ClientResponse r = co_await session.post(url(server, "/v"), std::move(form));
  EXPECT_EQ(co_await r.text(), "1.1");
  EXPECT_EQ(co_await fetch_text(session, url(server, "/v")), "2.0");
  co_await session.close();
  server.close();
}

TEST(ClientH2, MultipartBodiesGoOnHttp11) { run_bounded(multipart_body(), 20s); }

Coro<void> alpn_body(bool http2) {
  ServerOptions so = quiet();
  so.ssl = corio_net_test::test_server();
  Server server(so);
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  ClientOptions o;
  o.ssl = corio_net_test::trusting_client();
  o.http2 = http2;
  ClientSession session(o);
  ClientResponse r = co_await session.get(url(server, "/v", "https"));
  EXPECT_EQ(co_await r.text(), http2 ? "2.0" : "1.1");
  EXPECT_EQ(r.version(), (http2 ? HttpVersion{2, 0} : HttpVersion{1, 1}));
  co_await session.close();
  server.close();
}

TEST(ClientH2, HttpsNegotiatesH2ByAlpn) { run_bounded(alpn_body(true), 20s); }
TEST(ClientH2, Http2OffStaysOnHttp11) { run_bounded(alpn_body(false), 20s); }

// The server allows 2 streams; with one connection allowed, the other
// requests queue on it (or are refused and sent again): all answered, never
// more than 2 at once.
struct Gate {
  int running = 0;
  int most = 0;
  corio::Event open;
};

Coro<Response> gated(Gate* g) {
  g->most = std::max(g->most, ++g->running);
  co_await corio::sleep(20ms);
  --g->running;
  co_return Response::text("ok");
}

// limit: the session's connection limit (ClientOptions::limit).
Coro<void> capped_body(std::size_t limit) {
  ServerOptions so = quiet();
  so.max_concurrent_streams = 2;
  Server server(so);
  Gate gate;
  server.get("/g", [&gate](Request&) { return gated(&gate); });
  co_await server.start("127.0.0.1", 0);
  ClientOptions o = h2c();
  o.limit = limit;
  ClientSession session(o);
  co_await fetch_text(session, url(server, "/g"));  // the server's SETTINGS are known from here
  std::vector<Coro<std::string>> all;
  for (int i = 0; i < 6; ++i) all.push_back(fetch_text(session, url(server, "/g")));
  for (const std::string& body : co_await corio::gather(std::move(all))) EXPECT_EQ(body, "ok");
  if (limit == 1) {
    EXPECT_LE(gate.most, 2);
    EXPECT_EQ(session.open_connections(), 1u);
  } else {
    EXPECT_GE(session.open_connections(), 2u);
  }
  co_await session.close();
  server.close();
}

TEST(ClientH2, PeersStreamCapQueuesRequests) { run_bounded(capped_body(1), 20s); }
// Without a connection limit, a full connection makes way for another.
TEST(ClientH2, AFullConnectionMakesWayForAnother) { run_bounded(capped_body(100), 20s); }

// A body nobody reads pins its stream's window, not the whole body.
struct Produced {
  std::size_t bytes = 0;
};

Coro<void> produce(Produced* p, corio::http::StreamResponseWriter& w) {
  const std::string piece(64 * 1024, 'b');
  for (int i = 0; i < 64; ++i) {
    co_await w.write(piece);
    p->bytes += piece.size();
  }
}

Coro<void> window_body() {
  Server server(quiet());
  Produced produced;
  server.get("/big", [&produced](Request&) -> Coro<Response> {
    return [](Produced* p) -> Coro<Response> {
      co_return Response::stream([p](corio::http::StreamResponseWriter& w) { return produce(p, w); });
    }(&produced);
  });
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  ClientResponse r = co_await session.get(url(server, "/big"));
  std::string got = co_await r.read_chunk();
  co_await corio::sleep(300ms);  // time for a producer the window did not stop
  EXPECT_LT(produced.bytes, 1024u * 1024);
  while (!got.empty()) {
    const std::string more = co_await r.read_chunk();
    if (more.empty()) break;
    got += more;
  }
  EXPECT_EQ(got.size(), 64u * 64 * 1024);
  co_await session.close();
  server.close();
}

TEST(ClientH2, AnUnreadBodyKeepsTheWindowClosed) { run_bounded(window_body(), 30s); }

// A request given up (its timeout) resets its stream; the connection
// carries the next request. A response released with body unread resets
// its stream too: the server's producer sees its writes fail.
Coro<Response> never_answers(corio::Event* never) {
  co_await never->wait();
  co_return Response::text("late");
}

Coro<void> drip(bool* reset, corio::http::StreamResponseWriter& w) {
  try {
    for (;;) {
      co_await w.write(std::string(1024, 'd'));
      co_await corio::sleep(5ms);
    }
  } catch (const std::exception&) {
    *reset = true;
    throw;
  }
}

Coro<void> cancel_body() {
  Server server(quiet());
  server.get("/v", version);
  corio::Event never;
  bool reset = false;
  server.get("/slow", [&never](Request&) { return never_answers(&never); });
  server.get("/drip", [&reset](Request&) -> Coro<Response> {
    return [](bool* r) -> Coro<Response> {
      co_return Response::stream([r](corio::http::StreamResponseWriter& w) { return drip(r, w); });
    }(&reset);
  });
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  RequestOptions quick;
  quick.timeout = ClientTimeout{};
  quick.timeout->total = 200ms;
  bool timed_out = false;
  try {
    co_await session.get(url(server, "/slow"), std::move(quick));
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(session.idle_connections(), 1u);  // its stream is gone
  EXPECT_EQ(co_await fetch_text(session, url(server, "/v")), "2.0");
  ClientResponse dripping = co_await session.get(url(server, "/drip"));
  EXPECT_FALSE((co_await dripping.read_chunk()).empty());
  dripping.release();
  for (int i = 0; i < 100 && !reset; ++i) co_await corio::sleep(20ms);
  EXPECT_TRUE(reset);  // the RST_STREAM reached the server
  EXPECT_EQ(co_await fetch_text(session, url(server, "/v")), "2.0");
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
  never.set();
  server.close();
}

TEST(ClientH2, ACancelledRequestResetsOnlyItsStream) { run_bounded(cancel_body(), 20s); }

// A server that said GOAWAY (its idle timeout) is not asked again: the
// next request goes on a new connection.
Coro<void> goaway_body() {
  ServerOptions so = quiet();
  so.idle_timeout = 100ms;
  Server server(so);
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  EXPECT_EQ(co_await fetch_text(session, url(server, "/v")), "2.0");
  for (int i = 0; i < 100 && session.open_connections() > 0; ++i) co_await corio::sleep(20ms);
  EXPECT_EQ(session.open_connections(), 0u);
  EXPECT_EQ(co_await fetch_text(session, url(server, "/v")), "2.0");
  co_await session.close();
  server.close();
}

TEST(ClientH2, AfterGoawayANewConnection) { run_bounded(goaway_body(), 20s); }

}  // namespace
}  // namespace corio_http_test
