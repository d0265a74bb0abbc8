// WebSocket interop with real peers (tests/http/ws-peers): Debian's
// python3-websockets and the npm `ws` package, each as client of corio's
// server and as server for corio's client, with permessage-deflate and
// without. Each exchange: text (UTF-8), binary, empty, 1 MiB and
// incompressible 300 kB messages, 30 messages alike (the compressed ones
// each after corio freed and re-made its zlib streams, its inflater's
// window carried over when the peer takes its context over), fragmented
// messages both ways, a ping, and a close with code 4000 that the other
// side echoes.
//
// Labelled `interop` (tests/CMakeLists.txt): the sanitizer passes leave it
// out. A missing peer skips its test (scripts/setup installs them).
#include <filesystem>

#include "http/client_support.hpp"
#include "common/programs.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

namespace fs = std::filesystem;
using corio_http_test::PeerProcess;
using corio_testing::Ran;
using corio_http_test::run_bounded;

fs::path peers() { return fs::path(CORIO_TESTS_DIR) / "http" / "ws-peers"; }

bool have_python_websockets() {
  return std::system((corio_http_test::python() + " -c 'import websockets' 2>/dev/null").c_str()) == 0;
}

bool have_node_ws() {
  return corio_testing::has_program("node") && fs::exists(peers() / "node_modules" / "ws");
}

std::vector<std::string> peer_command(bool python, std::vector<std::string> args, bool compress) {
  std::vector<std::string> argv;
  if (python) {
    argv = {corio_http_test::python(), "-u", (peers() / "py_peer.py").string()};
  } else {
    argv = {"node", (peers() / "node_peer.mjs").string()};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  if (!compress) argv.push_back("--plain");
  return argv;
}

// The peer as client of corio's echo server.
Coro<void> peer_client_body(bool python, bool compress) {
  WsOptions sopts;
  sopts.max_msg_size = 1 << 24;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  std::vector<std::string> argv = peer_command(python, {"client", ws_url(es.server.port())}, compress);
  const std::string program = argv.front();
  argv.erase(argv.begin());
  const Ran ran = co_await corio_testing::run_program(program, argv, 60s);
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_EQ(ran.out, "ok\n") << ran.err;
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 4000);
  EXPECT_EQ(es.seen.close_reason, "done");
  es.server.close();
}

// corio's client against the peer's echo server.
Coro<void> corio_client_body(std::uint16_t port, bool compress) {
  ClientSession session;
  WsOptions opts;
  opts.deflate.enabled = compress;
  opts.max_msg_size = 1 << 24;
  WebSocket ws = co_await session.ws_connect(ws_url(port, "/"), opts);
  EXPECT_EQ(ws.compressed(), compress);
  co_await expect_echoes(ws);
  co_await expect_alike_echoes(ws, 30);  // streams freed and made again between them
  co_await ws.ping("hi");
  co_await ws.close(4000, "done");
  EXPECT_EQ(ws.close_code(), 4000) << ws.close_reason();
  // Fragmented, on a second connection: small frames, compressed or not.
  opts.max_fragment = 1000;
  opts.deflate.min_size = 0;
  WebSocket frag = co_await session.ws_connect(ws_url(port, "/"), opts);
  const std::string text = "fragments " + std::string(5000, 'x');
  co_await frag.send_str(text);
  const std::optional<WsMessage> back = co_await frag.receive();
  CO_ASSERT(back);
  EXPECT_EQ(back->data, text);
  co_await frag.close();
  co_await session.close();
}

void corio_client_against(bool python, bool compress) {
  PeerProcess peer(peer_command(python, {"server"}, compress));
  const std::uint16_t port = peer.read_port();
  run_bounded(corio_client_body(port, compress), 60s);
}

// (peer, compressed): python3-websockets or npm ws, with permessage-deflate or without.
struct Peer {
  bool python;
  bool compress;
};

class WebSocketInterop : public ::testing::TestWithParam<Peer> {
 protected:
  void SetUp() override {
    if (GetParam().python && !have_python_websockets()) GTEST_SKIP() << "python3-websockets is not installed";
    if (!GetParam().python && !have_node_ws()) {
      GTEST_SKIP() << "node or tests/http/ws-peers/node_modules (npm ci) is missing";
    }
  }
};

TEST_P(WebSocketInterop, PeerClientToCorioServer) {
  run_bounded(peer_client_body(GetParam().python, GetParam().compress), 90s);
}

TEST_P(WebSocketInterop, CorioClientToPeerServer) {
  corio_client_against(GetParam().python, GetParam().compress);
}

INSTANTIATE_TEST_SUITE_P(Peers, WebSocketInterop,
                         ::testing::Values(Peer{true, true}, Peer{true, false}, Peer{false, true},
                                           Peer{false, false}),
                         [](const ::testing::TestParamInfo<Peer>& info) {
                           return std::string(info.param.python ? "PythonWebsockets" : "NodeWs") +
                                  (info.param.compress ? "Compressed" : "Plain");
                         });

}  // namespace
}  // namespace corio_ws_test
