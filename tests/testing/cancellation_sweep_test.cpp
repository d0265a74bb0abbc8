// The cancellation sweep over corio's own operations: each one cancelled at
// every one of its suspension points, then the next operation on the same
// objects checked, and nothing leaked (testing/cancellation_sweep.hpp).
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <corio/lock.hpp>
#include <corio/queue.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>
#include <corio/testing/cancellation_sweep.hpp>

#include "net/tls_support.hpp"
#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepReport;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;

namespace {

// ---- a sweep that finds a planted bug ------------------------------------------------

// A resource whose busy flag is cleared after the await, not by a guard:
// cancelled at that await, it stays busy forever (asyncpg's "another
// operation is in progress").
struct Fragile {
  bool busy = false;
  Coro<void> use() {
    if (busy) throw std::runtime_error("another operation is in progress");
    busy = true;
    co_await corio::sleep(10ms);
    busy = false;
  }
};

TEST(CancellationSweep, FindsAnOperationThatACancelLeavesOutOfStep) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto fragile = std::make_shared<Fragile>();
    return SweepRun{&sim.host("solo"), [fragile] { return fragile->use(); },
                    [fragile] { return fragile->use(); }};
  });
  EXPECT_EQ(report.points, 1);
  ASSERT_EQ(report.violations.size(), 1u) << report.describe();
  EXPECT_NE(report.violations[0].find("another operation is in progress"), std::string::npos)
      << report.describe();
}

// ---- streams ------------------------------------------------------------------------------

using sim_support::echo_server;
using sim_support::expect_clean;

struct Line {
  std::optional<corio::StreamReader> r;
  std::optional<corio::StreamWriter> w;
  std::string got;  // what the operation read
};

// Connect, send a line, read it back; then, on the same streams, a second
// line: what comes back is the first line at most once (if the cancel came
// before it was read), then the second. No byte lost, none doubled.
TEST(CancellationSweep, StreamsConnectWriteDrainReadline) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(echo_server(7000));
    auto line = std::make_shared<Line>();
    auto op = [line]() -> Coro<void> {
      auto [r, w] = co_await corio::open_connection("10.0.0.1", 7000);
      line->r.emplace(std::move(r));
      line->w.emplace(std::move(w));
      line->w->write("first\n");
      co_await line->w->drain();
      if (co_await line->r->readline() != "first\n") throw std::runtime_error("not the first line");
    };
    auto after = [line]() -> Coro<void> {
      if (!line->w) co_return;  // cancelled before it connected: nothing to be in step with
      line->w->write("second\n");
      co_await line->w->drain();
      std::string got = co_await line->r->readline();
      if (got == "first\n") got = co_await line->r->readline();
      if (got != "second\n") throw std::runtime_error("out of step: read '" + got + "'");
      line->w->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  });
  expect_clean(report, 2);
}

// Each read variant in turn, over short reads: a cancel at any of them
// loses no byte and doubles none (what the operation read, then what the
// next reads find, is what was sent).
TEST(CancellationSweep, StreamsReadVariantsLoseNoByte) {
  static constexpr std::string_view kSent = "0123456789\n";
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(sim_support::drip_server(7000));
    auto line = std::make_shared<Line>();
    auto op = [line]() -> Coro<void> {
      auto [r, w] = co_await corio::open_connection("10.0.0.1", 7000);
      line->r.emplace(std::move(r));
      line->w.emplace(std::move(w));
      line->w->write(kSent);
      co_await line->w->drain();
      line->got += co_await line->r->readexactly(4);
      line->got += co_await line->r->readuntil("7");
      line->got += co_await line->r->read(2);
      line->got += co_await line->r->readline();
    };
    auto after = [line]() -> Coro<void> {
      if (!line->w) co_return;
      line->w->write("second\n");
      co_await line->w->drain();
      const std::string all = std::string(kSent) + "second\n";
      while (line->got.size() < all.size()) line->got += co_await line->r->read(64);
      if (line->got != all) throw std::runtime_error("read '" + line->got + "'");
      line->w->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  });
  expect_clean(report, 10);
}

// The buffered interface (fill_buffer, buffered, consume) and
// wait_writable, cancelled anywhere: a byte the cancelled fill_buffer() had
// read is in buffered() for the next read, never lost.
Coro<void> fill_until_line(std::shared_ptr<Line> line) {
  while (line->r->buffered().find('\n') == std::string_view::npos) {
    if (co_await line->r->fill_buffer() == 0) throw std::runtime_error("EOF before the line");
  }
  const std::string_view buffered = line->r->buffered();
  const std::size_t n = buffered.find('\n') + 1;
  line->got.append(buffered.substr(0, n));
  line->r->consume(n);
}

