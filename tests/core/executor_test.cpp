// ThreadPoolExecutor, loop.run_in_executor and to_thread: results and
// exceptions come back to the loop thread, the loop keeps running meanwhile,
// cancellation of the awaiting task is safe while the thread still runs, and
// close() waits for calls in flight. Real threads; every wait on another
// thread is a gate opened by the test, so nothing depends on timing.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/test_support.hpp"
#include <corio/executor.hpp>
#include <corio/to_thread.hpp>

namespace corio_test {
namespace {

using corio::Coro;
using corio::Task;
using namespace std::chrono_literals;

// A one-shot gate threads wait on; opened from the loop (or the test).
class Gate {
 public:
  // Notifies under the lock: a waiter may destroy the gate as soon as it
  // sees it open.
  void open() {
    std::lock_guard lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// ---- ThreadPoolExecutor on its own ---------------------------------------------

TEST(ThreadPool, RunsPostedJobsInFifoOrderWithOneWorker) {
  std::vector<int> order;
  {
    corio::ThreadPoolExecutor pool(1);
    for (int i = 0; i < 50; ++i) pool.post([&order, i] { order.push_back(i); });
  }  // the destructor runs what is queued, then joins
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(ThreadPool, StartsThreadsOnlyWhenAllAreBusy) {
  corio::ThreadPoolExecutor pool(4);
  EXPECT_EQ(pool.thread_count(), 0u);
  for (int i = 0; i < 5; ++i) {
    std::atomic<bool> done{false};
    Gate finished;
    pool.post([&] {
      done = true;
      finished.open();
    });
    finished.wait();
    EXPECT_TRUE(done);
    // The worker goes back to waiting just after the job: let it get there.
    while (pool.idle_threads() < pool.thread_count()) std::this_thread::yield();
  }
  // Jobs one at a time: the one idle thread is reused every time.
  EXPECT_EQ(pool.thread_count(), 1u);
}

TEST(ThreadPool, NeverExceedsMaxWorkers) {
  corio::ThreadPoolExecutor pool(4);
  Gate gate;
  std::atomic<int> running{0}, peak{0}, finished{0};
  for (int i = 0; i < 40; ++i) {
    pool.post([&] {
      int now = ++running;
      int p = peak.load();
      while (now > p && !peak.compare_exchange_weak(p, now)) {
      }
      gate.wait();
      --running;
      ++finished;
    });
  }
  EXPECT_EQ(pool.thread_count(), 4u);
  gate.open();
  pool.shutdown(true);
  EXPECT_EQ(finished.load(), 40);
  EXPECT_LE(peak.load(), 4);
}

TEST(ThreadPool, SubmitAfterShutdownThrows) {
  corio::ThreadPoolExecutor pool(2);
  pool.shutdown();
  EXPECT_THROW(pool.post([] {}), corio::RuntimeError);
}

TEST(ThreadPool, DefaultSizeFollowsPython) {
  corio::ThreadPoolExecutor pool;
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(pool.max_workers(), std::min<std::size_t>(32, hw + 4));
}

// ---- run_in_executor / to_thread ---------------------------------------------------

int add(int a, int b) { return a + b; }

Coro<void> values_and_void(corio::ThreadPoolExecutor* pool, std::thread::id loop_thread) {
  corio::EventLoop& loop = corio::get_running_loop();
  std::thread::id worker;
  int v = co_await loop.run_in_executor(pool, [&worker] {
    worker = std::this_thread::get_id();
    return 42;
  });
  EXPECT_EQ(v, 42);
  EXPECT_NE(worker, loop_thread);
  EXPECT_EQ(std::this_thread::get_id(), loop_thread) << "resumed off the loop thread";
  bool ran = false;
  co_await loop.run_in_executor(pool, [&ran] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(co_await corio::to_thread(add, 2, 3), 5);
}

TEST(RunInExecutor, ReturnsValuesOnTheLoopThread) {
  corio::ThreadPoolExecutor pool(2);
  corio::run(values_and_void(&pool, std::this_thread::get_id()));
}

Coro<std::string> throws_through() {
  try {
    co_await corio::to_thread([]() -> int { throw corio::ValueError("bad input on a worker"); });
  } catch (const corio::ValueError& e) {
    co_return e.what();
  }
  co_return "no exception";
}

TEST(RunInExecutor, ExceptionsReachTheAwaitingTask) {
  EXPECT_EQ(corio::run(throws_through()), "bad input on a worker");
}

Coro<int> move_only(std::unique_ptr<int> p) {
  std::unique_ptr<int> r = co_await corio::to_thread(
      [](std::unique_ptr<int> in) { return std::make_unique<int>(*in * 2); }, std::move(p));
  co_return *r;
}

TEST(ToThread, MoveOnlyArgumentsAndResults) {
  EXPECT_EQ(corio::run(move_only(std::make_unique<int>(21))), 42);
}

const std::string& config_name() {
  static const std::string name = "corio.toml";
  return name;
}

Coro<std::string> returns_a_reference() { co_return co_await corio::to_thread(config_name); }

TEST(ToThread, AReturnedReferenceIsCopiedOut) {
  EXPECT_EQ(corio::run(returns_a_reference()), "corio.toml");
}

// 100 calls at once on a 4-thread pool. Every call blocks on a gate that only
// a ticker task on the loop opens, after ticking 20 times while all four
// threads are blocked: if the loop were blocked, this would never finish.
Coro<void> hundred_calls(Gate* gate) {
  corio::get_running_loop().set_default_executor(std::make_unique<corio::ThreadPoolExecutor>(4));
  std::atomic<int> started{0};
  std::vector<Task<int>> calls;
  for (int i = 0; i < 100; ++i) {
    calls.push_back(corio::create_task(corio::to_thread(
        [gate, &started](int n) {
          ++started;
          gate->wait();
          return n;
        },
        i)));
  }
  int ticks = 0;
  while (started.load() < 4 || ticks < 20) {
    co_await corio::sleep(1ms);
    ++ticks;
  }
  EXPECT_EQ(started.load(), 4) << "more calls ran than the pool has threads";
  gate->open();
  long sum = 0;
  for (Task<int>& t : calls) sum += co_await t;
  EXPECT_EQ(sum, 99 * 100 / 2);
  EXPECT_EQ(started.load(), 100);
}

TEST(ToThread, HundredConcurrentCallsOnFourThreadsWhileTheLoopTicks) {
  Gate gate;
  corio::run(hundred_calls(&gate));
}

// The awaiting task is cancelled while its function still runs: the task ends
// at once; the late result is dropped; nothing else is disturbed.
Coro<void> cancel_while_running(Gate* gate, std::atomic<bool>* finished) {
  Task<int> t = corio::create_task(corio::to_thread([gate, finished] {
    gate->wait();
    *finished = true;
    return 7;
  }));
  co_await corio::sleep(1ms);
  t.cancel();
  try {
    co_await t;
    ADD_FAILURE() << "expected CancelledError";
  } catch (const corio::CancelledError&) {
  }
  EXPECT_FALSE(finished->load());
  gate->open();
  // A later call on the same pool still works.
  EXPECT_EQ(co_await corio::to_thread([] { return 1; }), 1);
}

TEST(ToThread, CancellingTheAwaitingTaskIsSafe) {
  Gate gate;
  std::atomic<bool> finished{false};
  corio::run(cancel_while_running(&gate, &finished));
  EXPECT_TRUE(finished.load());
}

// main returns while a call is still running: run() cancels the task, and
// close() waits for the thread to finish instead of leaving it a dead loop.
Coro<void> leave_one_running(std::shared_ptr<Gate> gate, std::atomic<bool>* finished) {
  corio::create_task(corio::to_thread([g = gate.get(), finished] {
    g->wait();
    *finished = true;
  }));
  co_await corio::sleep(1ms);
  std::thread([gate] {
    std::this_thread::sleep_for(20ms);
    gate->open();
  }).detach();
}

TEST(ToThread, CloseWaitsForCallsInFlight) {
  auto gate = std::make_shared<Gate>();
  std::atomic<bool> finished{false};
  corio::run(leave_one_running(gate, &finished));
  EXPECT_TRUE(finished.load()) << "the loop closed before its executor call came back";
}

Coro<void> on_user_pool(corio::ThreadPoolExecutor* pool) {
  corio::EventLoop& loop = corio::get_running_loop();
  std::vector<Task<int>> tasks;
  for (int i = 0; i < 10; ++i) {
    tasks.push_back(corio::create_task(
        [](corio::EventLoop* l, corio::ThreadPoolExecutor* p, int n) -> Coro<int> {
          co_return co_await l->run_in_executor(p, [n] { return n * n; });
        }(&loop, pool, i)));
  }
  int sum = 0;
  for (Task<int>& t : tasks) sum += co_await t;
  EXPECT_EQ(sum, 285);
}

TEST(RunInExecutor, UserPoolOutlivesSeveralLoops) {
  corio::ThreadPoolExecutor pool(3);
  corio::run(on_user_pool(&pool));
  corio::run(on_user_pool(&pool));
  EXPECT_LE(pool.thread_count(), 3u);
}

TEST(RunInExecutor, ClosedLoopRefusesCalls) {
  corio::EventLoop loop;
  loop.close();
  EXPECT_THROW(loop.run_in_executor(nullptr, [] { return 1; }), corio::RuntimeError);
}

}  // namespace
}  // namespace corio_test
