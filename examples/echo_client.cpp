// A TCP echo client: asyncio's streams example.
//
//   async def tcp_echo_client(message):
//       reader, writer = await asyncio.open_connection("127.0.0.1", 8888)
//       writer.write(message.encode())
//       await writer.drain()
//       data = await reader.readline()
//       print(f"Received: {data.decode()!r}")
//       writer.close()
//       await writer.wait_closed()
//
// With no server running it prints the error (connection refused) and exits 1.
#include <cstdio>
#include <string>
#include <system_error>

#include <corio/corio.hpp>

corio::Coro<> tcp_echo_client(std::string message, std::uint16_t port) {
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  writer.write(message);
  co_await writer.drain();
  const std::string data = co_await reader.readline();
  std::printf("Received: %s", data.c_str());
  writer.close();
  co_await writer.wait_closed();
}

int main(int argc, char** argv) {
  const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8888);
  return corio::run_main(tcp_echo_client("Hello World!\n", port));
}
