// The cancellation sweep over the loop's low-level socket calls
// (sock_connect, sock_sendall, sock_recv, sock_recv_into; sock_accept is
// under every server) and Server::wait_closed. After each cancel the same
// socket (or, after a cut connect, a new one) is still in step with its
// peer: no byte lost, doubled or reordered, and no wait left registered
// (a second waiter on a socket is a RuntimeError, so a stale one shows).
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <gtest/gtest.h>

#include <corio/event_loop.hpp>
#include <corio/server.hpp>
#include <corio/sleep.hpp>
#include <corio/socket.hpp>
#include <corio/streams.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::require;

namespace {

corio::SocketAddress server_at(std::uint16_t port) {
  return corio::SocketAddress::ip("10.0.0.1", port);
}

// A raw socket the operation and the next one share.
struct Raw {
  corio::Socket sock;
  bool connected = false, sent = false;
  std::string got;  // what the operation read

  Coro<void> connect(std::uint16_t port) {
    sock = corio::Socket::create(AF_INET, SOCK_STREAM);
    co_await corio::get_running_loop().sock_connect(sock, server_at(port));
    connected = true;
  }
  // One read, by sock_recv or sock_recv_into in turn (the drip server
  // sends a byte at a time, so every read waits).
  Coro<void> read_some() {
    corio::EventLoop& loop = corio::get_running_loop();
    if (got.size() % 2 == 0) {
      const std::string piece = co_await loop.sock_recv(sock, 3);
      require(!piece.empty(), "EOF in the middle of a line");
      got += piece;
      co_return;
    }
    char buf[3];
    const std::size_t n = co_await loop.sock_recv_into(sock, std::span<char>(buf, sizeof buf));
    require(n > 0, "EOF in the middle of a line");
    got.append(buf, n);
  }
  Coro<void> read_until(std::size_t size) {
    while (got.size() < size) co_await read_some();
  }
};

constexpr std::string_view kFirst = "0123456789\n";

Coro<void> connect_send_receive(std::shared_ptr<Raw> raw) {
  co_await raw->connect(7000);
  co_await corio::get_running_loop().sock_sendall(raw->sock, kFirst);
  raw->sent = true;
  co_await raw->read_until(kFirst.size());
  require(raw->got == kFirst, "read '" + raw->got + "'");
}

// A connect the cancel cut off leaves a socket in no known state: the
// next operation starts on a new one. Otherwise the same socket carries a
// second line, and what comes back is the rest of the first, then the
// second: the bytes a cancelled read had not taken are still there.
Coro<void> next_line(std::shared_ptr<Raw> raw) {
  if (!raw->connected) co_await raw->connect(7000);
  if (!raw->sent) co_await corio::get_running_loop().sock_sendall(raw->sock, kFirst);
  const std::string second = "second\n";
  co_await corio::get_running_loop().sock_sendall(raw->sock, second);
  co_await raw->read_until(kFirst.size() + second.size());
  require(raw->got == std::string(kFirst) + second, "out of step: read '" + raw->got + "'");
  raw->sock.close();
}

TEST(SweepSocket, ConnectSendallRecvAndRecvInto) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
                 sim.host("server").spawn(sim_support::drip_server(7000));
                 auto raw = std::make_shared<Raw>();
                 return SweepRun{&sim.host("client"), [raw] { return connect_send_receive(raw); },
                                 [raw] { return next_line(raw); }};
               }),
               10);
}

// ---- sock_sendall under back-pressure ---------------------------------------------------

// Reads slowly, and at each '\n' answers with how many 'a's and then 'b's
// came since the last one ("a.. after a b" if they were out of order).
Coro<void> count_letters(corio::StreamReader r, corio::StreamWriter w) {
  std::size_t a = 0, b = 0;
  bool ordered = true;
  for (std::string piece = co_await r.read(1024); !piece.empty(); piece = co_await r.read(1024)) {
    for (char c : piece) {
      if (c == 'a') {
        ordered = ordered && b == 0;
        ++a;
      } else if (c == 'b') {
        ++b;
      }
    }
    if (piece.back() == '\n') {
      w.write(ordered ? std::to_string(a) + " " + std::to_string(b) + "\n" : "an a after a b\n");
      a = b = 0;
    }
    co_await corio::sleep(1ms);
  }
  w.close();
}

Coro<void> letter_server() {
  corio::Server server = co_await corio::start_server(count_letters, "0.0.0.0", 7001);
  co_await server.serve_forever();
}

constexpr std::size_t kAs = 32 * 1024;

