// The cancellation sweep over what waits for the world outside: a signal
// (http::run_until_signal, with a signal the simulation sends) and the
// wall clock (run_daily, on the simulation's virtual one). After each
// cancel: no signal handler is left behind, the port is free again, a
// request in flight was answered or failed clearly, and a daily job never
// ran twice in one day.
#include <csignal>
#include <ctime>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/daily.hpp>
#include <corio/event_loop.hpp>
#include <corio/http.hpp>
#include <corio/sleep.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::quiet;
using sim_support::require;
namespace http = corio::http;

namespace {

// ---- signals ------------------------------------------------------------------------------

TEST(SimSignal, ReachesTheHandlerOfItsHostOnly) {
  Simulation sim({.seed = 3});
  auto& a = sim.host("a");
  auto& b = sim.host("b");
  int heard = 0;
  a.loop().add_signal_handler(SIGUSR1, [&heard] { ++heard; });
  EXPECT_TRUE(sim.signal(a, SIGUSR1));
  EXPECT_FALSE(sim.signal(b, SIGUSR1)) << "b set no handler";
  EXPECT_EQ(heard, 0) << "a handler runs on its loop, as a callback, not inside signal()";
  sim.run_for(0.001);
  EXPECT_EQ(heard, 1);
  EXPECT_TRUE(a.loop().remove_signal_handler(SIGUSR1));
  EXPECT_FALSE(sim.signal(a, SIGUSR1));
}

Coro<http::Response> slow(http::Request&) {
  co_await corio::sleep(20ms);
  co_return http::Response::text("slow");
}

Coro<void> serve_until_signal() {
  http::Server server(quiet());
  server.get("/slow", slow);
  co_await server.start("0.0.0.0", 8080);
  co_await http::run_until_signal(server, 1s);
}

// The request in flight when the signal comes: "slow", or how it failed.
Coro<void> ask_slow(std::shared_ptr<std::string> outcome) {
  co_await corio::sleep(520ms);  // the operation starts at 0.5 s; the signal comes at 0.53 s
  http::ClientSession session;
  try {
    http::ClientResponse r = co_await session.get("http://10.0.0.1:8080/slow");
    *outcome = co_await r.text();
  } catch (const std::exception& e) {
    *outcome = std::string("failed: ") + e.what();
  }
  co_await session.close();
}

// A graceful shutdown by SIGINT, cancelled anywhere: the handlers go with
// it (a later SIGINT finds none), the port can be bound again, and the
// request in flight was answered whole or failed, never hung.
TEST(SweepSignal, RunUntilSignal) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    auto& server = sim.host("server");
    auto outcome = std::make_shared<std::string>();
    sim.host("client").spawn(ask_slow(outcome));
    sim.at(0.53, [&sim, &server] { (void)sim.signal(server, SIGINT); });
    auto after = [&sim, &server, outcome]() -> Coro<void> {
      co_await corio::sleep(100ms);  // past the signal, and the request's end
      require(!sim.signal(server, SIGINT), "a signal handler is left");
      require(*outcome == "slow" || outcome->starts_with("failed"), "the request got " + *outcome);
      http::Server again(quiet());
      again.get("/slow", slow);
      co_await again.start("0.0.0.0", 8080);  // the port is free
      again.close();
    };
    return SweepRun{&server, serve_until_signal, after};
  }), 2);
}

// ---- run_daily on the virtual wall clock ---------------------------------------------------

// A simulation's wall clock starts at 2026-01-01 00:00 UTC: the local hh:mm
// two minutes later is the first run's time, whatever the time zone.
std::tm two_minutes_in() {
  const std::time_t t = static_cast<std::time_t>(1767225600 + 120);
  std::tm local{};
  localtime_r(&t, &local);
  return local;
}

struct Daily {
  std::vector<double> runs;  // when each job started, on the virtual wall clock
  int done = 0;              // jobs that ran to their end
};

struct Stop {};  // thrown by the job to end run_daily after two runs

Coro<void> job(std::shared_ptr<Daily> d) {
  d->runs.push_back(corio::detail::wall_time());
  co_await corio::sleep(1s);
  if (++d->done == 2) throw Stop{};
}

Coro<void> daily_runs(std::shared_ptr<Daily> d) {
  const std::tm at = two_minutes_in();
  corio::DailyOptions options;
  options.recheck = std::chrono::hours(6);
  std::function<Coro<void>()> each = [d] { return job(d); };  // named: see the g++ 12 trap
  try {
    co_await corio::run_daily(at.tm_hour, at.tm_min, std::move(each), std::move(options));
  } catch (const Stop&) {
  }
}

// run_daily cancelled anywhere (asleep between runs, or in its job):
// started again, it runs the job at the next day's time, never twice in a
// day, and every run it started was at hh:mm.
TEST(SweepDaily, RunDaily) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
    auto d = std::make_shared<Daily>();
    auto after = [d]() -> Coro<void> {
      const std::size_t before = d->runs.size();
      d->done = 1;  // the next run ends it
      co_await daily_runs(d);
      require(d->runs.size() == before + 1,
              "the restarted run_daily ran " + std::to_string(d->runs.size() - before) + " times");
      for (std::size_t i = 1; i < d->runs.size(); ++i) {
        const double apart = d->runs[i] - d->runs[i - 1];
        require(apart > 23 * 3600.0, "two runs " + std::to_string(apart) + " s apart");
      }
      for (double t : d->runs) {
        require(static_cast<long long>(t - 120) % 86400 == 0, "a run at " + std::to_string(t));
      }
    };
    return SweepRun{&sim.host("cron"), [d] { return daily_runs(d); }, after, 2 * 86400.0};
  }, {}, 0.001), 4);
}

}  // namespace
