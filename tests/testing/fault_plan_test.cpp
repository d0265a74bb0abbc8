// Fault plans drawn from a seed, run against a scenario, and shrunk to the
// smallest plan that still fails (testing/fault_plan.hpp), on planted bugs
// that one fault alone sets off.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

#include <corio/errors.hpp>
#include <corio/http.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>
#include <corio/testing/fault_plan.hpp>
#include <corio/timeout.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Fault;
using corio::testing::FaultPlan;
using corio::testing::FaultReport;
using corio::testing::Simulation;
using corio::testing::run_with_faults;

namespace {

// The planted bug: one connection for ten seconds, a line there and back
// every half second, and no reconnecting: a reset between the client and
// the server while it is open fails the run; partitions and latency only
// slow it (it has no deadline), and faults that involve the bystander do
// nothing. `limit`, if set, is each echo's deadline: then a long enough
// partition fails it too.
Coro<std::string> ticker(std::optional<std::chrono::milliseconds> limit) {
  try {
    auto [r, w] = co_await corio::open_connection("10.0.0.1", 7000);
    for (int i = 0; i < 20; ++i) {
      const std::string line = "tick " + std::to_string(i) + "\n";
      w.write(line);
      co_await w.drain();
      if (co_await corio::wait_for(r.readline(), limit) != line) co_return "out of step at " + line;
      co_await corio::sleep(500ms);
    }
    w.close();
  } catch (const std::system_error& e) {
    co_return std::string("the connection broke: ") + e.what();
  } catch (const corio::TimeoutError&) {
    co_return "an echo came too late";
  }
  co_return "";
}

std::string planted(Simulation& sim, std::optional<std::chrono::milliseconds> limit) {
  auto& server = sim.host("server");  // 0
  auto& client = sim.host("client");  // 1
  sim.host("bystander");              // 2
  server.spawn(sim_support::echo_server(7000));
  return sim.run_until_complete(client, ticker(limit));
}

// The first of seeds 1, 2, ... whose plan of six faults fails the scenario.
FaultReport first_failure(const corio::testing::FaultScenario& scenario) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    FaultReport report = run_with_faults(scenario, FaultPlan::random(seed, 3), {.seed = 1});
    if (report.failed) return report;
  }
  return {};
}

std::string this_test() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
}

TEST(FaultPlan, ItsTextReadsBackAsTheSamePlan) {
  const FaultPlan plan = FaultPlan::random(5, 3, {.faults = 12});
  ASSERT_EQ(plan.faults().size(), 12u);
  EXPECT_EQ(FaultPlan::parse(plan.str()).faults(), plan.faults()) << plan.str();
  EXPECT_EQ(FaultPlan::random(5, 3, {.faults = 12}).faults(), plan.faults());  // a function of the seed
  EXPECT_NE(FaultPlan::random(6, 3, {.faults = 12}).faults(), plan.faults());
  EXPECT_THROW(FaultPlan::parse("explode 0-1 @1"), std::invalid_argument);
}

TEST(FaultPlan, APlanThatHoldsIsReportedAsItWas) {
  const FaultPlan plan({{Fault::Kind::partition, 1, 0, 1, 0.5, 0}, {Fault::Kind::reset, 2, 1, 2, 0, 0}});
  const FaultReport report = run_with_faults([](Simulation& sim) { return planted(sim, std::nullopt); }, plan);
  EXPECT_FALSE(report.failed) << report.failure;
  EXPECT_EQ(report.runs, 1);
  EXPECT_EQ(report.plan.faults(), plan.faults());
}