// Sent past the connection's window: sock_sendall waits for room.
Coro<void> send_as(std::shared_ptr<Raw> raw) {
  co_await corio::get_running_loop().sock_sendall(raw->sock, std::string(kAs, 'a'));
}

// Whatever part of the 'a's left before the cancel, the 'b's follow them
// whole, in order, on the same socket.
Coro<void> send_bs(std::shared_ptr<Raw> raw) {
  corio::EventLoop& loop = corio::get_running_loop();
  co_await loop.sock_sendall(raw->sock, std::string(1000, 'b') + "\n");
  std::string answer;
  while (answer.empty() || answer.back() != '\n') {
    const std::string piece = co_await loop.sock_recv(raw->sock, 64);
    require(!piece.empty(), "EOF before the count");
    answer += piece;
  }
  const std::size_t space = answer.find(' ');
  require(space != std::string::npos && answer.substr(space) == " 1000\n",
          "the server counted " + answer);
  require(std::stoul(answer.substr(0, space)) <= kAs, "more 'a's than were sent: " + answer);
  raw->sock.close();
}

TEST(SweepSocket, SendallUnderBackPressure) {
  expect_clean(corio::testing::cancellation_sweep(
                   [](Simulation& sim) {
                     sim.host("server").spawn(letter_server());
                     auto raw = std::make_shared<Raw>();
                     auto& client = sim.host("client");
                     client.spawn(raw->connect(7001));
                     return SweepRun{&client, [raw] { return send_as(raw); },
                                     [raw] { return send_bs(raw); }};
                   },
                   {.window = 4 * 1024}),
               3);
}

// ---- Server::wait_closed ----------------------------------------------------------------

// A server whose handler (an echo of lines, counted) is still serving a
// client when the operation closes the server and waits.
// The handler holds the count, not the Closing: the server holds the
// handler, and a handler holding the server would keep both alive for good.
struct Closing {
  std::optional<corio::Server> server;
  std::shared_ptr<int> handlers = std::make_shared<int>(0);
};

Coro<void> counted_echo(std::shared_ptr<int> handlers, corio::StreamReader r,
                        corio::StreamWriter w) {
  ++*handlers;
  struct Out {
    int& n;
    ~Out() { --n; }
  } out{*handlers};
  co_await sim_support::echo_lines(std::move(r), std::move(w));
}

Coro<void> start_closing(std::shared_ptr<Closing> c) {
  corio::ClientConnected handler = [handlers = c->handlers](corio::StreamReader r,
                                                            corio::StreamWriter w) {
    return counted_echo(handlers, std::move(r), std::move(w));
  };
  c->server.emplace(co_await corio::start_server(handler, "0.0.0.0", 7002));
}

// A client that is in the middle of its conversation when the server
// closes: two lines, 300 ms apart, each echoed back.
Coro<void> slow_client() {
  co_await corio::sleep(400ms);
  auto [r, w] = co_await corio::open_connection("10.0.0.1", 7002);
  for (const char* line : {"one\n", "two\n"}) {
    w.write(line);
    co_await w.drain();
    const std::string echoed = co_await r.readline();
    require(echoed == line, "the echo is wrong: " + echoed);
    co_await corio::sleep(300ms);
  }
  w.close();
}

// close() leaves the connection running, and wait_closed() waits for its
// handler: cancelled, the next wait_closed() still does, and the client,
// whose connection the cancel must not cut, finishes its conversation.
TEST(SweepSocket, ServerWaitClosedWithAConnectionOpen) {
  expect_clean(
      corio::testing::cancellation_sweep([](Simulation& sim) {
        auto c = std::make_shared<Closing>();
        auto& server = sim.host("server");
        server.spawn(start_closing(c));
        auto client = std::make_shared<corio::Task<void>>(sim.host("client").spawn(slow_client()));
        auto op = [c]() -> Coro<void> {
          require(*c->handlers == 1, "no connection open");
          c->server->close();
          co_await c->server->wait_closed();
          require(*c->handlers == 0, "wait_closed() returned with a handler running");
        };
        auto after = [c, client]() -> Coro<void> {
          co_await c->server->wait_closed();
          require(*c->handlers == 0 && !c->server->is_serving(), "the server is not closed");
          // The client is another host's task: watched, not awaited.
          while (!client->done()) co_await corio::sleep(10ms);
          require(!client->cancelled() && !client->exception(),
                  "the client's conversation was cut");
        };
        return SweepRun{&server, op, after};
      }),
      1);
}

}  // namespace
