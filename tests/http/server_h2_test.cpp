// The server's HTTP/2 entry, without outside peers (those are in
// interop/h2_interop_test.cpp): which connections become h2, and what a
// handler sees of the version, and the h2 path end to end with nghttp2's
// client session (h2_client_support.hpp): the same dispatch, answers,
// limits and flow control as HTTP/1.1's.
#include "http/client_support.hpp"
#include "http/h2_client_support.hpp"
#include "http/h2_frames.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using h2::kPreface;

Coro<Response> version(Request& req) {
  co_return Response::text(std::to_string(req.version().major) + "." +
                           std::to_string(req.version().minor));
}

Coro<void> h1_version_body() {
  Server server(quiet());
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  const Reply r11 = co_await exchange(server.port(), "GET /v HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r11.body, "1.1");
  const Reply r10 = co_await exchange(server.port(), "GET /v HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r10.body, "1.0");
  server.close();
}

TEST(ServerH2, Http1RequestsSayTheirVersion) { run_bounded(h1_version_body(), 10s); }

// The server's first frame after a client preface is its SETTINGS.
Coro<void> preface_body() {
  Server server(quiet());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening());
  while (c.reader.buffered().size() < 9) {
    CO_ASSERT(co_await c.reader.fill_buffer() > 0);
  }
  EXPECT_EQ(c.reader.buffered()[3], '\x04');  // SETTINGS
  EXPECT_EQ(c.reader.buffered()[4], '\x00');  // not an ACK
  c.writer.close();
  server.close();
}

TEST(ServerH2, ClientPrefaceStartsHttp2) { run_bounded(preface_body(), 10s); }

// With http2 off the preface is what it always was: a request line of an
// unsupported version.
Coro<void> off_body() {
  ServerOptions opts = quiet();
  opts.http2 = false;
  Server server(opts);
  co_await server.start("127.0.0.1", 0);
  const Reply r = co_await exchange(server.port(), std::string(kPreface));
  EXPECT_EQ(r.status, 505);
  server.close();
}

TEST(ServerH2, PrefaceWithHttp2OffIs505) { run_bounded(off_body(), 10s); }

// Only a connection's first request may be a preface.
Coro<void> second_body() {
  Server server(quiet());
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write("GET /v HTTP/1.1\r\nHost: h\r\n\r\n" + std::string(kPreface));
  EXPECT_EQ((co_await read_reply(c.reader)).body, "1.1");
  EXPECT_EQ((co_await read_reply(c.reader)).status, 505);
  c.writer.close();
  server.close();
}

TEST(ServerH2, PrefaceAfterAnHttp1RequestIs505) { run_bounded(second_body(), 10s); }


Coro<Response> echo(Request& req) { co_return Response::text(co_await req.read()); }

constexpr std::string_view kPieces[] = {"one ", "two ", "three"};

Coro<void> pieces(corio::http::StreamResponseWriter& w) {
  for (std::string_view piece : kPieces) co_await w.write(piece);
}

Coro<Response> streamed(Request&) { co_return Response::stream(pieces, 200, "text/plain"); }

std::string sample(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += std::to_string(i * 2654435761u % 1000003) + ",";
  s.resize(n);
  return s;
}

// Built outside the coroutines: g++ 12 mishandles braced lists of strings
// inside one ("array used as initializer").
H2Request req(std::string method, std::string path, std::string body = {}) {
  return H2Request{std::move(method), std::move(path), {}, std::move(body)};
}

Coro<std::vector<H2Reply>> h2_requests(std::uint16_t port, std::vector<H2Request> requests) {
  H2TestClient client;
  co_return co_await client.run(port, std::move(requests));
}

Coro<void> answers_body(const corio_testing::TempDir* dir) {
  write_file(dir->path() / "f.txt", sample(1000));
  Server server(quiet());
  server.get("/v", version);
  server.get("/stream", streamed);
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  requests.push_back(req("GET", "/v"));
  requests.push_back(req("HEAD", "/v"));
  requests.push_back(req("GET", "/stream"));
  requests.push_back(req("GET", "/files/f.txt"));
  requests.back().fields.emplace_back("range", "bytes=10-19");
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), std::move(requests));
  EXPECT_EQ(r[0].status, 200);
  EXPECT_EQ(r[0].body, "2.0");
  EXPECT_EQ(r[0].headers.get_or("content-length", ""), "3");
  EXPECT_EQ(r[0].headers.get_or("server", ""), "corio");
  EXPECT_TRUE(r[0].headers.contains("date"));
  EXPECT_EQ(r[1].status, 200);
  EXPECT_EQ(r[1].body, "");
  EXPECT_EQ(r[1].headers.get_or("content-length", ""), "3");
  EXPECT_EQ(r[2].body, "one two three");
  EXPECT_EQ(r[3].status, 206);
  EXPECT_EQ(r[3].body, sample(1000).substr(10, 10));
  server.close();
}

