// The pool's expiry timer: idle connections closed keepalive_timeout after
// they went idle with no request to notice, dead ones dropped on the way,
// and the timer gone with the session and no reason for a loop to run on.
#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;

const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

ClientOptions keepalive(std::chrono::milliseconds timeout) {
  ClientOptions o;
  o.keepalive_timeout = timeout;
  return o;
}

// One request whose connection goes back to the pool; returns when it did.
Coro<double> fetch_ok(ClientSession* s, std::string url) {
  ClientResponse r = co_await s->get(std::move(url));
  EXPECT_EQ(co_await r.text(), "ok");
  co_return corio::get_running_loop().time();
}

Coro<void> wait_client_closed(CannedPeer* peer) {
  co_await corio::wait_for(peer->state->client_closed.wait(), 10s);
  peer->state->client_closed.clear();
}

Coro<void> expires_without_a_request() {
  CannedPeer peer = co_await start_canned_peer(kOk);
  ClientSession s(keepalive(100ms));
  const double idle_since = co_await fetch_ok(&s, peer.url());
  EXPECT_EQ(s.idle_connections(), 1u);
  co_await wait_client_closed(&peer);
  // Lower bound only: the loop may be late, never early (margin for the
  // moments between the connection going idle and fetch_ok returning).
  EXPECT_GE(corio::get_running_loop().time() - idle_since, 0.09);
  EXPECT_EQ(peer.state->client_closes, 1);
  EXPECT_EQ(s.idle_connections(), 0u);
  EXPECT_EQ(s.open_connections(), 0u);
}

TEST(ClientPool, IdleConnectionIsClosedOnTimeWithoutARequest) {
  run_bounded(expires_without_a_request(), 20s);
}

// Three origins: `early` idles first; half a timeout later `dead` (whose
// server closes after answering) and `late`. The sweep for `early` also
// drops `dead`, not yet expired, and re-arms for `late`.
Coro<void> sweep_and_rearm() {
  CannedPeer early = co_await start_canned_peer(kOk);
  CannedPeer dead = co_await start_canned_peer(kOk, true);
  CannedPeer late = co_await start_canned_peer(kOk);
  ClientSession s(keepalive(2000ms));
  co_await fetch_ok(&s, early.url());
  co_await corio::sleep(1000ms);
  co_await fetch_ok(&s, dead.url());
  const double late_since = co_await fetch_ok(&s, late.url());
  EXPECT_EQ(s.idle_connections(), 3u);

  co_await wait_client_closed(&early);
  // 1 s before `dead` and `late` would expire: a margin for a loaded
  // machine (and the sanitizers) that no timer is late by.
  EXPECT_LT(corio::get_running_loop().time() - late_since, 1.8);
  EXPECT_EQ(s.idle_connections(), 1u);
  EXPECT_EQ(s.open_connections(), 1u);
  EXPECT_EQ(dead.state->client_closes, 0);  // the server closed it first

  co_await wait_client_closed(&late);
  EXPECT_GE(corio::get_running_loop().time() - late_since, 1.99);
  EXPECT_EQ(s.idle_connections(), 0u);
  EXPECT_EQ(s.open_connections(), 0u);
}

TEST(ClientPool, SweepDropsDeadConnectionsAndRearmsForTheNextOldest) {
  run_bounded(sweep_and_rearm(), 20s);
}

// The session goes while its timer is armed: the timer must go with it
// (ASan sees a callback into the freed pool otherwise).
Coro<void> session_destroyed_while_armed() {
  CannedPeer peer = co_await start_canned_peer(kOk);
  auto s = std::make_unique<ClientSession>(keepalive(100ms));
  co_await fetch_ok(s.get(), peer.url());
  s.reset();
  co_await wait_client_closed(&peer);  // closed by the destructor, at once
  co_await corio::sleep(300ms);        // past the deadline the timer had
  EXPECT_EQ(peer.state->client_closes, 1);
}

TEST(ClientPool, TimerIsCancelledWithTheSession) {
  run_bounded(session_destroyed_while_armed(), 20s);
}

// A server that, once told, sends bytes nobody asked for on the connection
// it answered (a confused server, or one writing an error before it closes),
// and answers every request with kOk.
struct Babbler {
  struct State {
    corio::Event babble, babbled;
    int connections = 0;
  };
  std::shared_ptr<State> state = std::make_shared<State>();
  corio::Server server;
};

Coro<void> babble_once(StreamReader reader, StreamWriter writer, std::shared_ptr<Babbler::State> st) {
  ++st->connections;
  try {
    co_await reader.readuntil("\r\n\r\n");
    writer.write(kOk);
    co_await st->babble.wait();
    writer.write("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n");
    co_await writer.drain();
    st->babbled.set();
    for (;;) {
      co_await reader.readuntil("\r\n\r\n");
      writer.write(kOk);
    }
  } catch (const corio::IncompleteReadError&) {
    // the client closed it
  }
}

// The bytes reach the client's socket while its connection is idle in the
// pool, and its loop polls (on io_uring, the backend's receive takes them
// before anyone reads): the next request must not go on that connection,
// where it would read them as its answer, but on a fresh one.
Coro<void> unasked_bytes_retire_an_idle_connection() {
  Babbler peer;
  peer.server = co_await corio::start_server(
      [st = peer.state](StreamReader r, StreamWriter w) { return babble_once(std::move(r), std::move(w), st); },
      "127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(peer.server.port()) + "/";
  ClientSession s(keepalive(60'000ms));
  co_await fetch_ok(&s, url);
  peer.state->babble.set();
  co_await peer.state->babbled.wait();
  co_await corio::sleep(50ms);  // polls: no assertion depends on how many
  co_await fetch_ok(&s, url);
  EXPECT_EQ(peer.state->connections, 2);
  EXPECT_EQ(s.open_connections(), 1u);
  co_await s.close();
  peer.server.close();
  co_await peer.server.wait_closed();
}

TEST(ClientPool, BytesAnIdleConnectionReceivedRetireIt) {
  run_bounded(unasked_bytes_retire_an_idle_connection(), 20s);
}

Coro<void> close_server(CannedPeer* peer) {
  peer->server.close();
  co_await peer->server.wait_closed();
  co_await corio::sleep(0ms);  // the cancelled accept task unwinds meanwhile
}

// run_until_complete returns when its coroutine does, whatever the pool's
// timer (armed here for a minute) has yet to do.
TEST(ClientPool, ArmedTimerDoesNotKeepTheLoopRunning) {
  corio::EventLoop loop;
  CannedPeer peer = loop.run_until_complete(start_canned_peer(kOk));
  {
    ClientSession s(keepalive(60'000ms));
    const auto t0 = std::chrono::steady_clock::now();
    loop.run_until_complete(fetch_ok(&s, peer.url()));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
    EXPECT_EQ(s.idle_connections(), 1u);
    loop.run_until_complete(s.close());
    loop.run_until_complete(wait_client_closed(&peer));
  }
  loop.run_until_complete(close_server(&peer));
}

}  // namespace
}  // namespace corio_http_test
