// "No allocation per await" (DESIGN.md, performance stance), measured.
//
// This file replaces the global operator new/delete for the whole test binary
// with malloc/free plus a per-thread counter that only counts while a test has
// opened a window. Each test warms up, opens the window for N rounds of steady
// state, and checks the count. Frames, task states and callback handles come
// from corio's per-thread pool; sanitizer builds turn that pool off
// (CORIO_NO_FRAME_POOL), so the tests that create frames allow for it.
#include <cstdlib>
#include <new>
#include <vector>

#include <gtest/gtest.h>

#include <corio/detail/sanitizers.hpp>

#include "core/test_support.hpp"

// The replacements below pair operator new with malloc and operator delete
// with free, on purpose; g++ sees the inlined pair and warns at -O1 and above.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

// TSan's runtime defines operator new/delete in the same static archive as
// its interceptors: a replacement does not link there. The tests skip.
#if defined(CORIO_TSAN) || defined(CORIO_MSAN)
#define CORIO_TEST_NO_NEW_REPLACEMENT 1
#endif

namespace {
constinit thread_local bool t_counting = false;
constinit thread_local std::size_t t_allocs = 0;
}  // namespace

#ifndef CORIO_TEST_NO_NEW_REPLACEMENT
namespace {
void* counted_malloc(std::size_t n) {
  if (t_counting) ++t_allocs;
  return std::malloc(n ? n : 1);
}
void* counted_aligned(std::size_t n, std::align_val_t al) {
  if (t_counting) ++t_allocs;
  const auto a = static_cast<std::size_t>(al);
  const std::size_t size = (n + a - 1) / a * a;
  return std::aligned_alloc(a, size ? size : a);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new(std::size_t n, std::align_val_t al) {
  if (void* p = counted_aligned(n, al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) {
  if (void* p = counted_aligned(n, al)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio::Future;
using corio::Task;
using corio_test::virtual_time;

namespace {

#ifdef CORIO_NO_FRAME_POOL
constexpr bool kFramePool = false;
#else
constexpr bool kFramePool = true;
#endif

#ifdef CORIO_TEST_NO_NEW_REPLACEMENT
constexpr bool kCounting = false;
#else
constexpr bool kCounting = true;
#endif

class Allocations : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kCounting) GTEST_SKIP() << "operator new cannot be replaced in this build";
  }
};

constexpr int kWarmup = 1000;
constexpr int kRounds = 10'000;

// Counts allocations between round kWarmup and round kWarmup + kRounds.
struct Window {
  std::size_t allocs = 0;
  void at_round(int i) {
    if (i == kWarmup) {
      t_allocs = 0;
      t_counting = true;
    } else if (i == kWarmup + kRounds) {
      t_counting = false;
      allocs = t_allocs;
    }
  }
};

TEST_F(Allocations, TheCounterSeesAllocations) {
  Window w;
  w.at_round(kWarmup);
  auto* p = new int(1);
  std::vector<int> v(100);
  w.at_round(kWarmup + kRounds);
  delete p;
  EXPECT_EQ(w.allocs, 2u);
}

Coro<void> yielder(int rounds, Window* w) {
  for (int i = 0; i <= rounds; ++i) {
    if (w) w->at_round(i);
    co_await corio::sleep(0s);
  }
}

TEST_F(Allocations, NonePerSleepZero) {
  EventLoop loop;
  Window w;
  auto other = loop.create_task(yielder(kWarmup + kRounds, nullptr));
  loop.run_until_complete(yielder(kWarmup + kRounds, &w));
  loop.run_until_complete(other);
  EXPECT_EQ(w.allocs, 0u);
}

Coro<void> timed_sleeper(int rounds, Window* w) {
  for (int i = 0; i <= rounds; ++i) {
    if (w) w->at_round(i);
    co_await corio::sleep(1ms);
  }
}

TEST_F(Allocations, NonePerTimedSleep) {
  EventLoop loop(virtual_time());
  Window w;
  auto other = loop.create_task(timed_sleeper(kWarmup + kRounds, nullptr));
  loop.run_until_complete(timed_sleeper(kWarmup + kRounds, &w));
  loop.run_until_complete(other);
  EXPECT_EQ(w.allocs, 0u);
}

// The futures are created before the window: only awaiting is measured.
Coro<long> consume_futures(std::vector<Future<int>>* futs, Window* w) {
  long sum = 0;
  for (int i = 0; i < static_cast<int>(futs->size()); ++i) {
    w->at_round(i);
    sum += co_await (*futs)[static_cast<std::size_t>(i)];
  }
  w->at_round(static_cast<int>(futs->size()));
  co_return sum;
}
Coro<void> produce_futures(std::vector<Future<int>>* futs) {
  for (auto& f : *futs) {
    co_await corio::sleep(0s);
    f.set_result(1);
  }
}

TEST_F(Allocations, NonePerAwaitOfAPendingFuture) {
  EventLoop loop;
  std::vector<Future<int>> futs;
  for (int i = 0; i < kWarmup + kRounds; ++i) futs.push_back(loop.create_future<int>());
  Window w;
  auto producer = loop.create_task(produce_futures(&futs));
  EXPECT_EQ(loop.run_until_complete(consume_futures(&futs, &w)), kWarmup + kRounds);
  loop.run_until_complete(producer);
  EXPECT_EQ(w.allocs, 0u);
}

Coro<int> child(Future<int> gate) { co_return co_await gate; }

Coro<long> consume_tasks(std::vector<Task<int>>* tasks, Window* w) {
  long sum = 0;
  for (int i = 0; i < static_cast<int>(tasks->size()); ++i) {
    w->at_round(i);
    sum += co_await (*tasks)[static_cast<std::size_t>(i)];
  }
  w->at_round(static_cast<int>(tasks->size()));
  co_return sum;
}

TEST_F(Allocations, NonePerAwaitOfAPendingTask) {
  EventLoop loop;
  const int n = kWarmup + kRounds;
  std::vector<Future<int>> gates;
  std::vector<Task<int>> tasks;
  for (int i = 0; i < n; ++i) {
    gates.push_back(loop.create_future<int>());
    tasks.push_back(loop.create_task(child(gates.back())));
  }
  Window w;
  auto producer = loop.create_task(produce_futures(&gates));
  EXPECT_EQ(loop.run_until_complete(consume_tasks(&tasks, &w)), n);
  loop.run_until_complete(producer);
  EXPECT_EQ(w.allocs, 0u);
}

Coro<int> quick(int v) {
  co_await corio::sleep(0s);
  co_return v;
}

Coro<long> create_and_await(int rounds, Window* w) {
  long sum = 0;
  for (int i = 0; i <= rounds; ++i) {
    w->at_round(i);
    if (i < rounds) sum += co_await corio::create_task(quick(1));
  }
  co_return sum;
}

TEST_F(Allocations, CreateTaskReusesPooledFramesInSteadyState) {
  EventLoop loop;
  Window w;
  EXPECT_EQ(loop.run_until_complete(create_and_await(kWarmup + kRounds, &w)), kWarmup + kRounds);
  if (kFramePool) {
    EXPECT_EQ(w.allocs, 0u);
  } else {
    EXPECT_LE(w.allocs, 2u * kRounds);  // task state + frame, nothing else
  }
}

Coro<void> parked_deep() { co_await corio::sleep(1h); }
Coro<void> parked_chain() { co_await parked_deep(); }

// Each round starts a task that parks two Coros deep, cancels it and awaits
// it; returns how many of them did not end in CancelledError.
Coro<int> cancel_parked_tasks(int rounds, Window* w) {
  int not_cancelled = 0;
  for (int i = 0; i <= rounds; ++i) {
    w->at_round(i);
    if (i == rounds) break;
    auto t = corio::create_task(parked_chain());
    co_await corio::sleep(0s);  // t runs and parks in its sleep
    t.cancel();
    try {
      co_await t;
      ++not_cancelled;
    } catch (const corio::CancelledError&) {
    }
  }
  co_return not_cancelled;
}

// The CancelledError unwinding through a task's Coros records no traceback
// (nothing reports it), so it allocates nothing past the task itself.
TEST_F(Allocations, CancellingAParkedChainRecordsNoTraceback) {
  EventLoop loop(virtual_time());
  Window w;
  EXPECT_EQ(loop.run_until_complete(cancel_parked_tasks(kWarmup + kRounds, &w)), 0);
  if (kFramePool) {
    EXPECT_EQ(w.allocs, 0u);
  } else {
    EXPECT_LE(w.allocs, 3u * kRounds);  // task state and two frames, nothing else
  }
}

struct CallSoonState {
  EventLoop* loop;
  Window* w;
  int i = 0;
};
// Two pointers, trivially copyable: std::function stores it in place.
struct Step {
  CallSoonState* st;
  int* unused = nullptr;
  void operator()() const {
    st->w->at_round(st->i);
    if (st->i++ < kWarmup + kRounds) {
      st->loop->call_soon(*this);
    } else {
      st->loop->stop();
    }
  }
};

TEST_F(Allocations, CallSoonOfASmallCallableReusesPooledHandles) {
  EventLoop loop;
  Window w;
  CallSoonState st{&loop, &w};
  loop.call_soon(Step{&st});
  loop.run_forever();
  if (kFramePool) {
    EXPECT_EQ(w.allocs, 0u);
  } else {
    EXPECT_LE(w.allocs, static_cast<std::size_t>(kRounds));  // the handle only
  }
}

}  // namespace
