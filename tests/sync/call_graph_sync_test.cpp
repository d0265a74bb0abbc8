// Call graphs of tasks parked on sync primitives: the primitive's kind, its
// address and how many tasks queue on it (virtual time).
#include "sync/sync_support.hpp"
#include <corio/call_graph.hpp>
#include <corio/queue.hpp>

namespace corio_sync_test {
namespace {

Coro<void> take_lock(corio::Lock* lock) {
  co_await lock->acquire();
  lock->release();
}

Coro<void> lock_main(corio::Lock* lock) {
  co_await lock->acquire();
  Task<void> a = corio::create_task(take_lock(lock), "a");
  Task<void> b = corio::create_task(take_lock(lock), "b");
  co_await yield_n(1);
  for (const Task<void>* t : {&a, &b}) {
    corio::FutureCallGraph g = corio::capture_call_graph(*t);
    EXPECT_EQ(g.awaiting.kind, "lock");
    EXPECT_EQ(g.awaiting.address, static_cast<const void*>(lock));
    EXPECT_EQ(g.awaiting.waiters, std::optional<std::size_t>(2));
    EXPECT_EQ(g.call_stack.size(), 1u);
    EXPECT_NE(g.call_stack.at(0).function.find("take_lock"), std::string::npos);
    EXPECT_NE(corio::format_call_graph(g).find("awaiting lock 0x"), std::string::npos);
    EXPECT_NE(corio::format_call_graph(g).find("(2 waiting)"), std::string::npos);
    // Held by the main task, which took it without waiting.
    EXPECT_TRUE(g.awaiting.held_by.has_value() && *g.awaiting.held_by == *corio::current_task());
    EXPECT_NE(corio::format_call_graph(g).find(" held by Task(name='"), std::string::npos);
  }
  lock->release();
  co_await a;
  co_await b;
}

TEST(CallGraphSync, LockWaitersNameTheLockAndTheQueueLength) {
  corio::Lock lock;
  run_vt(lock_main(&lock));
}

Coro<int> get_one(corio::Queue<int>* q) { co_return co_await q->get(); }
Coro<void> wait_event(corio::Event* ev) { co_await ev->wait(); }

Coro<void> queue_event_main() {
  corio::Queue<int> q;
  corio::Event ev;
  Task<int> getter = corio::create_task(get_one(&q));
  Task<void> waiter = corio::create_task(wait_event(&ev));
  co_await yield_n(1);
  corio::FutureCallGraph g = corio::capture_call_graph(getter);
  EXPECT_EQ(g.awaiting.kind, "queue get");
  EXPECT_EQ(g.awaiting.waiters, std::optional<std::size_t>(1));
  corio::FutureCallGraph e = corio::capture_call_graph(waiter);
  EXPECT_EQ(e.awaiting.kind, "event");
  EXPECT_EQ(e.awaiting.address, static_cast<const void*>(&ev));
  q.put_nowait(7);
  ev.set();
  EXPECT_EQ(co_await getter, 7);
  co_await waiter;
}

TEST(CallGraphSync, QueueGetAndEventWait) { run_vt(queue_event_main()); }

}  // namespace
}  // namespace corio_sync_test
