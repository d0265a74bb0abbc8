// An idle TLS connection (issue 28): its reader waits for readability as
// over a plain socket, holding no buffer, and close()'s goodbye shares the
// socket with a read that waits.
#include <malloc.h>

#include <vector>

#include <corio/detail/sanitizers.hpp>

#include "net/byte_buffer.hpp"
#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

using corio::detail::BufferPool;
using corio::detail::buffer_storage;

Coro<void> yield_a_few() {
  for (int i = 0; i < 4; ++i) co_await corio::sleep(0s);
}

Coro<void> idle_tls_holds_no_buffer() {
  const std::size_t out_before = BufferPool::blocks_out();
  Server server = co_await tls_echo_server();
  auto [reader, writer] = co_await corio::open_connection("localhost", server.port(), tls_options());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "ping\n"), "ping\n");
  // Both ends now wait for a line: the server's handler, and this read.
  Task<std::string> waiting = corio::create_task(reader.readline());
  co_await yield_a_few();
  EXPECT_FALSE(waiting.done());
  EXPECT_EQ(buffer_storage(reader), 0u);
  EXPECT_EQ(BufferPool::blocks_out(), out_before)
      << "neither end holds a block while it waits (ciphertext or plaintext)";
  writer.write("pong\n");
  EXPECT_EQ(co_await waiting, "pong\n");
  writer.close();
  co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(TlsIdle, AWaitingConnectionHoldsNoBuffer) { run_bounded(idle_tls_holds_no_buffer()); }

std::size_t heap_in_use() { return mallinfo2().uordblks; }

// OpenSSL's record buffers (a read and a write buffer, about 17 KiB each)
// are kept while a connection is busy and given back once it has been
// quiet for a moment (TlsSession::rest()). 16 connections that made a
// round trip each: right after it, an end holds about 54 KiB in malloc's
// count (its SSL state, about 21 KiB, and the two buffers); once quiet,
// within a bounded wait, less than two buffers' worth.
Coro<void> quiet_connections_give_openssl_buffers_back() {
  constexpr std::size_t kConnections = 16;
  constexpr std::size_t kEnds = 2 * kConnections;  // client and server in this process
  constexpr std::size_t kQuietEnd = 32 * 1024;
  Server server = co_await tls_echo_server();
  const corio::ConnectOptions options = tls_options();  // one client context for all
  const std::size_t before = heap_in_use();
  std::vector<std::pair<StreamReader, StreamWriter>> conns;
  for (std::size_t i = 0; i < kConnections; ++i) {
    conns.push_back(co_await corio::open_connection("localhost", server.port(), options));
  }
  for (auto& [reader, writer] : conns) {
    EXPECT_EQ(co_await echo_round_trip(reader, writer, "ping\n"), "ping\n");
  }
  std::size_t per_end = SIZE_MAX;
  for (int i = 0; i < 100 && per_end >= kQuietEnd; ++i) {
    co_await corio::sleep(50ms);
    const std::size_t now = heap_in_use();
    per_end = now > before ? (now - before) / kEnds : 0;
  }
  EXPECT_LT(per_end, kQuietEnd) << "bytes per quiet TLS connection end";
  for (auto& [reader, writer] : conns) writer.close();
  for (auto& [reader, writer] : conns) co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(TlsIdle, QuietConnectionsGiveOpenSslBuffersBack) {
  if (corio::detail::kSanitized) GTEST_SKIP() << "the sanitizers' allocator keeps its own count";
  run_bounded(quiet_connections_give_openssl_buffers_back());
}

Coro<std::string> read_all(StreamReader reader) { co_return co_await reader.read(); }

// The read waits for readability when close() starts: the goodbye waits for
// the reader's next try (one waiter per socket), which reads the server's
// close_notify: the read ends at EOF and the close completes.
Coro<void> close_while_a_read_waits() {
  Server server = co_await tls_echo_server();
  auto [reader, writer] = co_await corio::open_connection("localhost", server.port(), tls_options());
  Task<std::string> waiting = corio::create_task(read_all(reader));
  co_await yield_a_few();
  EXPECT_FALSE(waiting.done());
  writer.close();
  co_await writer.wait_closed();
  EXPECT_EQ(co_await waiting, "");
  server.close();
  co_await server.wait_closed();
}

TEST(TlsIdle, CloseWhileAReadWaits) { run_bounded(close_while_a_read_waits()); }

}  // namespace
}  // namespace corio_net_test
