// The cancellation sweep over as_completed(): tasks finishing in an order
// the seed decides, the iteration cancelled at each of its awaits, with and
// without a timeout. The tasks are not the iteration's (asyncio does not
// cancel them either): they run on and end with their own results. What the
// iteration hands out is the completion order, and a cancel loses none of
// it: the next items of the same as_completed() hand out the rest.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/as_completed.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::require;

namespace {

constexpr int kTasks = 4;

// Task i sleeps finish[i] x 3 ms: a permutation of 1..kTasks drawn from
// the seed, so each seed has its own completion order.
std::vector<int> finish_times(std::uint64_t seed) {
  std::vector<int> finish(kTasks);
  for (int i = 0; i < kTasks; ++i) finish[static_cast<std::size_t>(i)] = i + 1;
  std::mt19937_64 draw(seed);
  std::shuffle(finish.begin(), finish.end(), draw);
  return finish;
}

Coro<int> finish_after(int id, int units) {
  co_await corio::sleep(3ms * units);
  co_return id;
}

// The operation's iteration, kept outside its frame so that the next
// operation can go on with the items the cancel left.
struct Race {
  std::vector<int> finish;
  std::vector<corio::Task<int>> tasks;
  std::optional<corio::AsCompleted<int>> items;
  std::size_t next = 0;  // the first item not awaited yet
  std::vector<int> got;  // what the items handed out, in order

  // The task ids in the order they finish.
  std::vector<int> completion_order() const {
    std::vector<int> ids(finish.size());
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>(i);
    std::sort(ids.begin(), ids.end(), [&](int a, int b) {
      return finish[static_cast<std::size_t>(a)] < finish[static_cast<std::size_t>(b)];
    });
    return ids;
  }
  // Awaits the items from `next` on. An item is counted as taken before
  // its await: one whose await the cancel cut off is not awaited again.
  Coro<void> take_the_rest() {
    while (next < items->size()) {
      auto item = *(items->begin() + static_cast<std::ptrdiff_t>(next++));
      const int id = co_await item;
      got.push_back(id);
    }
  }
};

std::string describe(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += std::to_string(id);
  return out;
}

Coro<void> iterate(std::shared_ptr<Race> race, std::optional<std::chrono::duration<double>> limit) {
  for (int i = 0; i < kTasks; ++i) {
    race->tasks.push_back(
        corio::create_task(finish_after(i, race->finish[static_cast<std::size_t>(i)])));
  }
  race->items.emplace(corio::as_completed(race->tasks, limit));
  co_await race->take_the_rest();
  require(race->got == race->completion_order(), "the items came out of completion order");
}

// The next operation: the rest of the items hand out the rest of the
// results in completion order, none skipped or doubled. The item whose
// await the cancel cut off takes none (a result it was handed before its
// task ran passes to the next item), so the last result may be left over,
// as in asyncio; and every task ended with its own result.
Coro<void> finish_the_race(std::shared_ptr<Race> race) {
  if (!race->items) co_return;  // cancelled before it made them
  co_await race->take_the_rest();
  const std::vector<int> order = race->completion_order();
  const bool in_order = race->got.size() <= order.size() &&
                        std::equal(race->got.begin(), race->got.end(), order.begin());
  require(in_order && race->got.size() + 1 >= order.size(),
          "a result was lost or doubled: " + describe(race->got) + " of " + describe(order));
  for (int i = 0; i < kTasks; ++i) {
    const int id = co_await race->tasks[static_cast<std::size_t>(i)];
    require(id == i, "task " + std::to_string(i) + " ended with " + std::to_string(id));
  }
  race->items.reset();
}

void sweep_race(std::uint64_t seed, std::optional<std::chrono::duration<double>> limit) {
  expect_clean(corio::testing::cancellation_sweep(
                   [&](Simulation& sim) {
                     auto race = std::make_shared<Race>();
                     race->finish = finish_times(sim.seed());
                     return SweepRun{&sim.host("solo"),
                                     [race, limit] { return iterate(race, limit); },
                                     [race] { return finish_the_race(race); }};
                   },
                   {.seed = seed}, 0.001),
               kTasks);
}

// Three seeds, three completion orders.
TEST(SweepAsCompleted, HandsOutEveryResultOnceInCompletionOrder) {
  for (std::uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    sweep_race(seed, std::nullopt);
  }
}

// The same under a timeout that does not expire: a cancel leaves no timer.
TEST(SweepAsCompleted, UnderATimeoutLeavesNoTimer) {
  for (std::uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    sweep_race(seed, 1s);
  }
}

}  // namespace
