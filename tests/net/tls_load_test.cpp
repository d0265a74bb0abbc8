// TLS under load: many connections at once, and a large transfer both ways
// at once with flow control.
#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

using corio::SslContext;

Coro<void> one_client(std::uint16_t port, SslContext ctx, int id) {
  auto [reader, writer] = co_await corio::open_connection("localhost", port, tls_options(ctx));
  const std::string line = "client " + std::to_string(id) + "\n";
  EXPECT_EQ(co_await echo_round_trip(reader, writer, line), line);
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> hundred_clients() {
  Server server = co_await tls_echo_server();
  // One context for all, as a program would have: making one parses the
  // system's CA bundle.
  const SslContext ctx = trusting_client();
  std::vector<Coro<void>> clients;
  for (int i = 0; i < 100; ++i) clients.push_back(one_client(server.port(), ctx, i));
  co_await corio::gather(std::move(clients));
  server.close();
  co_await server.wait_closed();
}

TEST(TlsLoad, HundredConcurrentConnections) { run_bounded(hundred_clients(), 60s); }

constexpr std::size_t kBig = 8 * 1024 * 1024;

// Byte i of the big transfer: not periodic in any record or chunk size.
char big_byte(std::size_t i) { return static_cast<char>((i * 7919 + i / 65521) & 0xff); }

// Echoes chunk by chunk until EOF, with drain: the client sends and reads
// at once, so neither side's buffers fill up for good.
Coro<void> echo_chunks(StreamReader reader, StreamWriter writer) {
  for (;;) {
    std::string chunk = co_await reader.read(256 * 1024);
    if (chunk.empty()) break;
    writer.write(chunk);
    co_await writer.drain();
  }
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> send_big(StreamWriter writer) {
  std::string chunk;
  for (std::size_t sent = 0; sent < kBig; sent += chunk.size()) {
    chunk.resize(std::min<std::size_t>(300 * 1000, kBig - sent));
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = big_byte(sent + i);
    writer.write(chunk);
    co_await writer.drain();
  }
  writer.write_eof();
}

Coro<std::size_t> receive_big(StreamReader reader) {
  std::size_t got = 0;
  std::size_t wrong = 0;
  for (std::string chunk; !(chunk = co_await reader.read(1 << 20)).empty();) {
    for (std::size_t i = 0; i < chunk.size(); ++i) wrong += chunk[i] != big_byte(got + i);
    got += chunk.size();
  }
  EXPECT_EQ(wrong, 0u);
  co_return got;
}

Coro<void> big_transfer() {
  Server server = co_await corio::start_server(echo_chunks, "127.0.0.1", 0, tls_server_options());
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  auto [sent, received] = co_await corio::gather(send_big(writer), receive_big(reader));
  static_cast<void>(sent);
  EXPECT_EQ(received, kBig);
  writer.close();
  co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(TlsLoad, EightMebibytesBothWaysAtOnce) { run_bounded(big_transfer(), 60s); }

}  // namespace
}  // namespace corio_net_test