TEST(ServerH2, AnswersBodiesHeadsStreamsAndRanges) {
  corio_testing::TempDir dir;
  run_bounded(answers_body(&dir), 10s);
}

Coro<Response> tag(Request& req, corio::http::Next next) {
  Response resp = co_await next(req);
  resp.headers.set("X-Middleware", "yes");
  co_return resp;
}

Coro<void> middleware_body() {
  Server server(quiet());
  server.get("/v", version);
  server.use(tag);
  server.on_error([](const Request&, const corio::http::HTTPException& e) {
    return Response::text("shaped " + std::to_string(e.status()), e.status());
  });
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  requests.push_back(req("GET", "/nowhere"));
  requests.push_back(req("POST", "/v", "x"));
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), std::move(requests));
  EXPECT_EQ(r[0].status, 404);
  EXPECT_EQ(r[0].body, "shaped 404");
  EXPECT_EQ(r[0].headers.get_or("x-middleware", ""), "yes");
  EXPECT_EQ(r[1].status, 405);
  EXPECT_EQ(r[1].headers.get_or("x-middleware", ""), "yes");
  server.close();
}

TEST(ServerH2, MiddlewareAndTheErrorHookApply) { run_bounded(middleware_body(), 10s); }

// Six bodies of 200 KB at once: past a stream's window (64 KiB) and the
// connection's (1 MiB), so every byte came through windows the handlers'
// reads opened.
Coro<void> bodies_body() {
  Server server(quiet());
  server.post("/echo", echo);
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  for (int i = 0; i < 6; ++i) requests.push_back(req("POST", "/echo", sample(200'000 + i)));
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), requests);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r[i].status, 200);
    EXPECT_EQ(r[i].body, sample(200'000 + i)) << i;
  }
  server.close();
}

TEST(ServerH2, RequestBodiesFlowThroughTheWindows) { run_bounded(bodies_body(), 20s); }

Coro<Response> megabyte(Request&) { co_return Response::text(sample(1 << 20)); }

Coro<void> in_pieces(corio::http::StreamResponseWriter& w) {
  const std::string all = sample(300'000);
  for (std::size_t at = 0; at < all.size(); at += 7'000) {
    co_await w.write(std::string_view(all).substr(at, 7'000));
  }
}

Coro<Response> streamed_large(Request&) { co_return Response::stream(in_pieces, 200, "text/plain"); }

// Answers past the windows from each source, their DATA payloads sent from
// the streams' buffers (no copy): a whole body of 1 MiB (a mapping of its
// own, so a payload sent after its buffer was freed would fault), a file,
// a stream; each twice, together on one connection.
Coro<void> large_answers_body(const corio_testing::TempDir* dir) {
  write_file(dir->path() / "big.bin", sample(500'000));
  Server server(quiet());
  server.get("/whole", megabyte);
  server.get("/stream", streamed_large);
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  for (int i = 0; i < 2; ++i) {
    requests.push_back(req("GET", "/whole"));
    requests.push_back(req("GET", "/files/big.bin"));
    requests.push_back(req("GET", "/stream"));
  }
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), requests);
  const std::string expected[] = {sample(1 << 20), sample(500'000), sample(300'000)};
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].status, 200);
    EXPECT_TRUE(r[i].body == expected[i % 3]) << requests[i].path << ": " << r[i].body.size() << " bytes";
  }
  server.close();
}

TEST(ServerH2, LargeAnswersArriveWholeThroughTheWindows) {
  corio_testing::TempDir dir;
  run_bounded(large_answers_body(&dir), 20s);
}

Coro<void> limits_body() {
  ServerOptions opts = quiet();
  opts.limits.max_headers = 4;
  opts.limits.max_body = 1000;
  Server server(opts);
  server.post("/echo", echo);
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  requests.push_back(req("POST", "/echo", "x"));
  for (int i = 0; i < 8; ++i) requests[0].fields.emplace_back("x-field-" + std::to_string(i), "v");
  requests.push_back(req("POST", "/echo", sample(5000)));
  requests.push_back(req("POST", "/echo", "small"));
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), std::move(requests));
  EXPECT_EQ(r[0].status, 431);
  EXPECT_EQ(r[1].status, 413);
  EXPECT_EQ(r[2].status, 200);  // the connection's other streams are unharmed
  EXPECT_EQ(r[2].body, "small");
  server.close();
}

TEST(ServerH2, HeadAndBodyLimitsAnswer431And413) { run_bounded(limits_body(), 10s); }


// The types of the frames the server sends until it closes the connection.
Coro<std::vector<int>> frames_until_eof(StreamReader& r) {
  std::vector<int> types;
  for (const h2::Frame& f : (co_await h2::read_until_eof(r)).frames) types.push_back(f.type);
  co_return types;
}

