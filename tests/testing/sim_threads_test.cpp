// A user's own ThreadPoolExecutor in a simulation: its jobs run on real
// threads, outside the simulation's clock and seed by design (the host's
// default pool runs its jobs inline instead: SweepSync.ToThread). What the
// simulation promises is that it waits for such a job to come back before
// it moves virtual time on, or gives up for want of anything to happen.
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include <corio/event_loop.hpp>
#include <corio/executor.hpp>
#include <corio/sleep.hpp>
#include <corio/to_thread.hpp>
#include <corio/testing/simulation.hpp>

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;

namespace {

// A job that takes real time, and says which thread ran it.
std::thread::id slow_job() {
  std::this_thread::sleep_for(20ms);
  return std::this_thread::get_id();
}

Coro<std::thread::id> on_the_pool(corio::ThreadPoolExecutor* pool) {
  // Named: g++ 12 destroys a temporary inside a co_await expression twice.
  corio::Future<std::thread::id> job = corio::get_running_loop().run_in_executor(pool, slow_job);
  co_return co_await job;
}

// Nothing else can happen while the job runs: the simulation waits for it
// instead of ending the run with "nothing is left to happen".
TEST(SimThreads, AUserPoolsJobIsWaitedFor) {
  corio::ThreadPoolExecutor pool(1);
  Simulation sim;
  const std::thread::id ran_on = sim.run_until_complete(sim.host("solo"), on_the_pool(&pool));
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

Coro<void> sleep_long() { co_await corio::sleep(10s); }

// A timer is set 10 s ahead: virtual time does not jump to it while the
// job runs, so the job takes no virtual time, as the default pool's do.
TEST(SimThreads, AUserPoolsJobTakesNoVirtualTime) {
  corio::ThreadPoolExecutor pool(1);
  Simulation sim;
  auto& host = sim.host("solo");
  host.spawn(sleep_long());
  (void)sim.run_until_complete(host, on_the_pool(&pool));
  EXPECT_EQ(sim.time(), 0.0);
}

// A pool of the program's own made a host's default: to_thread goes to
// its real threads, and the simulation's own executor, which the world
// still steps, is not left dangling (it was the loop's, and went with it).
Coro<std::thread::id> on_a_new_default() {
  corio::get_running_loop().set_default_executor(std::make_unique<corio::ThreadPoolExecutor>(1));
  const std::thread::id ran_on = co_await corio::to_thread(slow_job);
  co_return ran_on;
}

TEST(SimThreads, APoolMadeAHostsDefault) {
  Simulation sim;
  auto& host = sim.host("solo");
  const std::thread::id ran_on = sim.run_until_complete(host, on_a_new_default());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(sim.time(), 0.0);
}

}  // namespace
