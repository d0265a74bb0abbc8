// ServerOptions::min_send_rate against a client that reads a large answer
// a few hundred bytes a second through a small receive buffer: with the
// floor set the server closes it within a bound, whether the answer waits
// in the writer's buffer (an in-memory body) or goes out by sendfile (a
// file); a client that reads at full speed gets the whole answer. Real
// clock, generous bounds: the client's socket is a plain one, read by hand.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/temp_dir.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

// Far more than the kernel's buffers on both sides take at once, so the
// server has to wait for the client (tcp_wmem's maximum is 4 MiB).
constexpr std::size_t kBig = 16u << 20;

Coro<Response> big_body(Request&) { co_return Response::text(std::string(kBig, 'b')); }

Coro<Response> big_file(std::string path, Request&) { co_return Response::file(std::move(path)); }

ServerOptions rate_floor() {
  ServerOptions opts = quiet();
  opts.min_send_rate = 64 * 1024;
  opts.min_send_rate_window = 500ms;
  return opts;
}

// A non-blocking client socket with a 4 KiB receive buffer (set before
// connect, so the window it announces is small from the start).
int connect_small_window(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int size = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Loopback: the kernel completes the handshake without the loop's accept.
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::system_error(errno, std::generic_category(), "connect");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Whether the server ended the connection: a reset (or a FIN) shows in
// poll() at once, where recv() would first return the bytes still queued.
bool ended(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP | POLLRDHUP)) != 0;
}

// Asks for target, then reads 32 bytes every 100 ms (320 B/s): the seconds
// until the server ended the connection, -1 if it still had not after limit.
Coro<double> read_slowly_until_closed(std::uint16_t port, std::string target, double limit) {
  const int fd = connect_small_window(port);
  const std::string request = "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
  const double t0 = corio::get_running_loop().time();
  double took = -1;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    while (corio::get_running_loop().time() - t0 < limit) {
      char piece[32];
      const ssize_t n = ::recv(fd, piece, sizeof piece, 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || ended(fd)) {
        took = corio::get_running_loop().time() - t0;  // EOF or a reset: closed
        break;
      }
      co_await corio::sleep(100ms);
    }
  }
  ::close(fd);
  co_return took;
}

Coro<void> slow_reader_body(std::string file) {
  Server server(rate_floor());
  server.get("/body", big_body);
  server.get("/file", [file](Request& req) { return big_file(file, req); });
  co_await server.start("127.0.0.1", 0);
  for (const char* target : {"/body", "/file"}) {
    const double took = co_await read_slowly_until_closed(server.port(), target, 8.0);
    EXPECT_GE(took, 0.0) << target << ": still open after 8 s, at 320 B/s";
    // Not before a window's worth of waiting for the client.
    if (took >= 0) {
      EXPECT_GE(took, 0.5) << target;
    }
  }
  co_await server.shutdown(1s);
}

TEST(HttpServerSendRate, ASlowReaderIsClosedBelowTheMinimumSendRate) {
  corio_testing::TempDir dir;
  const std::string file = (dir.path() / "big.bin").string();
  std::ofstream(file) << std::string(kBig, 'f');
  run_bounded(slow_reader_body(file), 30s);
}

Coro<void> fast_reader_body() {
  Server server(rate_floor());
  server.get("/body", big_body);
  co_await server.start("127.0.0.1", 0);
  const Reply r = co_await exchange(server.port(), "GET /body HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), kBig);
  co_await server.shutdown(1s);
}

TEST(HttpServerSendRate, AClientReadingAtFullSpeedGetsTheWholeAnswer) {
  run_bounded(fast_reader_body(), 30s);
}

}  // namespace
}  // namespace corio_http_test