constexpr int kGoaway = h2::kGoaway;

// A connection with no stream for idle_timeout says goodbye and closes.
Coro<void> idle_body() {
  ServerOptions opts = quiet();
  opts.idle_timeout = 50ms;
  Server server(opts);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening());
  const std::vector<int> types = co_await frames_until_eof(c.reader);
  CO_ASSERT(!types.empty());
  EXPECT_EQ(types.back(), kGoaway);
  server.close();
}

TEST(ServerH2, IdleConnectionGetsGoawayAndCloses) { run_bounded(idle_body(), 10s); }

// A request head that never completes (a HEADERS frame whose CONTINUATION
// never comes) is no request: the idle timeout still ends the connection.
Coro<void> trickle_body() {
  ServerOptions opts = quiet();
  opts.idle_timeout = 50ms;
  Server server(opts);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  // HEADERS on stream 1 without END_HEADERS: ":method: GET" (HPACK index 2).
  constexpr std::string_view kOpenHead{"\0\0\x01\x01\0\0\0\0\x01\x82", 10};
  c.writer.write(h2::opening() + std::string(kOpenHead));
  const std::vector<int> types = co_await frames_until_eof(c.reader);
  CO_ASSERT(!types.empty());
  EXPECT_EQ(types.back(), kGoaway);
  server.close();
}

TEST(ServerH2, AnUnfinishedHeadDoesNotHoldTheConnection) { run_bounded(trickle_body(), 10s); }

// A request and the client's end in one read: the request's task is
// cancelled before its first step, and the connection still ends (a
// shutdown does not wait for it until its deadline, far past the bound).
Coro<void> gone_body() {
  Server server(quiet());
  server.get("/", version);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  // HEADERS on stream 1, END_STREAM | END_HEADERS: GET / http, :authority "h".
  constexpr std::string_view kGet{"\0\0\x06\x01\x05\0\0\0\x01\x82\x84\x86\x41\x01h", 15};
  c.writer.write(h2::opening() + std::string(kGet));
  c.writer.close();
  co_await c.writer.wait_closed();
  // Time for the server to read both; were the shutdown first, the test
  // would pass without the case it is for, never fail.
  co_await corio::sleep(10ms);
  co_await server.shutdown(60s);
}

TEST(ServerH2, ARequestCancelledBeforeItRanStillEnds) { run_bounded(gone_body(), 10s); }

// A connection that ends under a running handler leaves no timer of its
// own behind. The handler is cancelled while nghttp2 still holds its
// stream open, and as it ended it used to arm a stall timer (and the
// erased stream an idle one) that outlived the connection and fired into
// its freed memory: servers crashed under h2load (bench/run --suite http2).
struct Held {
  corio::Event started;
  bool cancelled = false;
};

Coro<Response> held(Held* h, Request&) {
  h->started.set();
  try {
    co_await corio::Event().wait();  // never set: ends by cancellation
  } catch (const corio::CancelledError&) {
    h->cancelled = true;
    throw;
  }
  co_return Response::text("never");
}

// GET /held on a connection of its own, closed by the client once the
// handler runs; back once the handler was cancelled and the connection had
// time to end.
Coro<void> held_connection(std::uint16_t port, Held& h) {
  RawClient c = co_await connect(port);
  // HEADERS on stream 1, END_STREAM | END_HEADERS: GET /held http, :authority "h".
  constexpr std::string_view kGet{"\0\0\x0c\x01\x05\0\0\0\x01\x82\x86\x41\x01h\x04\x05/held", 21};
  c.writer.write(h2::opening() + std::string(kGet));
  co_await h.started.wait();
  c.writer.close();
  co_await c.writer.wait_closed();
  while (!h.cancelled) co_await corio::sleep(1ms);
  co_await corio::sleep(10ms);  // the connection ends after its streams' tasks
}

// The first connection arms what any connection leaves armed (the
// server's sweeper); the second must leave nothing more.
Coro<void> ended_under_handler_body() {
  Held first;
  Held second;
  Held* now = &first;
  Server server(quiet());
  server.get("/held", [&now](Request& r) { return held(now, r); });
  co_await server.start("127.0.0.1", 0);
  co_await held_connection(server.port(), first);
  const std::size_t timers = corio::get_running_loop().stats().timers;
  now = &second;
  co_await held_connection(server.port(), second);
  EXPECT_EQ(corio::get_running_loop().stats().timers, timers);
  server.close();
}

TEST(ServerH2, AConnectionEndedUnderAHandlerLeavesNoTimer) {
  run_bounded(ended_under_handler_body(), 10s);
}

