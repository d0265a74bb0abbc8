// The HTTP server's bound on what a pipelining client that never reads can
// make it hold: answers wait for the socket, not in memory. (Not on virtual
// time: with a small receive window the kernel's delayed ACKs are waits no
// timer stands for, and the clock would jump to the server's send timeout.)
#include <sys/socket.h>

#include "common/memory.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

constexpr int kRequests = 256;
constexpr std::size_t kBody = 256 * 1024;  // 64 MiB of answers in all

Coro<Response> big(Request&, int* served) {
  ++*served;
  co_return Response::text(std::string(kBody, 'x'));
}

// The client's receive buffer fixed small, so that the kernel holds little
// of what the server sends (autotuning would let it hold tens of MiB).
void shrink_receive_buffer(int fd) {
  const int size = 16 * 1024;
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size), 0);
}

// Large bodies go to the writer directly, past the batch buffer: before the
// writer's buffer counted, every pipelined request was answered into
// memory at once (all 256 served, +64 MiB).
Coro<void> pipelined_flood_body() {
  int served = 0;
  Server server(quiet());
  server.get("/big", [&served](Request& r) { return big(r, &served); });
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  shrink_receive_buffer(c.writer.fileno());
  std::string burst;
  for (int i = 0; i < kRequests; ++i) burst += "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
  const corio_testing::Memory before = corio_testing::memory_now();
  c.writer.write(burst);
  co_await corio::sleep(500ms);  // enough to answer all of them, were nothing holding it back
  // The kernel's buffers (a few MiB) and the writer's high-water mark.
  std::printf("served %d of %d while the client read nothing\n", served, kRequests);
  EXPECT_LT(served, kRequests / 4) << "answered into memory ahead of a client that does not read";
  corio_testing::expect_little_growth_since(before);
  for (int i = 0; i < kRequests; ++i) {
    const Reply r = co_await read_reply(c.reader);
    CO_ASSERT(r.status == 200 && r.body.size() == kBody);
  }
  EXPECT_EQ(served, kRequests);
  c.writer.close();
  co_await server.shutdown(1s);
}

TEST(HttpServerBound, APipeliningClientThatDoesNotReadIsAnsweredAsItReads) {
  run_bounded(pipelined_flood_body(), 60s);
}

}  // namespace
}  // namespace corio_http_test
