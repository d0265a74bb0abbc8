// The real `corio serve` binary against peers that misbehave: a client that
// hangs up while a 1 MB static file is being sent must not kill the server
// (sendfile has no MSG_NOSIGNAL: before the loop ignored SIGPIPE, this was
// exit 141, three times out of three).
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/temp_dir.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

#ifdef CORIO_CLI  // the path of the `corio` tool, when it is built

namespace fs = std::filesystem;

using corio_testing::TempDir;

// Asks for the big file, takes its first bytes, then closes with most of it
// unread: the kernel answers the server's next segments with a reset.
Coro<void> hang_up_mid_file(std::uint16_t port) {
  RawClient c = co_await connect(port);
  c.writer.write("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
  CO_ASSERT(co_await c.reader.fill_buffer() > 0);
  c.writer.abort();
}

Coro<void> serve_survives_body(std::string cli) {
  TempDir root;
  std::ofstream(root.path() / "big.bin") << std::string(1 << 20, 'x');
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  std::vector<std::string> args{"serve", "--root", root.path().string(), "--port", "0", "--quiet"};
  corio::Process proc = co_await corio::create_subprocess_exec(cli, std::move(args), opts);
  const std::uint16_t port = port_of(co_await proc.out.readline());
  // Ten hang-ups: loopback buffers sometimes take the whole megabyte before
  // the reset (without the fix, 5 runs of 6 died; the issue saw 3 of 3).
  for (int i = 0; i < 10; ++i) {
    co_await hang_up_mid_file(port);
    EXPECT_EQ((co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")).status, 200)
        << "try " << i;
  }
  // A graceful shutdown lets the cut transfers finish, so each hits the
  // reset before the server can exit: SIGPIPE would show as -13 here.
  proc.terminate();
  EXPECT_EQ(co_await proc.wait(), 0);
}

TEST(ServeTool, PeerHangingUpMidFileDoesNotKillTheServer) {
  run_bounded(serve_survives_body(CORIO_CLI), 30s);
}

#else

TEST(ServeTool, PeerHangingUpMidFileDoesNotKillTheServer) {
  GTEST_SKIP() << "built without the corio tool";
}

#endif

}  // namespace
}  // namespace corio_http_test
