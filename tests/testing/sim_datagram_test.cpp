// Datagrams between simulated hosts: corio's DatagramSocket runs on the
// simulated network unchanged, with latency, reordering (jitter), loss and
// partitions drawn from the seed, and a cancelled receive loses nothing.
#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/datagram.hpp>
#include <corio/sleep.hpp>
#include <corio/timeout.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::DatagramSocket;
using corio::SocketAddress;
using corio::testing::Simulation;
using corio::testing::SweepRun;

namespace {

// Answers each datagram with the same bytes, to whoever sent it.
Coro<void> udp_echo(std::uint16_t port) {
  DatagramSocket sock = DatagramSocket::bind(SocketAddress::ip("0.0.0.0", port));
  for (;;) {
    auto [data, from] = co_await sock.recvfrom();
    co_await sock.sendto(data, from);
  }
}

// Keeps what arrives on port, in order of arrival.
Coro<void> udp_sink(std::uint16_t port, std::shared_ptr<std::vector<std::string>> got) {
  DatagramSocket sock = DatagramSocket::bind(SocketAddress::ip("0.0.0.0", port));
  for (;;) got->push_back(co_await sock.recv());
}

// Sends "0", "1", ... to 10.0.0.1:5300, a millisecond apart.
Coro<void> numbers(int n) {
  DatagramSocket sock = DatagramSocket::connect(SocketAddress::ip("10.0.0.1", 5300));
  for (int i = 0; i < n; ++i) {
    co_await sock.send(std::to_string(i));
    co_await corio::sleep(1ms);
  }
}

TEST(SimDatagram, ARoundTripTakesTwoLatencies) {
  Simulation sim({.seed = 1, .latency = 0.010});
  sim.host("server").spawn(udp_echo(5300));
  auto& client = sim.host("client");
  sim.run_for(0.1);
  const double start = sim.time();
  auto ask = []() -> Coro<std::string> {
    DatagramSocket sock = DatagramSocket::connect(SocketAddress::ip("10.0.0.1", 5300));
    co_await sock.send("ping");
    co_return co_await sock.recv();
  };
  EXPECT_EQ(sim.run_until_complete(client, ask()), "ping");
  EXPECT_NEAR(sim.time() - start, 0.020, 1e-9);
}

// What arrives, in what order, under a seed's jitter and loss.
std::vector<std::string> arrivals(corio::testing::SimulationOptions options, int n = 100) {
  Simulation sim(options);
  auto got = std::make_shared<std::vector<std::string>>();
  sim.host("sink").spawn(udp_sink(5300, got));
  auto& sender = sim.host("sender");
  sim.run_for(0.01);
  sim.run_until_complete(sender, numbers(n));
  sim.run_for(1);
  return *got;
}

TEST(SimDatagram, JitterReordersThemAndTheSeedDecidesHow) {
  const std::vector<std::string> got = arrivals({.seed = 3, .latency = 0.001, .jitter = 0.005});
  ASSERT_EQ(got.size(), 100u);  // no loss: all of them, in another order
  std::vector<std::string> sorted = got;
  std::sort(sorted.begin(), sorted.end(), [](const std::string& a, const std::string& b) {
    return std::stoi(a) < std::stoi(b);
  });
  EXPECT_NE(got, sorted);
  EXPECT_EQ(arrivals({.seed = 3, .latency = 0.001, .jitter = 0.005}), got);
  EXPECT_NE(arrivals({.seed = 4, .latency = 0.001, .jitter = 0.005}), got);
}

TEST(SimDatagram, LossDropsSomeAsTheSeedDraws) {
  const std::vector<std::string> got = arrivals({.seed = 5, .loss = 0.3});
  EXPECT_GT(got.size(), 50u);
  EXPECT_LT(got.size(), 90u);
  EXPECT_EQ(arrivals({.seed = 5, .loss = 0.3}), got);
}

// A partition drops datagrams (nothing retransmits them); after the heal
// they flow again.
TEST(SimDatagram, APartitionLosesWhatIsSentAcrossIt) {
  Simulation sim({.seed = 7});
  auto got = std::make_shared<std::vector<std::string>>();
  auto& sink = sim.host("sink");
  auto& sender = sim.host("sender");
  sink.spawn(udp_sink(5300, got));
  sim.run_for(0.01);
  sim.partition(sink, sender);
  sim.run_until_complete(sender, numbers(10));
  sim.heal(sink, sender);
  sim.run_until_complete(sender, numbers(10));
  sim.run_for(1);
  EXPECT_EQ(got->size(), 10u);
}

// A recvfrom() cancelled as its datagram arrives loses it not: the next
// recvfrom() has it.
TEST(SimDatagram, ACancelledReceiveLosesNoDatagram) {
  sim_support::expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    sim.host("server").spawn(udp_echo(5300));
    auto sock = std::make_shared<DatagramSocket>();
    auto got = std::make_shared<std::string>();
    auto op = [sock, got]() -> Coro<void> {
      *sock = DatagramSocket::connect(SocketAddress::ip("10.0.0.1", 5300));
      co_await sock->send("first");
      *got = co_await sock->recv();
    };
    auto after = [sock, got]() -> Coro<void> {
      co_await sock->send("second");
      std::string next = co_await corio::wait_for(sock->recv(), 1s);
      if (got->empty() && next == "first") next = co_await corio::wait_for(sock->recv(), 1s);
      if (next != "second") throw std::runtime_error("received '" + next + "'");
      sock->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  }), 1);
}

}  // namespace
