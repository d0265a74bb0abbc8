// The cancellation sweep over start_tls(): TLS started on a connection
// already open, as a client and as a server (a STARTTLS exchange: a plain
// "STARTTLS" line, a "GO", then each side upgrades its streams), each
// cancelled at every suspension point, mid-handshake included. After each
// cancel the peer's side ends clearly (a failed handshake, not a hang) and
// the next connection is served whole. The certificate names "localhost".
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include <corio/event_loop.hpp>
#include <corio/sleep.hpp>
#include <corio/socket.hpp>
#include <corio/streams.hpp>
#include <corio/task.hpp>

#include "net/tls_support.hpp"
#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::StreamReader;
using corio::StreamWriter;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::require;

namespace {

corio::ConnectOptions client_tls() {
  corio::ConnectOptions opts = corio_net_test::tls_options();
  opts.server_hostname = "localhost";
  return opts;
}

corio::ConnectOptions server_tls() {
  corio::ConnectOptions opts;
  opts.ssl = corio_net_test::test_server();
  return opts;
}

Coro<std::string> line_from(StreamReader& r) { co_return co_await r.readline(); }

// The server's side of STARTTLS on an accepted connection, then an echo
// of lines over TLS; the first line echoed, which names the client.
Coro<std::string> serve_starttls(StreamReader r, StreamWriter w) {
  const std::string hello = co_await line_from(r);
  require(hello == "STARTTLS\n", "not a STARTTLS: " + hello);
  w.write("GO\n");
  co_await w.drain();
  auto [tr, tw] = co_await corio::start_tls(std::move(r), std::move(w), "", server_tls());
  const std::string first = co_await line_from(tr);
  tw.write(first);
  co_await sim_support::echo_lines(std::move(tr), std::move(tw));
  co_return first;
}

// The client's side: STARTTLS, then a line there and back over TLS.
Coro<void> starttls_line(std::string text) {
  auto [r, w] = co_await corio::open_connection("10.0.0.1", 7025);
  w.write("STARTTLS\n");
  co_await w.drain();
  // readexactly: a server gone before its GO is an IncompleteReadError.
  const std::string go = co_await r.readexactly(3);
  require(go == "GO\n", "no GO: " + go);
  auto [tr, tw] = co_await corio::start_tls(std::move(r), std::move(w), "10.0.0.1", client_tls());
  tw.write(text);
  co_await tw.drain();
  const std::string echoed = co_await line_from(tr);
  require(echoed == text, "the TLS echo is out of step: " + echoed);
  tw.close();
  co_await tw.wait_closed();
}

// ---- the client's side ----------------------------------------------------------------

// A handler whose client went away mid-handshake ends with the handshake's
// error: that connection ends, the server serves on.
Coro<void> tolerant_starttls(StreamReader r, StreamWriter w) {
  try {
    (void)co_await serve_starttls(std::move(r), std::move(w));
  } catch (const std::system_error&) {
  } catch (const corio::IncompleteReadError&) {
  }
}

Coro<void> starttls_server() {
  corio::Server server = co_await corio::start_server(tolerant_starttls, "0.0.0.0", 7025);
  co_await server.serve_forever();
}

TEST(SweepStartTls, ClientSideMidHandshake) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
                 sim.host("server").spawn(starttls_server());
                 return SweepRun{&sim.host("client"), [] { return starttls_line("first\n"); },
                                 [] { return starttls_line("second\n"); }};
               }),
               4);
}

// ---- the server's side ----------------------------------------------------------------

// The server's listener, made on its host; the operation accepts with the
// loop's sock_accept and takes the socket into streams
// (open_connection(Socket)), so those are swept here too.
struct Listener {
  corio::Socket sock;
  Coro<void> open() {
    sock = corio::Socket::create(AF_INET, SOCK_STREAM);
    sock.bind(corio::SocketAddress::ip("0.0.0.0", 7025));
    sock.listen();
    co_return;
  }
  // Serves the next connection; the line its client sent.
  Coro<std::string> serve_one() {
    auto [conn, peer] = co_await corio::get_running_loop().sock_accept(sock);
    auto [r, w] = co_await corio::open_connection(std::move(conn));
    co_return co_await serve_starttls(std::move(r), std::move(w));
  }
};

// A client that starts at `at` and ends however the server lets it.
Coro<void> client_at(double at, std::string line) {
  co_await corio::sleep(std::chrono::duration<double>(at));
  co_await starttls_line(std::move(line));
}

bool ended_clearly(const corio::Task<void>& t) {
  if (t.cancelled()) return false;
  try {
    if (std::exception_ptr e = t.exception()) std::rethrow_exception(e);
  } catch (const std::system_error&) {           // the handshake or the read failed: clear
  } catch (const corio::IncompleteReadError&) {  // the server went before its GO
  } catch (...) {
    return false;
  }
  return true;
}

// The first client (at 0.6 s) is the operation's, if its cancel came after
// the accept; the next operation serves whoever is left, and the second
// client (at 2 s) must get its line back whatever the cancel did.
TEST(SweepStartTls, ServerSideMidHandshake) {
  expect_clean(
      corio::testing::cancellation_sweep([](Simulation& sim) {
        auto listener = std::make_shared<Listener>();
        auto& server = sim.host("server");
        server.spawn(listener->open());
        auto& client = sim.host("client");
        auto first = std::make_shared<corio::Task<void>>(client.spawn(client_at(0.6, "first\n")));
        auto second = std::make_shared<corio::Task<void>>(client.spawn(client_at(2, "second\n")));
        auto after = [listener, first, second]() -> Coro<void> {
          for (std::string served; served != "second\n";) served = co_await listener->serve_one();
          // The clients are another host's tasks: watched, not awaited.
          while (!(first->done() && second->done())) co_await corio::sleep(10ms);
          require(ended_clearly(*first), "the first client did not end clearly");
          require(!second->exception() && !second->cancelled(), "the second client was not served");
          listener->sock.close();
        };
        auto op = [listener]() -> Coro<void> { (void)co_await listener->serve_one(); };
        return SweepRun{&server, op, after};
      }),
      4);
}

}  // namespace
