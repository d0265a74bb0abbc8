// The cancellation sweep over the sync primitives, queues and combinators:
// each operation cancelled at every suspension point, on one host; after
// each, the primitive still works and what it handed over (a notification,
// a permit, an item, a barrier's round) is neither lost nor doubled.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/barrier.hpp>
#include <corio/condition.hpp>
#include <corio/event.hpp>
#include <corio/gather.hpp>
#include <corio/queue.hpp>
#include <corio/semaphore.hpp>
#include <corio/shield.hpp>
#include <corio/sleep.hpp>
#include <corio/task_group.hpp>
#include <corio/timeout.hpp>
#include <corio/to_thread.hpp>
#include <corio/wait.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::testing::Simulation;
using corio::testing::SweepReport;
using corio::testing::SweepRun;
using sim_support::expect_clean;

namespace {

// A sweep on one host, its helpers started by `make` before the operation.
SweepReport solo(const std::function<SweepRun(Simulation::Host&)>& make) {
  return corio::testing::cancellation_sweep([&](Simulation& sim) { return make(sim.host("solo")); },
                                            {}, 0.001);
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// ---- Event, Condition, Semaphore, Barrier ------------------------------------------------

TEST(SweepSync, EventWait) {
  expect_clean(solo([](Simulation::Host& host) {
    auto ev = std::make_shared<corio::Event>();
    host.spawn([](std::shared_ptr<corio::Event> e) -> Coro<void> {
      co_await corio::sleep(10ms);
      e->set();
    }(ev));
    return SweepRun{&host, [ev]() -> Coro<void> { co_await ev->wait(); },
                    [ev]() -> Coro<void> {
                      co_await ev->wait();  // set: at once
                      require(ev->is_set(), "the event was cleared");
                    }};
  }), 1);
}

// A waiter notified and then cancelled before it ran hands the notification
// on: the other waiter gets it (asyncio's gh-112202). None is lost.
struct Notified {
  corio::Condition cond;
  bool ready = false, op_done = false;
  int woken = 0;
};

Coro<void> cond_wait(std::shared_ptr<Notified> n) {
  corio::Condition::Guard held = co_await n->cond.scoped_lock();
  co_await n->cond.wait_for([&] { return n->ready; });
  ++n->woken;
}

TEST(SweepSync, ConditionWaitPassesANotificationOn) {
  expect_clean(solo([](Simulation::Host& host) {
    auto n = std::make_shared<Notified>();
    host.spawn([](std::shared_ptr<Notified> n) -> Coro<void> {
      co_await corio::sleep(2ms);  // after the operation: the second in line
      co_await cond_wait(n);
    }(n));
    host.spawn([](std::shared_ptr<Notified> n) -> Coro<void> {
      co_await corio::sleep(10ms);
      corio::Condition::Guard held = co_await n->cond.scoped_lock();
      n->ready = true;
      n->cond.notify(1);
    }(n));
    auto op = [n]() -> Coro<void> {
      co_await cond_wait(n);
      n->op_done = true;
    };
    auto after = [n]() -> Coro<void> {
      co_await corio::sleep(10ms);  // past the notify(1)
      // It woke one waiter: the operation, or, if the cancel came first or
      // between the wake-up and the operation's turn, the other one.
      require(n->woken == 1, std::to_string(n->woken) + " woken by one notify(1)");
      if (n->op_done) {
        corio::Condition::Guard held = co_await n->cond.scoped_lock();
        n->cond.notify_all();  // the other waiter's turn
      }
      co_await corio::sleep(1ms);
      require(n->woken == (n->op_done ? 2 : 1) && !n->cond.locked(), "a waiter is stuck");
    };
    return SweepRun{&host, op, after};
  }), 1);
}

TEST(SweepSync, SemaphoreAcquireKeepsItsCount) {
  expect_clean(solo([](Simulation::Host& host) {
    auto sem = std::make_shared<corio::Semaphore>(1);
    host.spawn([](std::shared_ptr<corio::Semaphore> s) -> Coro<void> {
      auto held = co_await s->scoped_acquire();
      co_await corio::sleep(10ms);
    }(sem));
    auto op = [sem]() -> Coro<void> {
      auto held = co_await sem->scoped_acquire();
      co_await corio::sleep(5ms);
    };
    auto after = [sem]() -> Coro<void> {
      co_await sem->acquire();  // the one permit, back
      require(sem->locked(), "a permit too many after the cancel");
      sem->release();
    };
    return SweepRun{&host, op, after};
  }), 2);
}

// A party cancelled while the round fills leaves it; the round completes
// with the next arrival, and the barrier is not broken.
TEST(SweepSync, BarrierWait) {
  expect_clean(solo([](Simulation::Host& host) {
    auto barrier = std::make_shared<corio::Barrier>(2);
    auto partner = std::make_shared<corio::Task<std::size_t>>(
        host.spawn([](std::shared_ptr<corio::Barrier> b) -> Coro<std::size_t> {
          co_await corio::sleep(10ms);
          co_return co_await b->wait();
        }(barrier)));
    auto op = [barrier]() -> Coro<void> { (void)co_await barrier->wait(); };
    auto after = [barrier, partner]() -> Coro<void> {
      if (!partner->done()) (void)co_await barrier->wait();  // the round the cancel left open
      (void)co_await *partner;
      auto [a, b] = co_await corio::gather(barrier->wait(), barrier->wait());  // a round of its own
      require(a + b == 1 && !barrier->broken(), "the next round went wrong");
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// ---- queues ------------------------------------------------------------------------------------

// A put() waiting for room, cancelled: its item is in the queue once, or
// not at all, and the room the consumer made is not lost.
TEST(SweepSync, QueuePutUnderBackPressure) {
  expect_clean(solo([](Simulation::Host& host) {
    auto q = std::make_shared<corio::Queue<int>>(1);
    q->put_nowait(1);
    auto consumer = std::make_shared<corio::Task<int>>(
        host.spawn([](std::shared_ptr<corio::Queue<int>> q) -> Coro<int> {
          co_await corio::sleep(10ms);
          co_return co_await q->get();
        }(q)));
    auto op = [q]() -> Coro<void> { co_await q->put(2); };
    auto after = [q, consumer]() -> Coro<void> {
      require(co_await *consumer == 1, "the consumer did not get the first item");
      std::vector<int> items;
      while (!q->empty()) items.push_back(q->get_nowait());
      require(items.empty() || items == std::vector<int>{2}, "the put's item doubled or reordered");
      q->put_nowait(3);  // the room is there, once
      require(q->full(), "room for more than maxsize");
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// join() cancelled while the worker is busy; the next join() returns once
// every item is done, and none was done twice.
TEST(SweepSync, QueueJoin) {
  expect_clean(solo([](Simulation::Host& host) {
    auto q = std::make_shared<corio::Queue<int>>();
    auto done = std::make_shared<int>(0);
    for (int i = 0; i < 3; ++i) q->put_nowait(i);
    host.spawn([](std::shared_ptr<corio::Queue<int>> q, std::shared_ptr<int> done) -> Coro<void> {
      for (int i = 0; i < 3; ++i) {
        (void)co_await q->get();
        co_await corio::sleep(5ms);
        ++*done;
        q->task_done();
      }
    }(q, done));
    auto after = [q, done]() -> Coro<void> {
      co_await q->join();
      require(*done == 3 && q->empty(), "join returned before the work was done");
    };
    return SweepRun{&host, [q]() -> Coro<void> { co_await q->join(); }, after};
  }), 1);
}

// ---- combinators -------------------------------------------------------------------------------

// Children that count themselves in and out: a cancel that forgets one
// leaves the count above zero.
Coro<void> counted(std::shared_ptr<int> live, std::chrono::milliseconds d) {
  ++*live;
  struct Out {
    int& n;
    ~Out() { --n; }
  } out{*live};
  co_await corio::sleep(d);
  co_await corio::sleep(d);
}

SweepRun combinator(Simulation::Host& host, std::function<Coro<void>(std::shared_ptr<int>)> body) {
  auto live = std::make_shared<int>(0);
  auto after = [live]() -> Coro<void> {
    co_await corio::sleep(10ms);  // children cancelled by the operation's cancel finish unwinding
    require(*live == 0, std::to_string(*live) + " children still running");
    co_await counted(live, 1ms);  // the loop still runs children
  };
  return SweepRun{&host, [live, body] { return body(live); }, after};
}

TEST(SweepSync, TaskGroupCancelsItsChildren) {
  expect_clean(solo([](Simulation::Host& host) {
    return combinator(host, [](std::shared_ptr<int> live) -> Coro<void> {
      co_await corio::task_group([&](corio::TaskGroup& tg) -> Coro<void> {
        tg.create_task(counted(live, 3ms));
        tg.create_task(counted(live, 5ms));
        co_await corio::sleep(2ms);
      });
    });
  }), 2);
}

TEST(SweepSync, GatherCancelsItsChildren) {
  expect_clean(solo([](Simulation::Host& host) {
    return combinator(host, [](std::shared_ptr<int> live) -> Coro<void> {
      (void)co_await corio::gather(counted(live, 3ms), counted(live, 5ms));
    });
  }), 1);
}

// wait() cancelled: the tasks it waited for run on (it never cancels them)
// and finish with their own results.
TEST(SweepSync, WaitLeavesItsTasksRunning) {
  expect_clean(solo([](Simulation::Host& host) {
    auto tasks = std::make_shared<std::vector<corio::Task<void>>>();
    auto live = std::make_shared<int>(0);
    auto op = [tasks, live]() -> Coro<void> {
      tasks->push_back(corio::create_task(counted(live, 3ms)));
      tasks->push_back(corio::create_task(counted(live, 5ms)));
      (void)co_await corio::wait(*tasks, corio::ReturnWhen::first_completed);
    };
    auto after = [tasks]() -> Coro<void> {
      for (corio::Task<void>& t : *tasks) co_await t;  // CancelledError if wait() cancelled it
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// An outer cancel inside wait_for() or timeout() is a CancelledError, never
// a TimeoutError (the sweep fails the operation on any other error), and
// leaves no timer behind.
TEST(SweepSync, WaitForAndTimeoutStayCancellations) {
  expect_clean(solo([](Simulation::Host& host) {
    return combinator(host, [](std::shared_ptr<int> live) -> Coro<void> {
      co_await corio::wait_for(counted(live, 3ms), 1s);
      co_await corio::timeout(1s, [&](corio::Timeout&) -> Coro<void> {
        co_await counted(live, 3ms);
      });
    });
  }), 4);
}

// to_thread() on a simulated host (its jobs run on the simulation's thread,
// in the host's turn): cancelled, the job runs at most once, and the next
// to_thread() gets its own result.
TEST(SweepSync, ToThread) {
  expect_clean(solo([](Simulation::Host& host) {
    auto runs = std::make_shared<int>(0);
    // The jobs are named before their co_await: g++ 12 destroys a closure
    // made inside one twice (valgrind saw `runs` released twice).
    auto op = [runs]() -> Coro<void> {
      auto job = [runs] { return ++*runs; };
      const int n = co_await corio::to_thread(job);
      require(n == 1, "the job ran twice");
    };
    auto after = [runs]() -> Coro<void> {
      const int before = *runs;
      require(before <= 1, "the job ran " + std::to_string(before) + " times");
      auto job = [] { return 42; };
      const int answer = co_await corio::to_thread(job);
      require(answer == 42, "the next job's result is wrong");
    };
    return SweepRun{&host, op, after};
  }), 1);
}

// shield(): the awaiting task is cancelled, the shielded work runs on to
// its end, exactly once.
TEST(SweepSync, ShieldLetsTheInnerWorkFinish) {
  expect_clean(solo([](Simulation::Host& host) {
    auto finished = std::make_shared<int>(0);
    auto op = [finished]() -> Coro<void> {
      co_await corio::shield([](std::shared_ptr<int> f) -> Coro<void> {
        co_await corio::sleep(5ms);
        co_await corio::sleep(5ms);
        ++*f;
      }(finished));
    };
    auto after = [finished]() -> Coro<void> {
      co_await corio::sleep(20ms);
      require(*finished == 1, "the shielded work ran " + std::to_string(*finished) + " times");
    };
    return SweepRun{&host, op, after};
  }), 1);
}

}  // namespace
