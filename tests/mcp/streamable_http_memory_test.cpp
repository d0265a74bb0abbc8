// What an idle Streamable HTTP session costs the server: the heap in use
// (malloc's own count, mallinfo2) grown over many sessions opened
// (initialize, then notifications/initialized) on one kept-alive
// connection, so the connection's own cost is not in it. A bound on bytes
// allocated, not on RSS or time; nothing is checked under the sanitizers,
// which replace malloc.
#include <malloc.h>

#include "common/memory.hpp"
#include "common/support.hpp"
#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

constexpr int kSessions = 1000;
// Measured (glibc, this build): 7,357 B before the sessions were trimmed,
// 2,902 B after, 888 B once a session kept no task (its POSTs feed it) and
// shared its client's JSON. A margin over that; issue 28's goal is 2 KiB
// with the connection (docs/mcp.md, "What an idle session costs").
constexpr std::size_t kMaxBytesPerSession = 1280;

std::size_t heap_in_use() { return mallinfo2().uordblks; }

Coro<void> idle_sessions_body() {
  corio::mcp::StreamableHttpOptions opts;
  opts.max_sessions = kSessions + 8;
  HttpFixture f(opts);
  co_await f.start();
  // The first sessions warm what every later one shares (the connection's
  // buffers, the frame pool, the endpoint's timer).
  constexpr int kWarmUp = 8;
  for (int i = 0; i < kWarmUp; ++i) co_await f.open_session();
  const std::size_t before = heap_in_use();
  for (int i = 0; i < kSessions; ++i) co_await f.open_session();  // the ids are not kept here
  const std::size_t after = heap_in_use();
  const std::size_t per_session = (after - before) / kSessions;
  std::printf("heap per idle session: %zu B\n", per_session);
  EXPECT_EQ(f.endpoint.session_count(), std::size_t{kWarmUp + kSessions});
  if (corio_testing::kMemoryIsMeasurable) {
    EXPECT_LT(per_session, kMaxBytesPerSession);
  }
  co_await f.stop();
}

TEST(StreamableHttpMemory, AnIdleSessionCostsLittleHeap) { run_test(idle_sessions_body()); }

}  // namespace
}  // namespace corio_mcp_test