// close() sends GOAWAY before it closes an h2 connection.
Coro<void> close_body() {
  Server server(quiet());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening());
  while (c.reader.buffered().size() < 9) CO_ASSERT(co_await c.reader.fill_buffer() > 0);
  server.close();
  const std::vector<int> types = co_await frames_until_eof(c.reader);
  CO_ASSERT(!types.empty());
  EXPECT_EQ(types.back(), kGoaway);
}

TEST(ServerH2, CloseSendsGoaway) { run_bounded(close_body(), 10s); }

// Handlers held in pairs at a barrier, six requests sent before the
// client saw the server's SETTINGS: with max_concurrent_streams 2 no more
// than two run at once, and a stream past the cap is refused
// (REFUSED_STREAM, safe to retry), never left waiting.
struct InFlight {
  corio::Barrier pairs{2};
  int now = 0;
  int most = 0;
};

Coro<Response> paired(InFlight* f, Request&) {
  f->most = std::max(f->most, ++f->now);
  co_await f->pairs.wait();
  --f->now;
  co_return Response::text("ok");
}

Coro<void> streams_cap_body() {
  InFlight in_flight;
  ServerOptions opts = quiet();
  opts.max_concurrent_streams = 2;
  Server server(opts);
  server.get("/pair", [&in_flight](Request& r) { return paired(&in_flight, r); });
  co_await server.start("127.0.0.1", 0);
  std::vector<H2Request> requests;
  for (int i = 0; i < 6; ++i) requests.push_back(req("GET", "/pair"));
  const std::vector<H2Reply> r = co_await h2_requests(server.port(), std::move(requests));
  int answered = 0;
  for (const H2Reply& reply : r) {
    if (reply.reset == NGHTTP2_REFUSED_STREAM) continue;
    EXPECT_EQ(reply.body, "ok");
    ++answered;
  }
  EXPECT_GE(answered, 2);
  EXPECT_EQ(in_flight.most, 2);
  server.close();
}

TEST(ServerH2, MaxConcurrentStreamsCapsTheStreams) { run_bounded(streams_cap_body(), 10s); }

// A request whose Content-Length is over limits.max_body is refused
// before its body is read, as on HTTP/1.1: a 413 at once (the body never
// comes here), and the handler never runs.
struct Calls {
  int n = 0;
};

Coro<Response> counted_echo(Calls* calls, Request& req) {
  ++calls->n;
  co_return Response::text(co_await req.read());
}

std::string post_head(std::string_view path, std::string_view length) {
  std::string block = "\x83\x86";  // :method POST, :scheme http
  block += h2::hpack_int(0x00, 4, 4) + h2::hpack_string(path);
  block += h2::hpack_int(0x00, 4, 1) + h2::hpack_string("h");
  if (!length.empty())
    block += h2::hpack_int(0x00, 4, 28) + h2::hpack_string(length);  // content-length
  return h2::frame(h2::kHeaders, h2::kEndHeaders, 1, block);
}

Coro<void> early_413_body() {
  Calls calls;
  ServerOptions opts = quiet();
  opts.limits.max_body = 1000;
  Server server(opts);
  server.post("/echo", [&calls](Request& r) { return counted_echo(&calls, r); });
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening() + post_head("/echo", "100000"));
  const h2::Answer a = co_await h2::read_answer(c.reader);
  EXPECT_EQ(a.fields.get_or(":status", ""), "413");
  EXPECT_EQ(calls.n, 0);
  // The rest of the body is not wanted: the stream ends without error
  // (RFC 9113 section 8.1).
  const h2::Answer rest = co_await h2::read_answer(c.reader);
  EXPECT_EQ(rest.reset, std::optional<std::uint32_t>(h2::kNoError));
  c.writer.close();
  server.close();
}

TEST(ServerH2, ContentLengthOverTheLimitIs413BeforeTheBody) { run_bounded(early_413_body(), 10s); }

// Request trailers: a HEADERS frame after the body, read by the handler
// through req.trailers() as a chunked body's are on HTTP/1.1.
Coro<Response> with_trailer(Request& req) {
  const std::string body = co_await req.read();
  co_return Response::text(body + ":" + std::string(req.trailers().get_or("x-checksum", "none")));
}

Coro<void> trailers_body() {
  Server server(quiet());
  server.post("/t", with_trailer);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(h2::opening() + post_head("/t", "") + h2::frame(h2::kData, 0, 1, "abc") +
                 h2::frame(h2::kHeaders, h2::kEndHeaders | h2::kEndStream, 1,
                           h2::literal("x-checksum", "42")));
  const h2::Answer a = co_await h2::read_answer(c.reader);
  EXPECT_EQ(a.fields.get_or(":status", ""), "200");
  EXPECT_EQ(a.body, "abc:42");
  c.writer.close();
  server.close();
}

TEST(ServerH2, RequestTrailersReachTheHandler) { run_bounded(trailers_body(), 10s); }

}  // namespace
}  // namespace corio_http_test
