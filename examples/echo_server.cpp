// A TCP echo server: asyncio's streams example, line by line.
//
//   async def handle_echo(reader, writer):
//       while line := await reader.readline():
//           writer.write(line)
//           await writer.drain()
//       writer.close()
//       await writer.wait_closed()
//
//   async def main():
//       server = await asyncio.start_server(handle_echo, "127.0.0.1", 8888)
//       async with server:
//           await server.serve_forever()
//
// Each connection runs as its own task; one slow client never holds up the
// others. Run it, then `example_echo_client` (or `nc 127.0.0.1 8888`).
// Ctrl-C stops it: corio::run() turns SIGINT into cancelling main.
#include <cstdio>
#include <string>

#include <corio/corio.hpp>

corio::Coro<> handle_echo(corio::StreamReader reader, corio::StreamWriter writer) {
  const std::string peer = writer.get_extra_info("peername");
  std::printf("%s connected\n", peer.c_str());
  for (;;) {
    std::string line = co_await reader.readline();
    if (line.empty()) break;  // EOF
    writer.write(line);
    co_await writer.drain();
  }
  std::printf("%s left\n", peer.c_str());
  writer.close();
  co_await writer.wait_closed();
}

corio::Coro<> main_coro(std::uint16_t port) {
  corio::ClientConnected handler = handle_echo;
  corio::Server server = co_await corio::start_server(handler, "127.0.0.1", port);
  std::printf("serving on %s\n", server.sockets().front().to_string().c_str());
  std::fflush(stdout);
  co_await server.serve_forever();
}

int main(int argc, char** argv) {
  const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8888);
  return corio::run_main(main_coro(port));  // Ctrl-C: exit status 130
}