TEST(CancellationSweep, StreamsFillBufferAndWaitWritable) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(sim_support::drip_server(7000));
    auto line = std::make_shared<Line>();
    auto& client = sim.host("client");
    client.spawn([](std::shared_ptr<Line> line) -> Coro<void> {
      auto [r, w] = co_await corio::open_connection("10.0.0.1", 7000);
      line->r.emplace(std::move(r));
      line->w.emplace(std::move(w));
    }(line));
    auto op = [line]() -> Coro<void> {
      line->w->write("first\n");
      co_await line->w->wait_writable();
      co_await fill_until_line(line);
    };
    auto after = [line]() -> Coro<void> {
      line->w->write("second\n");
      co_await line->w->drain();
      while (line->got.find("second\n") == std::string::npos) co_await fill_until_line(line);
      if (line->got != "first\nsecond\n") throw std::runtime_error("read '" + line->got + "'");
      line->w->close();
    };
    return SweepRun{&client, op, after};
  });
  expect_clean(report, 6);
}

// A TLS connection (handshake, a line there and back) cancelled anywhere:
// the server, whose handshake or read the cancel cut short, serves the next
// connection. The certificate names "localhost": the client says so.
Coro<void> tls_echo_server() {
  corio::Server server = co_await corio::start_server(sim_support::echo_lines, "0.0.0.0", 7443,
                                                      corio_net_test::tls_server_options());
  co_await server.serve_forever();
}

Coro<void> tls_line(std::string text) {
  corio::ConnectOptions opts = corio_net_test::tls_options();
  opts.server_hostname = "localhost";
  auto [r, w] = co_await corio::open_connection("10.0.0.1", 7443, opts);
  w.write(text);
  co_await w.drain();
  if (co_await r.readline() != text) throw std::runtime_error("TLS echo out of step");
  w.close();
  co_await w.wait_closed();
}

TEST(CancellationSweep, TlsHandshakeAndALine) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(tls_echo_server());
    return SweepRun{&sim.host("client"), [] { return tls_line("first\n"); },
                    [] { return tls_line("second\n"); }};
  });
  expect_clean(report, 3);
}

// A TLS close (close_notify, then the wait for the transport to close)
// cancelled: the socket still closes, and the server serves the next
// connection.
TEST(CancellationSweep, TlsClose) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(tls_echo_server());
    auto line = std::make_shared<Line>();
    auto& client = sim.host("client");
    client.spawn([](std::shared_ptr<Line> line) -> Coro<void> {
      corio::ConnectOptions opts = corio_net_test::tls_options();
      opts.server_hostname = "localhost";
      auto [r, w] = co_await corio::open_connection("10.0.0.1", 7443, opts);
      line->r.emplace(std::move(r));
      line->w.emplace(std::move(w));
    }(line));
    auto op = [line]() -> Coro<void> {
      line->w->close();
      co_await line->w->wait_closed();
    };
    return SweepRun{&client, op, [] { return tls_line("second\n"); }};
  });
  expect_clean(report, 1);
}

// ---- sync primitives and queues -------------------------------------------------------------------

// A waiter for a held lock, cancelled; the lock still passes on.
TEST(CancellationSweep, LockAcquireUnderContention) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto lock = std::make_shared<corio::Lock>();
    auto& host = sim.host("solo");
    auto op = [lock]() -> Coro<void> {
      corio::Lock::Guard held = co_await lock->scoped_lock();
      co_await corio::sleep(5ms);
    };
    // A parameter, not a capture: the lambda is gone when the task runs.
    auto holder = [](std::shared_ptr<corio::Lock> l) -> Coro<void> {
      corio::Lock::Guard held = co_await l->scoped_lock();
      co_await corio::sleep(20ms);
    };
    auto after = [lock]() -> Coro<void> {
      co_await lock->acquire();
      lock->release();
    };
    host.spawn(holder(lock));
    return SweepRun{&host, op, after};
  }, {}, 0.001);
  expect_clean(report, 2);
}

// A get() cancelled as the item arrives loses no item: the next get has it.
TEST(CancellationSweep, QueueGetLosesNoItem) {
  const SweepReport report = cancellation_sweep([](Simulation& sim) {
    auto queue = std::make_shared<corio::Queue<int>>();
    auto got = std::make_shared<int>(0);
    auto& host = sim.host("solo");
    auto producer = [](std::shared_ptr<corio::Queue<int>> q) -> Coro<void> {
      co_await corio::sleep(10ms);
      co_await q->put(7);
    };
    auto op = [queue, got]() -> Coro<void> { *got = co_await queue->get(); };
    auto after = [queue, got]() -> Coro<void> {
      if (*got == 0) *got = co_await queue->get();
      if (*got != 7 || !queue->empty()) throw std::runtime_error("the item was lost or doubled");
    };
    host.spawn(producer(queue));
    return SweepRun{&host, op, after};
  }, {}, 0.001);
  expect_clean(report, 1);
}

}  // namespace
