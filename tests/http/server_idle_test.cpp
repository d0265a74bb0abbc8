// What a kept-alive connection holds between requests (issue 28): no
// buffer (the streams' storage is back in the pool once a request was
// answered), and a request state that goes back to the loop's bounded
// spares. Requests that arrive with the previous one, byte by byte, or with
// a large body are served as before.
#include "http/server/server_connection.hpp"
#include "http/server_support.hpp"
#include "net/byte_buffer.hpp"

namespace corio_http_test {
namespace {

using corio::detail::BufferPool;

// Counts the body's bytes as they stream in, holding none of them.
Coro<Response> count_body(Request& req) {
  std::size_t total = 0;
  for (;;) {
    const std::string piece = co_await req.read_chunk();
    if (piece.empty()) break;
    total += piece.size();
  }
  co_return Response::text(std::to_string(total));
}

Coro<void> start(Server& server) {
  server.get("/hello", hello);
  server.post("/count", count_body);
  co_await server.start("127.0.0.1", 0);
}

Coro<void> idle_connections_hold_no_buffer() {
  Server server(quiet());
  co_await start(server);
  std::vector<RawClient> clients = co_await kept_alive_clients(server.port(), 20);
  // Every answer was read whole, so the clients' buffers are drained too:
  // on this thread, nobody holds a block.
  EXPECT_EQ(BufferPool::blocks_out(), 0u) << "20 idle keep-alive connections hold no buffer";
  co_await close_then_shutdown(server, std::move(clients));
}

TEST(HttpServerIdle, KeptAliveConnectionsHoldNoBuffer) {
  run_bounded(idle_connections_hold_no_buffer());
}

Coro<void> pipelined_in_one_read() {
  Server server(quiet());
  co_await start(server);
  RawClient c = co_await connect(server.port());
  // One send: the second request is in the same read as the first, and the
  // third's body too; the connection never waits in between.
  c.writer.write(kGetHello + "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde" + kGetHello);
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  EXPECT_EQ((co_await read_reply(c.reader)).body, "5");
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  EXPECT_EQ(BufferPool::blocks_out(), 0u);
  co_await close_then_shutdown(server, c);
}

TEST(HttpServerIdle, PipelinedRequestsInOneReadAreServed) { run_bounded(pipelined_in_one_read()); }

// Twice on one kept-alive connection: POST /count with `body`, sent in
// pieces of `piece` bytes each read on its own (0: all at once).
Coro<void> post_twice(std::string body, std::size_t piece) {
  Server server(quiet());
  co_await start(server);
  RawClient c = co_await connect(server.port());
  const std::string request =
      "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t at = 0; at < request.size(); at += piece == 0 ? request.size() : piece) {
      c.writer.write(std::string_view(request).substr(at, piece == 0 ? request.size() : piece));
      if (piece != 0) co_await corio::sleep(1ms);  // its own segment, read on its own
    }
    EXPECT_EQ((co_await read_reply(c.reader)).body, std::to_string(body.size()));
  }
  EXPECT_EQ(BufferPool::blocks_out(), 0u) << "the request's buffers went back once it was read";
  co_await close_then_shutdown(server, c);
}

TEST(HttpServerIdle, ARequestSplitByteByByteIsParsed) { run_bounded(post_twice("xyz", 1)); }

TEST(HttpServerIdle, LargeBodiesStillStream) {
  run_bounded(post_twice(std::string(std::size_t{4} << 20, 'b'), 0));
}

TEST(HttpServerIdle, SpareRequestStatesAreBounded) {
  using corio::http::detail::LoopServer;
  using corio::http::detail::RequestState;
  auto shared = std::make_shared<corio::http::detail::ServerShared>();
  auto loop_server = std::make_shared<LoopServer>(shared);
  std::vector<std::unique_ptr<RequestState>> burst;
  for (int i = 0; i < 200; ++i) burst.push_back(loop_server->take_request_state());
  for (auto& st : burst) loop_server->give_back(std::move(st));
  EXPECT_EQ(loop_server->spare_request_states(), 64u) << "the rest of the burst was freed";
  std::unique_ptr<RequestState> st = loop_server->take_request_state();
  EXPECT_EQ(loop_server->spare_request_states(), 63u) << "reused, not made";
  st->out.assign(1 << 20, 'x');  // a large pipelined batch
  loop_server->give_back(std::move(st));
  EXPECT_EQ(loop_server->spare_request_states(), 63u) << "one grown past the limit is not kept";
}

}  // namespace
}  // namespace corio_http_test
