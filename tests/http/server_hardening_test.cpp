// The server against hostile or broken peers, from raw sockets: Host and
// request-target forms, chunk extensions, closing in stages after an error,
// unread and broken bodies, the body, send and connection limits.
#include "http/server_support.hpp"
#include <corio/testing/virtual_clock.hpp>

namespace corio_http_test {
namespace {

Coro<Response> echo(Request& req) { co_return Response::text(co_await req.read()); }

Coro<Response> host_of(Request& req) {
  co_return Response::text(std::string(req.headers().get_or("Host", "")) + " " + req.path());
}

Coro<void> start(Server& server) {
  server.get("/hello", hello);
  server.post("/hello", hello);  // never reads its body
  server.post("/echo", echo);
  server.get("/host", host_of);
  co_await server.start("127.0.0.1", 0);
}

// Quiet options with one field set.
template <class T>
ServerOptions quiet_with(T ServerOptions::*field, T value) {
  ServerOptions opts = quiet();
  opts.*field = value;
  return opts;
}

std::string get(std::string_view target, std::string_view host = "x") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
}

// Sends bytes on a new connection: the answer's status, and whether it said
// "Connection: close" and the server then closed.
struct Closing {
  int status = 0;
  bool closed = false;
};

Coro<Closing> send_and_see(std::uint16_t port, std::string bytes) {
  RawClient c = co_await connect(port);
  c.writer.write(bytes);
  Reply r = co_await read_reply(c.reader);
  const bool said_close = r.headers.get_or("Connection", "") == "close";
  co_return Closing{r.status, said_close && co_await closed_by_server(c.reader)};
}

Coro<void> host_body() {
  Server server(quiet());
  co_await start(server);
  for (const char* host : {"a b", "a/b", "a@b", "a:b:c", "[::1", "a:port", "a,b", "a\tb"}) {
    const Closing r = co_await send_and_see(server.port(), get("/hello", host) + get("/hello"));
    EXPECT_EQ(r.status, 400) << host;
    EXPECT_TRUE(r.closed) << host;
  }
  RawClient c = co_await connect(server.port());
  for (const char* host : {"example.org", "example.org:8080", "127.0.0.1:80", "[::1]", "[::1]:80"}) {
    c.writer.write(get("/hello", host));
    Reply r = co_await read_reply(c.reader);
    EXPECT_EQ(r.status, 200) << host;
    EXPECT_FALSE(r.headers.contains("Connection")) << host << ": kept alive";
  }
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, HostMustBeAnAuthority) { run_bounded(host_body()); }

Coro<void> chunk_ext_body() {
  Server server(quiet());
  co_await start(server);
  const std::string post = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const char* size_line : {"2;", "3;a=\"b", "3;f@o=1"}) {
    const Closing r = co_await send_and_see(
        server.port(), post + size_line + "\r\nabc\r\n0\r\n\r\n" + get("/hello"));
    EXPECT_EQ(r.status, 400) << size_line;
    EXPECT_TRUE(r.closed) << size_line;
  }
  Reply ok = co_await exchange(server.port(), post + "3;a=\"b\";c\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(ok.body, "abc");
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, ChunkExtensionsAreStrict) { run_bounded(chunk_ext_body()); }

Coro<Response> tunnel(Request& req) {
  EXPECT_EQ(req.match_info().size(), 1u);
  co_return Response::text("would tunnel to " + req.match_info().at(0).second);
}

Coro<void> target_forms_body() {
  Server server(quiet());
  co_await start(server);
  const std::uint16_t port = server.port();
  for (const char* line : {"GET hello HTTP/1.1", "GET * HTTP/1.1", "POST x:80 HTTP/1.1"}) {
    const Closing r = co_await send_and_see(port, std::string(line) + "\r\nHost: x\r\n\r\n");
    EXPECT_EQ(r.status, 400) << line;
    EXPECT_TRUE(r.closed) << line;
  }
  const Closing refused = co_await send_and_see(port, "CONNECT x:80 HTTP/1.1\r\nHost: x:80\r\n\r\n");
  EXPECT_EQ(refused.status, 501);
  EXPECT_TRUE(refused.closed);
  EXPECT_EQ((co_await exchange(port, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")).status, 404)
      << "no route for *, but a well-formed request";

  // RFC 9112 section 3.2.2: routed by its path; the authority is the Host.
  RawClient c = co_await connect(port);
  c.writer.write(get("http://example.org:8080/host?q=1", "ignored"));
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "example.org:8080 /host");
  c.writer.write(get("HTTP://h"));  // an empty path is "/"
  EXPECT_EQ((co_await read_reply(c.reader)).status, 404);
  co_await server.shutdown(1s);

  Server tunnels(quiet());
  tunnels.route("CONNECT", "/{authority:.*}", tunnel);
  co_await tunnels.start("127.0.0.1", 0);
  RawClient t = co_await connect(tunnels.port());
  t.writer.write("CONNECT db.internal:5432 HTTP/1.1\r\nHost: db.internal:5432\r\n\r\n");
  r = co_await read_reply(t.reader);
  EXPECT_EQ(r.body, "would tunnel to db.internal:5432");
  EXPECT_EQ(r.headers.get_or("Connection", ""), "close");
  co_await tunnels.shutdown(1s);
}

TEST(HttpServerHardening, RequestTargetFormsFollowTheMethod) { run_bounded(target_forms_body()); }

// Bytes the server will not read. Closed at once, the server would leave
// them unread, and the kernel answers unread bytes at close with a reset:
// the client, still sending, can lose the answer (on Linux it reads the
// answer, then ECONNRESET). Closed in stages, the client sees the answer,
// then a clean EOF.
const std::string kRest(256 * 1024, 'z');

Coro<bool> answer_then_clean_eof(std::uint16_t port, std::string bytes, int status) {
  RawClient c = co_await connect(port);
  c.writer.write(bytes);
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.headers.get_or("Connection", ""), "close");
  try {
    const std::string more = co_await corio::wait_for(c.reader.read(), 5s);
    co_return more.empty();
  } catch (const std::system_error& e) {
    ADD_FAILURE() << "after the answer: " << e.what();
    co_return false;
  }
}

Coro<void> lingering_body() {
  ServerOptions opts = quiet();
  opts.limits.max_body = 100'000;
  opts.max_drain = 1000;
  Server server(std::move(opts));
  co_await start(server);
  const std::uint16_t port = server.port();
  // Over max_body in a chunk (256 KiB) the handler reads: 413, found mid-body.
  EXPECT_TRUE(co_await answer_then_clean_eof(
      port, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n40000\r\n" + kRest,
      413));
  // A body the handler did not read, too long to skip.
  EXPECT_TRUE(co_await answer_then_clean_eof(
      port,
      "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 90000\r\n\r\n" + kRest.substr(0, 90000),
      200));
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, ClosesInStagesSoTheClientReadsTheAnswer) {
  run_bounded(lingering_body());
}

// A head announcing a body over the server's limit (max_body 1000): 413 at
// once, then the server lingers.
std::string over_the_limit(std::uint64_t length) {
  return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

ServerOptions small_body_limit(ServerOptions opts = quiet()) {
  opts.limits.max_body = 1000;
  return opts;
}

// Writes `total` bytes of body as the socket takes them; false if the
// connection failed on the way (the server reset it).
Coro<bool> upload(StreamWriter w, std::uint64_t total) {
  const std::string piece(256 * 1024, 'b');
  try {
    for (std::uint64_t sent = 0; sent < total && !w.is_closing(); sent += piece.size()) {
      w.write(piece);
      co_await w.drain();
    }
  } catch (const std::system_error&) {
    co_return false;  // EPIPE, ECONNRESET
  }
  co_return !w.is_closing();
}

// A client uploading 20 MiB over the limit reads its 413 while it sends,
// sends all of it, and then sees a clean EOF: the server read and dropped
// the lot. (It used to stop reading after 1 MiB: the client got a reset
// while sending, as curl's EPIPE.)
Coro<void> big_upload_body() {
  Server server(small_body_limit());
  co_await start(server);
  RawClient c = co_await connect(server.port());
  constexpr std::uint64_t kBody = 20 * 1024 * 1024;
  c.writer.write(over_the_limit(kBody));
  corio::Task<bool> sending = corio::create_task(upload(c.writer, kBody));
  const Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(co_await sending) << "the server reset the connection while the client sent";
  c.writer.write_eof();
  try {
    EXPECT_EQ(co_await corio::wait_for(c.reader.read(), 10s), "") << "then a clean EOF";
  } catch (const std::system_error& e) {
    ADD_FAILURE() << "after the upload: " << e.what();
  }
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, LingeringCloseReadsAWholeLargeUploadSoTheClientSeesThe413) {
  run_bounded(big_upload_body(), 60s);
}

// Sends a little every `every` until stop is set or the connection fails.
Coro<void> drip(StreamWriter w, std::chrono::milliseconds every, corio::Event* stop) {
  for (;;) {
    co_await corio::sleep(every);
    if (stop->is_set() || w.is_closing()) co_return;
    w.write(std::string(1024, 'd'));
  }
}

// Seconds (virtual) until the server let go of a client after its 413, the
// client sending a piece every `every` (none: it sends nothing more). The
// client cannot see it (the server's FIN came with the 413): a second
// connection can, which a server capped at one accepts only then.
Coro<double> lingered_for(ServerOptions opts, std::optional<std::chrono::milliseconds> every) {
  opts.max_connections = 1;
  Server server(small_body_limit(std::move(opts)));
  co_await start(server);
  const double t0 = corio::get_running_loop().time();
  RawClient c = co_await connect(server.port());
  c.writer.write(over_the_limit(1'000'000'000));
  EXPECT_EQ((co_await read_reply(c.reader)).status, 413);
  corio::Event stop;
  std::optional<corio::Task<void>> dripping;
  if (every) dripping = corio::create_task(drip(c.writer, *every, &stop));
  EXPECT_EQ((co_await exchange(server.port(), get("/hello"))).status, 200);
  const double took = corio::get_running_loop().time() - t0;
  stop.set();
  if (dripping) co_await *dripping;
  c.writer.close();
  co_await server.shutdown(1s);
  co_return took;
}

double run_virtual(Coro<double> body) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  return corio::run(std::move(body), {.clock = clock});
}

// A client that never stops sending is cut off at lingering_time, however
// steadily it sends (each piece well within lingering_timeout).
TEST(HttpServerHardening, LingeringCloseEndsAtLingeringTime) {
  ServerOptions opts = quiet();
  opts.lingering_time = 3s;
  opts.lingering_timeout = 1s;
  const double took = run_virtual(lingered_for(opts, 400ms));
  EXPECT_GE(took, 3.0);
  EXPECT_LT(took, 3.5);
}

// One that stops sending (but does not close) is cut off at lingering_timeout.
TEST(HttpServerHardening, LingeringCloseEndsAtLingeringTimeoutOfSilence) {
  ServerOptions opts = quiet();
  opts.lingering_timeout = 1s;
  const double took = run_virtual(lingered_for(opts, std::nullopt));
  EXPECT_GE(took, 1.0);
  EXPECT_LT(took, 1.5) << "lingering_time is 30 s";
}

Coro<void> unread_broken_body() {
  Server server(quiet());
  co_await start(server);
  // The handler answers without reading; the body breaks after its start:
  // found while it is drained, before the answer, which becomes the 400.
  const Closing r = co_await send_and_see(
      server.port(),
      "POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX" + get("/hello"));
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(r.closed) << "a broken body is no ground to keep the connection";
  // So is a bad chunk extension in a body no handler reads (RFC 9112 7.1.1).
  for (const char* size_line : {"2;", "3;a=\"b", "3;f@o=1"}) {
    const Closing unread = co_await send_and_see(
        server.port(), std::string("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") +
                           size_line + "\r\nabc\r\n0\r\n\r\n");
    EXPECT_EQ(unread.status, 400) << size_line;
    EXPECT_TRUE(unread.closed) << size_line;
  }
  // A short unread body is skipped before the answer, which keeps the connection.
  RawClient c = co_await connect(server.port());
  c.writer.write("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
                 get("/hello"));
  EXPECT_FALSE((co_await read_reply(c.reader)).headers.contains("Connection"));
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, UnreadBrokenBodyIsNeverKeptAlive) { run_bounded(unread_broken_body()); }

Coro<void> body_timeout_body() {
  Server server(quiet_with(&ServerOptions::body_timeout, std::chrono::milliseconds(200)));
  co_await start(server);
  RawClient c = co_await connect(server.port());
  c.writer.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
  const double took = co_await seconds_until_closed(c.reader);
  EXPECT_GE(took, 0.0) << "closed";
  EXPECT_LT(took, 5.0) << "the idle timeout (75 s) used to hold it";
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, BodyThatStopsComingIsClosedAtBodyTimeout) {
  run_bounded(body_timeout_body());
}

Coro<void> endless(corio::Event* cut, corio::http::StreamResponseWriter& out) {
  const std::string piece(64 * 1024, 'p');
  try {
    for (;;) co_await out.write(piece);
  } catch (const std::system_error&) {
    cut->set();  // the server gave up on the reader
    throw;
  }
}

Coro<Response> endless_response(corio::Event* cut, Request&) {
  co_return Response::stream(
      [cut](corio::http::StreamResponseWriter& out) { return endless(cut, out); });
}

Coro<void> send_timeout_body(corio::Event* cut) {
  Server server(quiet_with(&ServerOptions::send_timeout, std::chrono::milliseconds(200)));
  server.get("/endless", [cut](Request& req) { return endless_response(cut, req); });
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(get("/endless"));  // and never read
  co_await cut->wait();             // without a send timeout: forever (run_bounded fails it)
  c.writer.abort();
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, SlowReaderIsClosedAtSendTimeout) {
  corio::Event cut;
  run_bounded(send_timeout_body(&cut));
}

Coro<void> max_connections_body() {
  Server server(quiet_with(&ServerOptions::max_connections, std::size_t{2}));
  co_await start(server);
  RawClient a = co_await connect(server.port());
  RawClient b = co_await connect(server.port());
  for (RawClient* c : {&a, &b}) {
    c->writer.write(get("/hello"));
    EXPECT_EQ((co_await read_reply(c->reader)).status, 200);
  }
  RawClient third = co_await connect(server.port());  // the kernel's backlog takes it
  third.writer.write(get("/hello"));
  corio::Task<Reply> answer = corio::create_task(read_reply(third.reader));
  bool answered = true;
  try {
    co_await corio::wait_for(corio::shield(answer), 300ms);
  } catch (const corio::TimeoutError&) {
    answered = false;
  }
  EXPECT_FALSE(answered) << "accepting pauses at the cap";
  a.writer.close();  // one ends: accepting resumes
  EXPECT_EQ((co_await answer).status, 200);
  b.writer.close();
  third.writer.close();
  co_await server.shutdown(1s);
}

TEST(HttpServerHardening, AcceptingPausesAtMaxConnections) { run_bounded(max_connections_body()); }

}  // namespace
}  // namespace corio_http_test