// Six faults drawn, one of them the reset that matters: the shrink ends
// with that one, and its replay command fails the same way.
TEST(FaultPlan, ShrinksToTheOneResetThatBreaksTheConnection) {
  auto scenario = [](Simulation& sim) { return planted(sim, std::nullopt); };
  const FaultReport report = first_failure(scenario);
  ASSERT_TRUE(report.failed) << "no plan of seeds 1-40 set the planted bug off";
  std::printf("smallest plan: %s (%d runs)\nreplay: %s\n", report.plan.str().c_str(), report.runs,
              report.replay(this_test()).c_str());
  ASSERT_EQ(report.plan.faults().size(), 1u) << report.plan.str();
  const Fault& f = report.plan.faults()[0];
  EXPECT_EQ(f.kind, Fault::Kind::reset);
  EXPECT_EQ(std::min(f.a, f.b), 0);
  EXPECT_EQ(std::max(f.a, f.b), 1);
  EXPECT_NE(report.failure.find("the connection broke"), std::string::npos) << report.failure;
  EXPECT_NE(report.replay().find("CORIO_SIM_SEED=1 CORIO_SIM_FAULTS='" + report.plan.str() + "'"),
            std::string::npos)
      << report.replay();

  // The replay: the plan from the environment, whatever plan is given.
  ASSERT_EQ(setenv("CORIO_SIM_FAULTS", report.plan.str().c_str(), 1), 0);
  const FaultReport again = run_with_faults(scenario, FaultPlan{}, {.seed = 1});
  unsetenv("CORIO_SIM_FAULTS");
  EXPECT_TRUE(again.failed);
  EXPECT_EQ(again.failure, report.failure);
  EXPECT_EQ(again.plan.faults(), report.plan.faults());
}

// With a deadline on each echo, a partition fails the run if it outlasts
// the deadline: the shrink keeps one partition between the two, its length
// halved while it still does.
TEST(FaultPlan, HalvesAPartitionWhileItStillFails) {
  auto scenario = [](Simulation& sim) { return planted(sim, 400ms); };
  const FaultPlan plan({{Fault::Kind::slow, 0.2, 1, 2, 3, 0.4},
                        {Fault::Kind::partition, 2, 1, 0, 1.6, 0},
                        {Fault::Kind::partition, 4, 2, 0, 1.9, 0}});
  const FaultReport report = run_with_faults(scenario, plan, {.seed = 1});
  ASSERT_TRUE(report.failed);
  std::printf("smallest plan: %s (%d runs)\n", report.plan.str().c_str(), report.runs);
  ASSERT_EQ(report.plan.faults().size(), 1u) << report.plan.str();
  const Fault& f = report.plan.faults()[0];
  EXPECT_EQ(f.kind, Fault::Kind::partition);
  EXPECT_EQ(f.at, 2);
  EXPECT_LT(f.duration, 1.6);
  EXPECT_EQ(report.failure, "an echo came too late");
  Fault half = f;  // the shrink stopped because half as long holds
  half.duration /= 2;
  EXPECT_FALSE(run_with_faults(scenario, FaultPlan({half}), {.seed = 1}).failed) << half.duration;
}

// corio's HTTP client and server under random plans: a client that asks 20
// times in ten seconds, each request bounded (a second in all) and retried,
// gets each answer right or a clear error (a ClientError, a TimeoutError),
// never a wrong body, and never hangs, whatever partitions, resets and
// spikes come.
Coro<void> numbers_service() {
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server server(quiet);
  server.get("/n/{n}", [](corio::http::Request& req) -> Coro<corio::http::Response> {
    co_return corio::http::Response::text(std::string(req.param("n")));
  });
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

Coro<std::string> patient_client() {
  corio::http::ClientOptions options;
  options.timeout.total = 1s;
  options.retry.attempts = 3;
  options.retry.backoff = 50ms;
  corio::http::ClientSession session(options);
  std::string wrong;
  for (int i = 0; i < 20 && wrong.empty(); ++i) {
    try {
      corio::http::ClientResponse r = co_await session.get("http://10.0.0.1:8080/n/" + std::to_string(i));
      const std::string body = co_await r.text();
      if (body != std::to_string(i)) wrong = "request " + std::to_string(i) + " got '" + body + "'";
    } catch (const corio::http::ClientError&) {
      // a clear failure: the next request
    } catch (const corio::TimeoutError&) {
    }
    co_await corio::sleep(500ms);
  }
  co_await session.close();
  co_return wrong;
}

TEST(FaultPlan, TheHttpClientAndServerHoldUnderRandomPlans) {
  auto scenario = [](Simulation& sim) {
    sim.host("server").spawn(numbers_service());
    auto& client = sim.host("client");
    return sim.run_until_complete(client, patient_client(), 120);  // a hang: SimulationError
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const FaultReport report =
        run_with_faults(scenario, FaultPlan::random(seed, 2, {.faults = 8, .max_duration = 5}), {.seed = seed});
    EXPECT_FALSE(report.failed) << "plan " << seed << ": " << report.failure << "\nsmallest plan: "
                                << report.plan.str() << "\nreplay: " << report.replay(this_test());
  }
}

}  // namespace
